// Dot products of one query with every row of a matrix, as one onnxruntime MatMulInteger over
// int8 codes: the dense path's search over a whole repository (tens of thousands of item vectors)
// in a few milliseconds, where a JavaScript loop takes 10-15 ms on 2 cores (scripts/benchDense.ts).
// The caller multiplies the integer sums by the rows' and the query's scales (retrieve/dense/int8Rows).
// The graph is tiny and written here as ONNX protobuf bytes, so nothing ships in models/.
import { loadOrt, NO_SPINNING, oneSessionPerTurn, type OrtModule, type OrtSession } from './onnxSession';

/** Integer dot products of the rows of a row-major [rows, dim] int8 matrix with an int8 query of length dim. */
export interface RowScorer {
  scores(matrix: Int8Array, rows: number, query: Int8Array): Promise<Int32Array>;
}

// Protobuf wire format, only what the graph needs: varints and length-delimited fields.
function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 127) {
    out.push((n & 127) | 128);
    n >>>= 7;
  }
  out.push(n);
  return out;
}
const intField = (field: number, value: number): number[] => [...varint(field << 3), ...varint(value)];
const bytesField = (field: number, bytes: number[]): number[] => [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
const stringField = (field: number, s: string): number[] => bytesField(field, [...Buffer.from(s, 'utf8')]);

const INT8 = 3;
const INT32 = 6;

/** ValueInfoProto of a tensor of element type `elem` with symbolic (string) or fixed (number) dimensions. */
function tensorInfo(name: string, elem: number, dims: Array<string | number>): number[] {
  const shape = dims.flatMap((d) => bytesField(1, typeof d === 'string' ? stringField(2, d) : intField(1, d)));
  // TypeProto.tensor_type { elem_type, shape }
  const type = bytesField(1, [...intField(1, elem), ...bytesField(2, shape)]);
  return [...stringField(1, name), ...bytesField(2, type)];
}

/** ModelProto: scores[n, 1] = MatMulInteger(matrix[n, d], query[d, 1]), int8 in, int32 out; IR version 7, opset 13. */
function matVecModel(): Uint8Array {
  const node = [...stringField(1, 'matrix'), ...stringField(1, 'query'), ...stringField(2, 'scores'), ...stringField(4, 'MatMulInteger')];
  const graph = [
    ...bytesField(1, node),
    ...stringField(2, 'matvec'),
    ...bytesField(11, tensorInfo('matrix', INT8, ['n', 'd'])),
    ...bytesField(11, tensorInfo('query', INT8, ['d', 1])),
    ...bytesField(12, tensorInfo('scores', INT32, ['n', 1])),
  ];
  const opset = [...stringField(1, ''), ...intField(2, 13)];
  return Uint8Array.from([...intField(1, 7), ...bytesField(7, graph), ...bytesField(8, opset)]);
}

class OnnxRowScorer implements RowScorer {
  constructor(
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
  ) {}

  async scores(matrix: Int8Array, rows: number, query: Int8Array): Promise<Int32Array> {
    const dim = query.length;
    if (rows === 0) return new Int32Array(0);
    if (matrix.length < rows * dim) throw new Error(`matrix holds ${matrix.length} values, fewer than ${rows} x ${dim}`);
    const out = await this.session.run({
      matrix: new this.ort.Tensor('int8', matrix.subarray(0, rows * dim), [rows, dim]),
      query: new this.ort.Tensor('int8', query, [dim, 1]),
    });
    return out.scores!.data as Int32Array;
  }
}

/** The ONNX row scorer; rejects when onnxruntime-node cannot load or run the graph. */
export async function onnxRowScorer(): Promise<RowScorer> {
  const ort = await loadOrt();
  const session = await oneSessionPerTurn(() =>
    ort.InferenceSession.create(matVecModel(), {
      graphOptimizationLevel: 'all',
      extra: NO_SPINNING,
    }),
  );
  return new OnnxRowScorer(ort, session);
}

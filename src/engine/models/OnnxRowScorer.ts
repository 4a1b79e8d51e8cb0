// Dot products of one query vector with every row of a matrix, as one onnxruntime MatMul: the
// dense path's search over a whole repository (tens of thousands of item vectors) in a few
// milliseconds, where a JavaScript loop takes 10-15 ms on 2 cores (scripts/benchDense.ts).
// The graph is tiny and written here as ONNX protobuf bytes, so nothing ships in models/.
import { loadOrt, NO_SPINNING, type OrtModule, type OrtSession } from './onnxSession';

/** Scores rows of a row-major [rows, dim] matrix against a query of length dim. */
export interface RowScorer {
  scores(matrix: Float32Array, rows: number, query: Float32Array): Promise<Float32Array>;
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

/** ValueInfoProto of a float tensor with symbolic (string) or fixed (number) dimensions. */
function floatTensor(name: string, dims: Array<string | number>): number[] {
  const shape = dims.flatMap((d) => bytesField(1, typeof d === 'string' ? stringField(2, d) : intField(1, d)));
  // TypeProto.tensor_type { elem_type: FLOAT (1), shape }
  const type = bytesField(1, [...intField(1, 1), ...bytesField(2, shape)]);
  return [...stringField(1, name), ...bytesField(2, type)];
}

/** ModelProto: scores[n, 1] = MatMul(matrix[n, d], query[d, 1]); IR version 7, opset 13. */
export function matVecModel(): Uint8Array {
  const node = [...stringField(1, 'matrix'), ...stringField(1, 'query'), ...stringField(2, 'scores'), ...stringField(4, 'MatMul')];
  const graph = [
    ...bytesField(1, node),
    ...stringField(2, 'matvec'),
    ...bytesField(11, floatTensor('matrix', ['n', 'd'])),
    ...bytesField(11, floatTensor('query', ['d', 1])),
    ...bytesField(12, floatTensor('scores', ['n', 1])),
  ];
  const opset = [...stringField(1, ''), ...intField(2, 13)];
  return Uint8Array.from([...intField(1, 7), ...bytesField(7, graph), ...bytesField(8, opset)]);
}

class OnnxRowScorer implements RowScorer {
  constructor(
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
  ) {}

  async scores(matrix: Float32Array, rows: number, query: Float32Array): Promise<Float32Array> {
    const dim = query.length;
    if (rows === 0) return new Float32Array(0);
    if (matrix.length < rows * dim) throw new Error(`matrix holds ${matrix.length} values, fewer than ${rows} x ${dim}`);
    const out = await this.session.run({
      matrix: new this.ort.Tensor('float32', matrix.subarray(0, rows * dim), [rows, dim]),
      query: new this.ort.Tensor('float32', query, [dim, 1]),
    });
    return out.scores!.data as Float32Array;
  }
}

/** The ONNX row scorer; rejects when onnxruntime-node cannot load or run the graph. */
export async function onnxRowScorer(): Promise<RowScorer> {
  const ort = await loadOrt();
  const session = await ort.InferenceSession.create(matVecModel(), {
    graphOptimizationLevel: 'all',
    extra: NO_SPINNING,
  });
  return new OnnxRowScorer(ort, session);
}

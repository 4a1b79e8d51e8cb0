// Writes a tiny stand-in model folder in the distilled reranker's layout, for plumbing tests only:
// a byte-level tokenizer (ids = byte values, no merges) and a hand-encoded ONNX graph whose score
// is the masked sum of the token ids. It checks loading, batching, padding and ranking — it is
// not the trained distilled reranker.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// ---- minimal protobuf encoding (just what an ONNX ModelProto needs) ----
function varint(n: number | bigint): number[] {
  let v = BigInt(n);
  if (v < 0n) v += 1n << 64n;
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}
const key = (field: number, wire: number): number[] => varint((field << 3) | wire);
const int = (field: number, n: number): number[] => [...key(field, 0), ...varint(n)];
const bytes = (field: number, data: number[]): number[] => [...key(field, 2), ...varint(data.length), ...data];
const str = (field: number, s: string): number[] => bytes(field, [...Buffer.from(s, 'utf8')]);

const FLOAT = 1;
const INT64 = 7;
function valueInfo(name: string, elemType: number, dims: Array<string | number>): number[] {
  const shape = dims.flatMap((d) => bytes(1, typeof d === 'number' ? int(1, d) : str(2, d)));
  const tensorType = [...int(1, elemType), ...bytes(2, shape)];
  return [...str(1, name), ...bytes(2, bytes(1, tensorType))];
}
function node(op: string, inputs: string[], outputs: string[], attrs: number[][] = []): number[] {
  return [
    ...inputs.flatMap((i) => str(1, i)),
    ...outputs.flatMap((o) => str(2, o)),
    ...str(3, `${op}_${outputs[0]}`),
    ...str(4, op),
    ...attrs.flatMap((a) => bytes(5, a)),
  ];
}
const intAttr = (name: string, v: number): number[] => [...str(1, name), ...int(3, v), ...int(20, 2)];
const intsAttr = (name: string, vs: number[]): number[] => [...str(1, name), ...vs.flatMap((v) => int(8, v)), ...int(20, 7)];

/** scores[b] = sum_t input_ids[b,t] * attention_mask[b,t] (opset 11). */
export function sumOfIdsModel(): Uint8Array {
  const graph = [
    ...bytes(1, node('Cast', ['input_ids'], ['ids_f'], [intAttr('to', FLOAT)])),
    ...bytes(1, node('Cast', ['attention_mask'], ['mask_f'], [intAttr('to', FLOAT)])),
    ...bytes(1, node('Mul', ['ids_f', 'mask_f'], ['masked'])),
    ...bytes(1, node('ReduceSum', ['masked'], ['scores'], [intsAttr('axes', [1]), intAttr('keepdims', 0)])),
    ...str(2, 'tiny_pair_scorer'),
    ...bytes(11, valueInfo('input_ids', INT64, ['batch', 'seq'])),
    ...bytes(11, valueInfo('attention_mask', INT64, ['batch', 'seq'])),
    ...bytes(12, valueInfo('scores', FLOAT, ['batch'])),
  ];
  return Uint8Array.from([...int(1, 6), ...str(2, 'coderag-test'), ...bytes(7, graph), ...bytes(8, [...str(1, ''), ...int(2, 11)])]);
}

/** GPT-2's byte-to-unicode table: the byte-level BPE alphabet. */
function bytesToUnicode(): string[] {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const table: string[] = [];
  let extra = 0;
  for (let b = 0; b < 256; b++) table[b] = String.fromCharCode(keep.includes(b) ? b : 256 + extra++);
  return table;
}

export function writeTinyPairModel(dir: string, config: Record<string, unknown> = {}): void {
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((ch, b) => (vocab[ch] = b));
  vocab['<|endoftext|>'] = 256;
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [
      { id: 256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'GPT2Tokenizer',
      eos_token: '<|endoftext|>',
      bos_token: '<|endoftext|>',
      unk_token: '<|endoftext|>',
      pad_token: '<|endoftext|>',
    }),
  );
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify({
      model_type: 'coderag-pair-reranker',
      max_query_tokens: 16,
      max_candidate_tokens: 8,
      sep_token: '<|endoftext|>',
      ...config,
    }),
  );
  writeFileSync(join(dir, 'onnx', 'model.onnx'), sumOfIdsModel());
}

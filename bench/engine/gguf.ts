// A GGUF v3 writer (llama.cpp's model file): metadata, tensor infos, then the tensors' data
// aligned to 32 bytes, written tensor by tensor (a 1.6 GB file never sits in memory whole).
// Hand-written: the npm GGUF packages read files (node-llama-cpp's own reader included); none writes one.
import { open } from 'node:fs/promises';

export const GGML_F32 = 0;
export const GGML_F16 = 1;
export const GGML_Q8_0 = 8;
export type GgmlType = typeof GGML_F32 | typeof GGML_F16 | typeof GGML_Q8_0;

const ALIGN = 32;
const Q8_BLOCK = 32;
const Q8_BLOCK_BYTES = 34;

/** A metadata value: the GGUF type is explicit where JavaScript's number is ambiguous. */
export type GgufValue =
  | { u32: number }
  | { i32: number }
  | { f32: number }
  | { bool: boolean }
  | { str: string }
  | { strs: string[] }
  | { i32s: ArrayLike<number> }
  | { f32s: ArrayLike<number> };

export type TensorChunk = Float32Array | { bytes: Uint8Array };

export interface GgufTensor {
  name: string;
  /** ggml order: ne[0] is the fastest-varying (a torch [out, in] weight is [in, out] here). */
  dims: number[];
  type: GgmlType;
  /** The values row after row (whole rows of dims[0] values each) as float32 chunks, or bytes already in the tensor's type. */
  data: () => AsyncIterable<TensorChunk> | Iterable<TensorChunk>;
}

class Bytes {
  private parts: Buffer[] = [];
  length = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
  concat(): Buffer {
    return Buffer.concat(this.parts);
  }
}

const T_U32 = 4;
const T_I32 = 5;
const T_F32 = 6;
const T_BOOL = 7;
const T_STR = 8;
const T_ARR = 9;

function writeValue(out: Bytes, v: GgufValue): void {
  if ('u32' in v) (out.u32(T_U32), out.u32(v.u32));
  else if ('i32' in v) (out.u32(T_I32), out.i32(v.i32));
  else if ('f32' in v) (out.u32(T_F32), out.f32(v.f32));
  else if ('bool' in v) (out.u32(T_BOOL), out.push(Buffer.from([v.bool ? 1 : 0])));
  else if ('str' in v) (out.u32(T_STR), out.str(v.str));
  else if ('strs' in v) {
    out.u32(T_ARR);
    out.u32(T_STR);
    out.u64(v.strs.length);
    for (const s of v.strs) out.str(s);
  } else {
    const ints = 'i32s' in v;
    const list = ints ? v.i32s : v.f32s;
    out.u32(T_ARR);
    out.u32(ints ? T_I32 : T_F32);
    out.u64(list.length);
    const b = Buffer.alloc(4 * list.length);
    for (let i = 0; i < list.length; i++) {
      if (ints) b.writeInt32LE(list[i]!, 4 * i);
      else b.writeFloatLE(list[i]!, 4 * i);
    }
    out.push(b);
  }
}

export function tensorBytes(dims: number[], type: GgmlType): number {
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === GGML_F32) return 4 * n;
  if (type === GGML_F16) return 2 * n;
  if (dims[0]! % Q8_BLOCK !== 0) throw new Error(`Q8_0 needs rows of a multiple of 32 values, got ${dims[0]}`);
  return (n / Q8_BLOCK) * Q8_BLOCK_BYTES;
}

const pad = (n: number): number => (ALIGN - (n % ALIGN)) % ALIGN;

/** float32 -> IEEE half (round to nearest even), as the bits of a uint16. */
export function toHalf(value: number): number {
  const f = new Float32Array([value]);
  const x = new Uint32Array(f.buffer)[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

/** ggml's Q8_0 of whole blocks: per 32 values one half-precision scale max|x|/127 and 32 rounded int8. */
export function quantizeQ8(values: Float32Array): Uint8Array {
  const blocks = values.length / Q8_BLOCK;
  const out = new Uint8Array(blocks * Q8_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < Q8_BLOCK; i++) amax = Math.max(amax, Math.abs(values[b * Q8_BLOCK + i]!));
    const d = amax / 127;
    const inv = d ? 1 / d : 0;
    view.setUint16(b * Q8_BLOCK_BYTES, toHalf(d), true);
    for (let i = 0; i < Q8_BLOCK; i++) view.setInt8(b * Q8_BLOCK_BYTES + 2 + i, Math.round(values[b * Q8_BLOCK + i]! * inv));
  }
  return out;
}

function encode(chunk: Float32Array, type: GgmlType): Uint8Array {
  if (type === GGML_F32) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (type === GGML_F16) {
    const h = new Uint16Array(chunk.length);
    for (let i = 0; i < chunk.length; i++) h[i] = toHalf(chunk[i]!);
    return new Uint8Array(h.buffer);
  }
  return quantizeQ8(chunk);
}

/** Writes `path`: the header, then each tensor's data as its `data()` yields it; returns the file's size. */
export async function writeGguf(path: string, metadata: Record<string, GgufValue>, tensors: GgufTensor[]): Promise<number> {
  const head = new Bytes();
  head.push(Buffer.from('GGUF', 'latin1'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(Object.keys(metadata).length);
  for (const [key, value] of Object.entries(metadata)) {
    head.str(key);
    writeValue(head, value);
  }
  let offset = 0;
  for (const t of tensors) {
    head.str(t.name);
    head.u32(t.dims.length);
    for (const d of t.dims) head.u64(d);
    head.u32(t.type);
    head.u64(offset);
    const size = tensorBytes(t.dims, t.type);
    offset += size + pad(size);
  }
  const file = await open(path, 'w');
  try {
    const header = head.concat();
    await file.write(header);
    await file.write(Buffer.alloc(pad(header.length)));
    let written = header.length + pad(header.length);
    for (const t of tensors) {
      const want = tensorBytes(t.dims, t.type);
      let got = 0;
      for await (const chunk of t.data()) {
        const bytes = chunk instanceof Float32Array ? encode(chunk, t.type) : chunk.bytes;
        await file.write(bytes);
        got += bytes.length;
      }
      if (got !== want) throw new Error(`tensor ${t.name}: wrote ${got} bytes, its shape needs ${want}`);
      await file.write(Buffer.alloc(pad(want)));
      written += want + pad(want);
    }
    return written;
  } finally {
    await file.close();
  }
}

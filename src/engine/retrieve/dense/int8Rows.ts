// Item vectors as int8 codes with one scale per row: a quarter of float32's memory (the JDK's
// java.base: 55 -> 14 MB for 71,000 items of 192 dimensions) with the same ranking within the
// checks of docs/BENCHMARKS.md "Large repositories". Rows are unit vectors; a row's scale is its largest
// magnitude / 127, so code * scale gives the component back within half a step. A dot product is
// the integer sum of code products times both scales: exact in float64 and in ONNX's int32
// MatMulInteger, so the JavaScript loop and the ONNX scorer give the same scores.
import type { TopK } from '../topK';

/** int8 codes of a row, written into `codes` at `offset`; returns the row's scale (0 for a zero row). */
export function quantizeInto(v: ArrayLike<number>, codes: Int8Array, offset: number): number {
  let max = 0;
  for (let d = 0; d < v.length; d++) max = Math.max(max, Math.abs(v[d]!));
  if (max === 0) {
    codes.fill(0, offset, offset + v.length);
    return 0;
  }
  const inv = 127 / max;
  for (let d = 0; d < v.length; d++) codes[offset + d] = Math.round(v[d]! * inv);
  return max / 127;
}

/** A query vector as codes and scale. */
export function quantize(v: ArrayLike<number>): { codes: Int8Array; scale: number } {
  const codes = new Int8Array(v.length);
  return { codes, scale: quantizeInto(v, codes, 0) };
}

/** Rows [0, rows) of `codes` back as float32 (what a float consumer or an old file reader gets). */
export function dequantize(codes: Int8Array, scales: Float32Array, dim: number): Float32Array {
  const out = new Float32Array(scales.length * dim);
  for (let r = 0; r < scales.length; r++) {
    const s = scales[r]!;
    const base = r * dim;
    for (let d = 0; d < dim; d++) out[base + d] = codes[base + d]! * s;
  }
  return out;
}

/**
 * Offers rows [from, to) to `top` by their dot product with the query's codes (times both scales).
 * Four running sums let the loop pipeline.
 */
export function scanInt8Rows<T>(
  codes: Int8Array,
  scales: Float32Array,
  items: readonly T[],
  query: Int8Array,
  queryScale: number,
  from: number,
  to: number,
  top: TopK<T>,
): void {
  const dim = query.length;
  const tail = dim - (dim % 4);
  for (let i = from; i < to; i++) {
    const base = i * dim;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let d = 0; d < tail; d += 4) {
      a0 += codes[base + d]! * query[d]!;
      a1 += codes[base + d + 1]! * query[d + 1]!;
      a2 += codes[base + d + 2]! * query[d + 2]!;
      a3 += codes[base + d + 3]! * query[d + 3]!;
    }
    for (let d = tail; d < dim; d++) a0 += codes[base + d]! * query[d]!;
    const dot = (a0 + a1 + a2 + a3) * scales[i]! * queryScale;
    if (dot > top.threshold) top.offer(items[i]!, dot);
  }
}

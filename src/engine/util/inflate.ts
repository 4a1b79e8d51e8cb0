// A raw DEFLATE (RFC 1951) decoder that writes into the caller's buffer. zlib's inflateRawSync
// allocates a fresh native output buffer per call: reading the knowledge base's packed texts
// (kb/packedText.ts) that way either left the allocator's heap about 30 MB larger (16 KB chunks
// freed only at a later collection) or, with chunks large enough to be mapped, made a pass over
// java.base's 71,045 items five times slower (collections driven by the external memory). This one
// allocates nothing per call but its Huffman tables.

const LENGTH_BASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LENGTH_EXTRA = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DIST_BASE = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577];
const DIST_EXTRA = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
/** The order in which a dynamic block sends its code-length code lengths. */
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

/** Codes up to this many bits decode by one table lookup; longer (rare) ones bit by bit. */
const FAST_BITS = 10;
const FAST_MASK = (1 << FAST_BITS) - 1;

/**
 * A canonical Huffman code: `fast`, indexed by the next FAST_BITS input bits (LSB first), holds
 * symbol << 4 | code length, -2 for a longer code, -1 for none; `counts` and `symbols` decode the
 * longer ones (codes per length, symbols in code order).
 */
interface Huffman {
  fast: Int32Array;
  counts: Uint16Array;
  symbols: Uint16Array;
}

export class InflateError extends Error {}

/** The low `n` bits of `code` in reverse order (codes are sent most significant bit first). */
function reverseBits(code: number, n: number): number {
  let reversed = 0;
  for (let b = 0; b < n; b++) reversed |= ((code >>> b) & 1) << (n - 1 - b);
  return reversed;
}

function huffman(lengths: ArrayLike<number>, count: number): Huffman {
  const counts = new Uint16Array(16);
  for (let s = 0; s < count; s++) counts[lengths[s]!]!++;
  counts[0] = 0;
  const offsets = new Uint16Array(16);
  for (let len = 1; len < 15; len++) offsets[len + 1] = offsets[len]! + counts[len]!;
  const symbols = new Uint16Array(count);
  for (let s = 0; s < count; s++) if (lengths[s]) symbols[offsets[lengths[s]!]!++] = s;
  const fast = new Int32Array(1 << FAST_BITS).fill(-1);
  let code = 0;
  let index = 0;
  for (let len = 1; len <= 15; len++) {
    for (let k = 0; k < counts[len]!; k++, code++, index++) {
      if (len > FAST_BITS) {
        // Every longer code starting with these FAST_BITS bits goes the slow way.
        fast[reverseBits(code >>> (len - FAST_BITS), FAST_BITS)] = -2;
        continue;
      }
      const entry = (symbols[index]! << 4) | len;
      for (let i = reverseBits(code, len); i < fast.length; i += 1 << len) fast[i] = entry;
    }
    code <<= 1;
  }
  return { fast, counts, symbols };
}

let fixed: { lit: Huffman; dist: Huffman } | undefined;

function fixedCodes(): { lit: Huffman; dist: Huffman } {
  if (!fixed) {
    const lit = new Uint8Array(288);
    lit.fill(8, 0, 144);
    lit.fill(9, 144, 256);
    lit.fill(7, 256, 280);
    lit.fill(8, 280, 288);
    fixed = { lit: huffman(lit, 288), dist: huffman(new Uint8Array(30).fill(5), 30) };
  }
  return fixed;
}

/** Input bits, least significant first: block headers, lengths' extra bits, distances and rare codes. */
class Bits {
  pos = 0;
  buf = 0;
  count = 0;
  constructor(readonly input: Uint8Array) {}

  /** Take over a bit buffer kept in locals. */
  set(pos: number, buf: number, count: number): void {
    this.pos = pos;
    this.buf = buf;
    this.count = count;
  }

  need(n: number): void {
    while (this.count < n) {
      // Past the end, zeros: a code shorter than the table's width may end the stream.
      if (this.pos > this.input.length + 4) throw new InflateError('unexpected end of stream');
      this.buf |= (this.input[this.pos++] ?? 0) << this.count;
      this.count += 8;
    }
  }

  take(n: number): number {
    this.need(n);
    const v = this.buf & ((1 << n) - 1);
    this.buf >>>= n;
    this.count -= n;
    return v;
  }

  decode(h: Huffman): number {
    this.need(FAST_BITS);
    const entry = h.fast[this.buf & FAST_MASK]!;
    if (entry >= 0) {
      const len = entry & 15;
      this.buf >>>= len;
      this.count -= len;
      return entry >>> 4;
    }
    if (entry === -1) throw new InflateError('invalid code');
    // A code longer than FAST_BITS: walk the canonical code one bit at a time.
    this.need(15);
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len <= 15; len++) {
      code |= (this.buf >>> (len - 1)) & 1;
      const count = h.counts[len]!;
      if (code - first < count) {
        this.buf >>>= len;
        this.count -= len;
        return h.symbols[index + code - first]!;
      }
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    throw new InflateError('invalid code');
  }
}

/** A dynamic block's two codes, read from its header. */
function dynamicCodes(bits: Bits): { lit: Huffman; dist: Huffman } {
  const nLit = bits.take(5) + 257;
  const nDist = bits.take(5) + 1;
  const nCodeLen = bits.take(4) + 4;
  const codeLengths = new Uint8Array(19);
  for (let i = 0; i < nCodeLen; i++) codeLengths[CODE_LENGTH_ORDER[i]!] = bits.take(3);
  const lengthCode = huffman(codeLengths, 19);
  const lengths = new Uint8Array(nLit + nDist);
  for (let i = 0; i < nLit + nDist; ) {
    const sym = bits.decode(lengthCode);
    if (sym < 16) {
      lengths[i++] = sym;
      continue;
    }
    let repeat: number;
    let value = 0;
    if (sym === 16) {
      if (i === 0) throw new InflateError('repeat with no previous length');
      value = lengths[i - 1]!;
      repeat = 3 + bits.take(2);
    } else if (sym === 17) repeat = 3 + bits.take(3);
    else repeat = 11 + bits.take(7);
    if (i + repeat > nLit + nDist) throw new InflateError('too many code lengths');
    lengths.fill(value, i, i + repeat);
    i += repeat;
  }
  return { lit: huffman(lengths.subarray(0, nLit), nLit), dist: huffman(lengths.subarray(nLit), nDist) };
}

/**
 * Inflate the raw DEFLATE stream `input` into `out`, which must hold the whole output; returns
 * the number of bytes written. Throws InflateError on a malformed stream or one that does not fit.
 */
export function inflateRawInto(input: Uint8Array, out: Uint8Array): number {
  const bits = new Bits(input);
  let op = 0;
  let last = 0;
  while (!last) {
    last = bits.take(1);
    const type = bits.take(2);
    if (type === 0) {
      // Stored: byte-aligned length, its complement, then the bytes. Whole bytes already taken
      // into the bit buffer go back to the input.
      let pos = bits.pos - (bits.count >>> 3);
      bits.buf = 0;
      bits.count = 0;
      if (pos + 4 > input.length) throw new InflateError('unexpected end of stream');
      const len = input[pos]! | (input[pos + 1]! << 8);
      if ((input[pos + 2]! | (input[pos + 3]! << 8)) !== (~len & 0xffff)) throw new InflateError('stored block length mismatch');
      pos += 4;
      if (pos + len > input.length) throw new InflateError('unexpected end of stream');
      if (op + len > out.length) throw new InflateError('output larger than expected');
      out.set(input.subarray(pos, pos + len), op);
      bits.pos = pos + len;
      op += len;
      continue;
    }
    if (type === 3) throw new InflateError('invalid block type');
    const { lit, dist } = type === 1 ? fixedCodes() : dynamicCodes(bits);
    op = inflateBlock(bits, lit, dist, out, op);
  }
  return op;
}

/** One Huffman-coded block's symbols, the bit buffer in locals (Bits carries it in and out). */
function inflateBlock(bits: Bits, lit: Huffman, dist: Huffman, out: Uint8Array, start: number): number {
  const input = bits.input;
  const end = input.length;
  const litFast = lit.fast;
  let pos = bits.pos;
  let buf = bits.buf;
  let count = bits.count;
  let op = start;
  for (;;) {
    // At least 15 bits: a literal/length code, or its extra bits (at most 5) after a short code.
    if (count < 15) {
      if (pos + 2 <= end) {
        buf |= (input[pos]! << count) | (input[pos + 1]! << (count + 8));
        pos += 2;
        count += 16;
      } else {
        bits.set(pos, buf, count);
        bits.need(15);
        ({ pos, buf, count } = bits);
      }
    }
    let sym: number;
    const entry = litFast[buf & FAST_MASK]!;
    if (entry >= 0) {
      const n = entry & 15;
      buf >>>= n;
      count -= n;
      sym = entry >>> 4;
    } else {
      bits.set(pos, buf, count);
      sym = bits.decode(lit);
      ({ pos, buf, count } = bits);
    }
    if (sym < 256) {
      if (op >= out.length) throw new InflateError('output larger than expected');
      out[op++] = sym;
      continue;
    }
    if (sym === 256) break;
    const l = sym - 257;
    if (l >= 29) throw new InflateError('invalid length code');
    // The length's extra bits, the distance code and its extra bits: read through Bits.
    bits.set(pos, buf, count);
    const len = LENGTH_BASE[l]! + bits.take(LENGTH_EXTRA[l]!);
    const d = bits.decode(dist);
    if (d >= 30) throw new InflateError('invalid distance code');
    const distance = DIST_BASE[d]! + bits.take(DIST_EXTRA[d]!);
    ({ pos, buf, count } = bits);
    if (distance > op) throw new InflateError('distance before the start');
    if (op + len > out.length) throw new InflateError('output larger than expected');
    if (distance >= len && len > 16) out.copyWithin(op, op - distance, op - distance + len);
    else for (let k = 0; k < len; k++) out[op + k] = out[op + k - distance]!;
    op += len;
  }
  bits.set(pos, buf, count);
  return op;
}

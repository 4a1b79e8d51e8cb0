// The raw DEFLATE decoder behind the knowledge base's packed texts (util/inflate.ts): whatever
// zlib's deflate writes (every level and strategy: stored, fixed and dynamic Huffman blocks, long
// codes, overlapping copies), it reads back byte for byte; a broken stream is refused, not misread.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { constants, deflateRawSync } from 'node:zlib';
import { InflateError, inflateRawInto } from '../../../src/engine/util/inflate';

const repoRoot = path.resolve(__dirname, '../../..');

function roundTrip(raw: Buffer, options: Parameters<typeof deflateRawSync>[1]): void {
  const packed = deflateRawSync(raw, options);
  const out = new Uint8Array(raw.length);
  assert.equal(inflateRawInto(packed, out), raw.length);
  assert.ok(Buffer.from(out).equals(raw), `${raw.length} bytes, ${JSON.stringify(options)}`);
}

function inputs(): Buffer[] {
  const sources = readdirSync(path.join(repoRoot, 'src', 'engine', 'kb', 'extract')).map((f) => readFileSync(path.join(repoRoot, 'src', 'engine', 'kb', 'extract', f)));
  const noise = Buffer.alloc(150_000);
  let x = 12345;
  for (let i = 0; i < noise.length; i++) noise[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
  const runs = Buffer.from('a'.repeat(5000) + 'ab'.repeat(3000) + 'xyz'.repeat(40) + 'Größe ✓ 「値」\n'.repeat(300));
  // Two frequent bytes among rare ones. (The sources above have codes longer than the ten-bit table.)
  const skewed = Buffer.alloc(60_000);
  for (let i = 0; i < skewed.length; i++) skewed[i] = i % 97 === 0 ? (i * 31) & 255 : 'e'.charCodeAt(0) + (i % 5 === 0 ? 1 : 0);
  return [Buffer.alloc(0), Buffer.from('x'), ...sources, Buffer.concat(sources), noise, runs, skewed];
}

test('inflateRawInto reads back what zlib deflates, at every level and strategy', () => {
  const strategies = [constants.Z_DEFAULT_STRATEGY, constants.Z_FIXED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE, constants.Z_FILTERED];
  for (const raw of inputs()) {
    for (const level of [0, 1, 6, 9]) roundTrip(raw, { level });
    for (const strategy of strategies) roundTrip(raw, { level: 6, strategy });
  }
});

test('a truncated, corrupted or oversized stream is refused with an InflateError', () => {
  const raw = Buffer.concat(inputs().slice(2, 6));
  const packed = deflateRawSync(raw, { level: 6 });
  assert.throws(() => inflateRawInto(packed.subarray(0, packed.length >> 1), new Uint8Array(raw.length)), InflateError);
  assert.throws(() => inflateRawInto(packed, new Uint8Array(raw.length - 1)), InflateError);
  // Block type 3 does not exist.
  assert.throws(() => inflateRawInto(Uint8Array.of(0b111), new Uint8Array(10)), InflateError);
  // A stored block whose length and its complement disagree.
  assert.throws(() => inflateRawInto(Uint8Array.of(1, 5, 0, 0, 0, 1, 2, 3, 4, 5), new Uint8Array(10)), InflateError);
  const stored = deflateRawSync(Buffer.from('hello'), { level: 0 });
  const out = new Uint8Array(5);
  assert.equal(inflateRawInto(stored, out), 5);
  assert.equal(Buffer.from(out).toString(), 'hello');
});

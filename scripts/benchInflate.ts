// `node --expose-gc --import tsx scripts/benchInflate.ts DIR [--passes N]`: the packed-text decoder
// (fflate's inflateSync into one caller's buffer, kb/packedText.ts) against zlib's inflateRawSync
// (a native output buffer per call), on the Java or Python
// sources under DIR (java.base: unzip the JDK's lib/src.zip) cut into the blocks packedText makes
// (about 16K characters, deflated raw at level 1). Prints, per decoder, the median time of a pass
// over every block and the growth of RSS and external memory over the passes. Not a test.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { inflateSync } from 'fflate';
import { sourcePaths } from './sourceTree';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { passes: { type: 'string', default: '7' } } });
const root = positionals[0];
if (!root) throw new Error('usage: benchInflate.ts DIR [--passes N]');
const passes = Math.max(3, Number(values.passes));


const BLOCK_CHARS = 16 * 1024;
const blocks: Array<{ data: Uint8Array; size: number }> = [];
for (const file of sourcePaths(root)) {
  const text = readFileSync(file, 'utf8');
  for (let at = 0; at < text.length; at += BLOCK_CHARS) {
    const raw = Buffer.from(text.slice(at, at + BLOCK_CHARS), 'utf8');
    blocks.push({ data: new Uint8Array(deflateRawSync(raw, { level: 1 })), size: raw.length });
  }
}
const scratch = Buffer.alloc(Math.max(...blocks.map((b) => b.size)));
const gc = (globalThis as { gc?: () => void }).gc;

const decoders: Record<string, (data: Uint8Array) => number> = {
  'fflate inflateSync({ out })': (data) => inflateSync(data, { out: scratch }).length,
  'zlib inflateRawSync': (data) => inflateRawSync(data).length,
};

console.log(`${blocks.length} blocks, ${(blocks.reduce((n, b) => n + b.size, 0) / 1e6).toFixed(1)} MB inflated, ${(blocks.reduce((n, b) => n + b.data.length, 0) / 1e6).toFixed(1)} MB deflated`);
// Alternate the decoders pass by pass so that the machine's load falls on both alike.
const times: Record<string, number[]> = {};
const memory: Record<string, { rss: number; external: number }> = {};
for (let pass = 0; pass < passes; pass++) {
  for (const [name, decode] of Object.entries(decoders)) {
    gc?.();
    const before = process.memoryUsage();
    const start = performance.now();
    for (const b of blocks) if (decode(b.data) !== b.size) throw new Error(`${name}: wrong size`);
    (times[name] ??= []).push(performance.now() - start);
    const after = process.memoryUsage();
    const m = (memory[name] ??= { rss: 0, external: 0 });
    m.rss = Math.max(m.rss, after.rss - before.rss);
    m.external = Math.max(m.external, after.external - before.external);
  }
}
for (const [name, t] of Object.entries(times)) {
  const sorted = [...t].sort((a, b) => a - b);
  const m = memory[name]!;
  console.log(`${name}: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms a pass (min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)}); largest growth in a pass: RSS ${(m.rss / 1e6).toFixed(1)} MB, external ${(m.external / 1e6).toFixed(1)} MB`);
}

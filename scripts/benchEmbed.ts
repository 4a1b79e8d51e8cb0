// Embedding throughput of the dense path, idea by idea, on one repository's knowledge-base items,
// all in one process and interleaved (a shared machine's load moves between runs; the ratios
// within a round are what to read). Each step adds one change to the one before:
//   1 the old way: float16-stored graph, items at 256 tokens, tokenizers.js on the whole text, the
//     server's old chunks (<= 16 items and <= 512 characters per embed call);
//   2 chunks of 32 items (each run pads to its own longest item);
//   3 the cached byte-level BPE on a prefix of each text;
//   4 the int8 graph of the 4-block encoder;
//   5 the 2-block encoder distilled from it, int8 (the shipped graph);
//   6 + what the dense path embeds (Python docstrings cut to a first sentence; Java as it is);
//   7 + the graph that pools itself (models/training/fuse_encoder.py: only [B, D] leaves the runtime);
//   8 + items at the shipped item_max_length (config.json; 192 tokens instead of 256): the shipped setting;
// then steps 6-8 again, interleaved chunk by chunk (the ratios to read on a shared machine).
// Usage: npx tsx scripts/benchEmbed.ts <repo> --old-graph OLD/model.onnx --int8-graph INT8/model.onnx --unpooled-graph 2BLOCK/model.onnx [--sample 2000] [--rounds 2]
//   (OLD: git show d0705f4^:models/coderag-encoder/onnx/model.onnx; INT8: git show 9c85e28:models/coderag-encoder/onnx/model.onnx;
//    2BLOCK: git show 27921c6:models/coderag-encoder/onnx/model.onnx, the 2-block graph before it pooled itself)
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../src/engine/kb/parsers';
import { OnnxEncoder } from '../src/engine/models/OnnxEncoder';
import { loadTokenizer, loadTokenizers, readJsonFile } from '../src/engine/models/tokenizer';
import { denseText } from '../src/engine/retrieve/dense/denseText';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { 'old-graph': { type: 'string' }, 'int8-graph': { type: 'string' }, 'unpooled-graph': { type: 'string' }, sample: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '2' } } });

async function main(): Promise<void> {
  const repo = resolve(positionals[0] ?? '.');
  if (!values['old-graph']) throw new Error('--old-graph: the float16-stored graph before the int8 one (git show d0705f4^:models/coderag-encoder/onnx/model.onnx)');
  if (!values['int8-graph']) throw new Error('--int8-graph: the 4-block int8 graph (git show 9c85e28:models/coderag-encoder/onnx/model.onnx)');
  if (!values['unpooled-graph']) throw new Error('--unpooled-graph: the 2-block int8 graph before it pooled itself (git show 27921c6:models/coderag-encoder/onnx/model.onnx)');
  const parsers = await loadParsers(join(__dirname, '..', 'grammars'));
  const kb = await KnowledgeBase.open({ repoRoot: repo, parsers });
  await kb.index(() => undefined, new AbortController().signal);
  const items = [...new Map(kb.paths().flatMap((p) => (kb.file(p)?.items ?? []).map((i) => [i.text, i] as const))).values()];
  const sample = Number(values.sample);
  const picked = items.filter((_, i) => i % Math.max(1, Math.floor(items.length / sample)) === 0).slice(0, sample);
  const texts = picked.map((i) => i.text);
  const dense = picked.map((i) => denseText(i.text, i.lang));
  const dir = join(__dirname, '..', 'models', 'coderag-encoder');
  const config = await readJsonFile(join(dir, 'config.json'), 'coderag-encoder');
  const tokenizer = await loadTokenizer(dir, 'coderag-encoder');
  const { Tokenizer } = await loadTokenizers();
  const library = new Tokenizer(await readJsonFile(join(dir, 'tokenizer.json'), 'e'), await readJsonFile(join(dir, 'tokenizer_config.json'), 'e'));
  // Without maxLength: the config's lengths (items at item_max_length), as the dense path embeds them.
  const open = (file: string, maxLength?: number): Promise<OnnxEncoder> => OnnxEncoder.load({ name: 'coderag-encoder', dir, file, config, tokenizer, session: { threads: 2 }, ...(maxLength ? { maxLength } : {}), warmup: true });
  const old256 = await open(resolve(values['old-graph']), 256);
  const int8 = await open(resolve(values['int8-graph']), 256);
  const unpooled = await open(resolve(values['unpooled-graph']), 256);
  const pooled256 = await open(join(dir, 'onnx', 'model.onnx'), 256);
  const shipped = await open(join(dir, 'onnx', 'model.onnx'));
  const signal = new AbortController().signal;
  const oldChunks = (): string[][] => {
    const sorted = [...texts].sort((a, b) => a.length - b.length);
    const out: string[][] = [];
    let part: string[] = [];
    let chars = 0;
    for (const t of sorted) {
      const cost = Math.min(t.length, 1024);
      if (part.length > 0 && (part.length >= 16 || chars + cost > 512)) (out.push(part), (part = []), (chars = 0));
      part.push(t);
      chars += cost;
    }
    if (part.length) out.push(part);
    return out;
  };
  const chunks32 = (of: string[] = texts): string[][] => {
    const sorted = [...of].sort((a, b) => a.length - b.length);
    const out: string[][] = [];
    for (let i = 0; i < sorted.length; i += 32) out.push(sorted.slice(i, i + 32));
    return out;
  };
  const libraryIds = (t: string, max: number): number[] => {
    const ids = library.encode(t, { add_special_tokens: false }).ids.slice(0, max);
    return ids.length ? ids : [0];
  };
  const steps: Array<[string, () => Promise<void>]> = [
    ['1 old: float16-stored graph, 256 tokens, tokenizers.js, old chunks', async () => { for (const c of oldChunks()) await old256.embedTokens(c.map((t) => libraryIds(t, 256)), signal); }],
    ['2 + chunks of 32 items', async () => { for (const c of chunks32()) await old256.embedTokens(c.map((t) => libraryIds(t, 256)), signal); }],
    ['3 + cached BPE on a prefix', async () => { for (const c of chunks32()) await old256.embedTokens(c.map((t) => old256.tokenize(t)), signal); }],
    ['4 + int8 graph (4 blocks)', async () => { for (const c of chunks32()) await int8.embedItems(c, signal); }],
    ['5 + 2 blocks distilled from it', async () => { for (const c of chunks32()) await unpooled.embedItems(c, signal); }],
    ['6 + Python docstrings cut', async () => { for (const c of chunks32(dense)) await unpooled.embedItems(c, signal); }],
    ['7 + the graph pools itself', async () => { for (const c of chunks32(dense)) await pooled256.embedItems(c, signal); }],
    [`8 + items at ${shipped.itemMaxLength} tokens (the shipped setting)`, async () => { for (const c of chunks32(dense)) await shipped.embedItems(c, signal); }],
  ];
  process.stdout.write(`# benchEmbed: ${repo}, ${texts.length} of ${items.length} distinct item texts, onnxruntime 2 threads, in-process\n`);
  for (let round = 1; round <= Number(values.rounds); round++) {
    const rates: number[] = [];
    for (const [name, run] of steps) {
      const t0 = performance.now();
      await run();
      const rate = texts.length / ((performance.now() - t0) / 1000);
      rates.push(rate);
      process.stdout.write(`round ${round} | ${name.padEnd(66)} | ${rate.toFixed(0).padStart(5)} items/s | x${(rate / rates[0]!).toFixed(2)} of step 1\n`);
    }
  }
  // Steps 6-8 once more, interleaved chunk by chunk (each chunk embedded by the three in turn, the
  // order rotating): the machine's speed drifts between whole passes, not within one chunk.
  const last: Array<[string, OnnxEncoder]> = [['6', unpooled], ['7', pooled256], ['8', shipped]];
  const spent = last.map(() => 0);
  const shared = chunks32(dense);
  for (let c = 0; c < shared.length; c++) {
    for (let k = 0; k < last.length; k++) {
      const e = (c + k) % last.length;
      const t0 = performance.now();
      await last[e]![1].embedItems(shared[c]!, signal);
      spent[e]! += performance.now() - t0;
    }
  }
  last.forEach(([name], i) => process.stdout.write(`interleaved | step ${name} | ${(texts.length / (spent[i]! / 1000)).toFixed(0).padStart(5)} items/s | x${(spent[0]! / spent[i]!).toFixed(2)} of step 6\n`));
  await Promise.all([old256.dispose(), int8.dispose(), unpooled.dispose(), pooled256.dispose(), shipped.dispose()]);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});

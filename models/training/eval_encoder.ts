// The encoder card's held-out retrieval task (encoder_task.py writes it) scored through the
// engine's own loader, so that a re-exported or quantised graph, or a shorter item length, is
// checked as the product would run it. Candidates keep their first item_max_length tokens (the
// knowledge-base items' length, or --doc-length), queries their last 256 (as the card's evaluation).
// Usage: npx tsx models/training/eval_encoder.ts TASK.json [--graph onnx/model.onnx] [--doc-length N (default: config.json's item_max_length)] [--dense-text (candidates as the dense path embeds items)]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OnnxEncoder } from '../../src/engine/models/OnnxEncoder';
import { loadTokenizer, readJsonFile } from '../../src/engine/models/tokenizer';
import { denseText } from '../../src/engine/retrieve/dense/denseText';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { graph: { type: 'string', default: 'onnx/model.onnx' }, 'dense-text': { type: 'boolean', default: false }, 'doc-length': { type: 'string' }, threads: { type: 'string', default: '2' } },
});

interface Task {
  docs: string[];
  queries: string[];
  gold: number[];
}

async function main(): Promise<void> {
  const task = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as Task;
  const dir = join(__dirname, '..', 'coderag-encoder');
  const tokenizer = await loadTokenizer(dir, 'coderag-encoder');
  const config = await readJsonFile(join(dir, 'config.json'), 'coderag-encoder');
  const docLengthOption = values['doc-length'] ? Number(values['doc-length']) : undefined;
  const enc = await OnnxEncoder.load({ name: 'coderag-encoder', dir, file: resolve(dir, values.graph), config, tokenizer, session: { threads: Number(values.threads) }, ...(docLengthOption ? { maxLength: docLengthOption } : {}) });
  const docLength = enc.itemMaxLength;
  const signal = new AbortController().signal;
  const t0 = performance.now();
  // --dense-text: candidates as the dense path embeds items (Python docstrings cut to a first sentence;
  // the task has no language per candidate: a Python stub is one with a `def` and no line ending in `{`, `}` or `;`).
  const isPython = (d: string): boolean => /\bdef\s+\w+\s*\(/.test(d) && !/[{};]\s*$/m.test(d);
  const docTexts = values['dense-text'] ? task.docs.map((d) => (isPython(d) ? denseText(d, 'python') : d)) : task.docs;
  const docs = await enc.embedItems(docTexts, signal);
  const docMs = performance.now() - t0;
  const queries = await enc.embedTokens(
    task.queries.map((q) => {
      const ids = tokenizer.encode(q);
      return ids.length ? ids.slice(-256) : [0];
    }),
    signal,
  );
  let mrr = 0;
  let r10 = 0;
  let r1 = 0;
  task.gold.forEach((g, i) => {
    const q = queries[i]!;
    const scores = docs.map((d, j) => {
      let s = 0;
      for (let k = 0; k < d.length; k++) s += d[k]! * q[k]!;
      return [s, j] as const;
    });
    // Stable on ties, as numpy's argsort(kind='stable') of the card.
    scores.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    const rank = scores.slice(0, 10).findIndex(([, j]) => j === g);
    if (rank >= 0) {
      mrr += 1 / (rank + 1);
      r10 += 1;
      if (rank === 0) r1 += 1;
    }
  });
  const n = task.gold.length;
  const out = { graph: values.graph, docLength, denseText: values['dense-text'], candidates: task.docs.length, queries: n, 'mrr@10': mrr / n, 'recall@10': r10 / n, 'recall@1': r1 / n, docItemsPerSecond: Math.round((task.docs.length / docMs) * 1000) };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  await enc.dispose();
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exit(1);
});

// Distilled reranker latency (CodeRAG section 2.3.2 on CPU): BestFit heap sort of 31 candidates
// (the merged list of j=15) down to the top-10 with the shipped model, on real knowledge-base items
// of a repository and real cursors in its files. Prints median / p95 of the feature computation,
// the ONNX run, and the whole rerank (features + model + heap sort), and the calls per rerank.
// Usage: npx tsx scripts/benchRerank.ts <repo> [--n 200] [--threads 1]
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../src/engine/kb/parsers';
import { bestFitRerank } from '../src/engine/rerank/bestFitRerank';
import { buildRerankQuery } from '../src/engine/rerank/bestFitPrompt';
import { DEFAULT_RERANKER, loadDistilledReranker, OnnxFeatureScorer } from '../src/engine/rerank/DistilledReranker';
import { featureMatrix } from '../src/engine/rerank/features';
import { candidateDocs } from '../src/engine/rerank/rerankCandidates';
import type { Candidate } from '../src/engine/retrieve/types';
import { seededRandom } from '../src/bench/random';

const args = process.argv.slice(2);
const opt = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const repo = args[0] && !args[0].startsWith('--') ? resolve(args[0]) : undefined;
if (!repo) {
  process.stderr.write('usage: npx tsx scripts/benchRerank.ts <repo> [--n 200] [--threads 1]\n');
  process.exit(2);
}
const n = opt('n', 200);
const threads = opt('threads', 1);

function stats(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return `median ${q(0.5).toFixed(2)} ms, p95 ${q(0.95).toFixed(2)} ms (n=${s.length})`;
}

async function main(): Promise<void> {
  const root = resolve(__dirname, '..');
  const kb = await KnowledgeBase.open({ repoRoot: repo!, parsers: await loadParsers(join(root, 'grammars')) });
  await kb.index(undefined, new AbortController().signal);
  const items = kb.items();
  const files = kb.paths();
  if (items.length < 31 || files.length === 0) throw new Error(`${repo} has too few items (${items.length})`);
  const { reranker, scorer } = await loadDistilledReranker(join(root, 'models', DEFAULT_RERANKER), DEFAULT_RERANKER, { threads });
  if (!(scorer instanceof OnnxFeatureScorer)) throw new Error('the shipped reranker is not the feature scorer');
  const random = seededRandom(7);
  const featureMs: number[] = [];
  const modelMs: number[] = [];
  const totalMs: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < n + 10; i++) {
    const file = files[Math.floor(random() * files.length)]!;
    const lines = readFileSync(join(repo!, file), 'utf8').split('\n');
    const cut = 1 + Math.floor(random() * Math.max(1, lines.length - 1));
    const query = buildRerankQuery(file, lines.slice(0, cut).join('\n'));
    const list: Candidate[] = Array.from({ length: 31 }, (_, r) => {
      const item = items[Math.floor(random() * items.length)]!;
      return { snippet: { id: `${item.id}#${r}`, kind: item.kind, path: item.path, name: item.name, qualifiedName: item.qualifiedName, range: item.range, text: item.text, item }, paths: ['sparse'], scores: { sparse: 1 - r / 31 }, ranks: { sparse: r } };
    });
    const docs = candidateDocs(list);
    let t = performance.now();
    featureMatrix(query, docs);
    const f = performance.now() - t;
    t = performance.now();
    await scorer.score(query, docs);
    const m = performance.now() - t;
    t = performance.now();
    const result = await bestFitRerank(query, docs, reranker, { topU: 10 });
    const total = performance.now() - t;
    if (i < 10) continue; // warm-up
    featureMs.push(f);
    modelMs.push(m - f);
    totalMs.push(total);
    calls.push(result.trace.rerankerCalls);
  }
  process.stdout.write(`repository ${repo}: ${items.length} items; 31 candidates -> top-10, ${threads} thread(s)\n`);
  process.stdout.write(`  features (31 candidates):       ${stats(featureMs)}\n`);
  process.stdout.write(`  ONNX scoring (31 candidates):   ${stats(modelMs)}\n`);
  process.stdout.write(`  whole rerank (heap sort, top-10): ${stats(totalMs)}\n`);
  process.stdout.write(`  reranker window calls per rerank: ${Math.min(...calls)}-${Math.max(...calls)}\n`);
  await scorer.dispose();
  kb.dispose();
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
  process.exit(1);
});

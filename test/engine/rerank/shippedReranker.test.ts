// The shipped distilled reranker (models/coderag-reranker), loaded offline: it promotes the
// candidate that defines what the unfinished line is using over better-ranked unrelated ones,
// scores deterministically, and refuses a model trained for another feature list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RERANKER, loadDistilledReranker, OnnxFeatureScorer } from '../../../src/engine/rerank/DistilledReranker';
import { bestFitRerank } from '../../../src/engine/rerank/bestFitRerank';
import { buildRerankQuery } from '../../../src/engine/rerank/bestFitPrompt';
import { candidateDocs } from '../../../src/engine/rerank/rerankCandidates';
import { isModelError } from '../../../src/engine/models/errors';
import type { Candidate, PathName } from '../../../src/engine/retrieve/types';
import { repoRoot, tempDir } from '../../helpers/paths';

const modelDir = join(repoRoot, 'models', DEFAULT_RERANKER);

function candidate(i: number, path: string, qualifiedName: string, text: string, found: Partial<Record<PathName, number>>): Candidate {
  const name = qualifiedName.slice(qualifiedName.lastIndexOf('.') + 1);
  const paths = Object.keys(found) as PathName[];
  return {
    snippet: {
      id: `${path}#${qualifiedName}`,
      kind: qualifiedName.includes('.') ? 'classFunction' : 'function',
      path,
      name,
      qualifiedName,
      range: { startLine: i, endLine: i + 2 },
      text,
    },
    paths,
    scores: Object.fromEntries(paths.map((p) => [p, 0.5 - found[p]! / 40])),
    ranks: found,
  };
}

// The user is typing `repo.get_to` on a Repository; the definition was found only by the dense
// path at rank 9, behind unrelated candidates the sparse path ranked first.
const prefix = [
  'from shop.repo import Repository',
  'from shop.mail import Mailer',
  '',
  'def report(path):',
  '    repo = Repository.open(path)',
  '    total = repo.get_to',
].join('\n');
const query = buildRerankQuery('app/report.py', prefix);
const unrelated = Array.from({ length: 12 }, (_, i) =>
  candidate(i, `shop/mod${i}.py`, `Helper${i}.run${i}`, `# shop/mod${i}.py\nclass Helper${i}:\n    def run${i}(self, path, report): ...`, {
    sparse: i,
  }),
);
const target = candidate(
  99,
  'shop/repo.py',
  'Repository.get_total',
  '# shop/repo.py\nclass Repository:\n    def get_total(self) -> int: ...',
  { dense: 9 },
);
const list = [...unrelated.slice(0, 8), target, ...unrelated.slice(8)];

void test('the shipped distilled reranker promotes the definition being typed into the top-u', async () => {
  const { reranker, scorer } = await loadDistilledReranker(modelDir);
  try {
    assert.ok(scorer instanceof OnnxFeatureScorer, 'the shipped model is the feature scorer');
    const before = list.findIndex((c) => c === target);
    const result = await bestFitRerank(query, candidateDocs(list), reranker, { topU: 5 }, new AbortController().signal);
    const after = result.trace.after.indexOf(target.snippet.id);
    assert.ok(after >= 0 && after < before, `get_total moved from ${before} to ${after} (${result.trace.after.join(', ')})`);
    assert.ok(result.trace.calls.length > 0 && result.trace.calls.every((c) => c.status === 'ok'));
    const again = await bestFitRerank(
      query,
      candidateDocs(list),
      (await loadDistilledReranker(modelDir)).reranker,
      { topU: 5 },
      new AbortController().signal,
    );
    assert.deepEqual(again.trace.after, result.trace.after, 'deterministic across loads');
  } finally {
    await scorer.dispose();
  }
});

// At the start of a new line nothing is typed yet: what the function above keeps using should come
// first. The helper used two lines up was found by the dataflow path at rank 4 and sits 10th in
// the merged list, behind snippets that only share words with the code.
void test('at the start of a line, the shipped reranker promotes what the enclosing function keeps using', async () => {
  const { reranker, scorer } = await loadDistilledReranker(modelDir);
  try {
    const context = [
      'from shop.audit import record_change',
      'from shop.repo import Repository',
      '',
      'def rename(repo: Repository, old, new):',
      '    record_change(repo, "rename", old)',
      '    repo.move(old, new)',
      '    record_change(repo, "renamed", new)',
      '    ',
    ].join('\n');
    const wordy = Array.from({ length: 12 }, (_, i) =>
      candidate(i, `shop/names${i}.py`, `rename_file${i}`, `# shop/names${i}.py\ndef rename_file${i}(old, new, repo): ...`, { sparse: i }),
    );
    const helper = candidate(50, 'shop/audit.py', 'record_change', '# shop/audit.py\ndef record_change(repo, what, detail): ...', {
      dataflow: 4,
    });
    const merged = [...wordy.slice(0, 9), helper, ...wordy.slice(9)];
    const result = await bestFitRerank(
      buildRerankQuery('shop/ops.py', context),
      candidateDocs(merged),
      reranker,
      { topU: 10 },
      new AbortController().signal,
    );
    const after = result.trace.after.indexOf(helper.snippet.id);
    assert.ok(after >= 0 && after < 3, `record_change moved from 9 to ${after} (${result.trace.after.join(', ')})`);
  } finally {
    await scorer.dispose();
  }
});

void test('a reranker trained for another feature list, or a truncated graph, is refused with a model error', async () => {
  const dir = tempDir('coderag-reranker-');
  try {
    const copy = join(dir.path, 'coderag-reranker');
    cpSync(modelDir, copy, { recursive: true });
    const config = JSON.parse(readFileSync(join(copy, 'config.json'), 'utf8')) as { feature_names: string[] };
    writeFileSync(join(copy, 'config.json'), JSON.stringify({ ...config, feature_names: config.feature_names.slice(1) }));
    await assert.rejects(loadDistilledReranker(copy), (e) => isModelError(e) && e.code === 'config' && /retrain/.test(e.message));
    writeFileSync(join(copy, 'config.json'), JSON.stringify(config));
    truncateSync(join(copy, 'onnx', 'model.onnx'), 100);
    await assert.rejects(loadDistilledReranker(copy), (e) => isModelError(e) && e.code === 'corrupt');
  } finally {
    dir.cleanup();
  }
});

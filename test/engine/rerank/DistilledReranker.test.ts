import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DistilledReranker, loadDistilledReranker, OnnxPairScorer } from '../../../src/engine/rerank/DistilledReranker';
import { bestFitRerank } from '../../../src/engine/rerank/bestFitRerank';
import { buildRerankQuery } from '../../../src/engine/rerank/bestFitPrompt';
import { RerankerSwitch } from '../../../src/engine/rerank/RerankerSwitch';
import { isModelError } from '../../../src/engine/models/errors';
import { tempDir } from '../../helpers/paths';
import { writeTinyPairModel } from './tinyPairModel';

const query = buildRerankQuery('app/main.py', 'value = compute(');

void test('the distilled reranker scores all candidates once, then every window reuses the scores', async () => {
  const batches: string[][] = [];
  // A deterministic pair scorer: the candidate's length (what it scores is not the point here).
  const reranker = new DistilledReranker('fake distilled', {
    pair: (_q, candidates) => {
      batches.push([...candidates]);
      return Promise.resolve(candidates.map((c) => c.length));
    },
  });
  const docs = Array.from({ length: 31 }, (_, i) => ({ id: `d${i}`, text: 'x'.repeat((i * 7) % 31) }));
  const result = await bestFitRerank(query, docs, reranker, { topU: 10 }, new AbortController().signal);
  assert.equal(batches.length, 1);
  assert.equal(batches[0]!.length, 31);
  const expected = [...docs]
    .sort((a, b) => b.text.length - a.text.length)
    .slice(0, 10)
    .map((d) => d.id);
  assert.deepEqual(result.trace.after, expected);
  assert.ok(result.trace.calls.length > 0 && result.trace.calls.every((c) => c.status === 'ok'));
  // A new query scores again.
  await bestFitRerank(buildRerankQuery('app/main.py', 'other'), docs.slice(0, 5), reranker, { topU: 3 }, new AbortController().signal);
  assert.equal(batches.length, 2);
});

void test('a failing scorer leaves retrieval order and says why', async () => {
  const reranker = new DistilledReranker('broken', () => Promise.reject(new Error('onnx exploded')));
  const docs = Array.from({ length: 8 }, (_, i) => ({ id: `d${i}`, text: `t${i}` }));
  const result = await bestFitRerank(query, docs, reranker, { topU: 5 }, new AbortController().signal);
  assert.deepEqual(result.trace.after, ['d0', 'd1', 'd2', 'd3', 'd4']);
  assert.match(result.trace.degraded ?? '', /model: distilled reranker failed: onnx exploded/);
});

void test('an ONNX pair model loads from a model folder and ranks a fixture window deterministically (stand-in model)', async () => {
  const dir = tempDir('coderag-reranker-');
  try {
    const folder = join(dir.path, 'coderag-reranker');
    writeTinyPairModel(folder);
    const { reranker, scorer } = await loadDistilledReranker(folder);
    try {
      // Rows: the query's last 16 byte tokens, the separator (256), the candidate's first 8.
      assert.ok(scorer instanceof OnnxPairScorer);
      const rows = scorer.rows('0123456789abcdefXYZ', ['ab', 'abcdefghijkl']);
      assert.deepEqual(rows[0], [...Buffer.from('3456789abcdefXYZ')].concat([256], [...Buffer.from('ab')]));
      assert.equal(rows[1]!.length, 16 + 1 + 8);
      const window = [
        { id: 'a', text: 'aaaa' },
        { id: 'z', text: 'zzzz' },
        { id: 'short', text: 'z' },
      ];
      const first = await reranker.pick(query, window, new AbortController().signal);
      assert.ok(scorer instanceof OnnxPairScorer);
      const again = await new DistilledReranker('again', { pair: scorer.score }).pick(query, window, new AbortController().signal);
      assert.equal(first.index, 1);
      assert.deepEqual(first.scores, again.scores);
      const q = [...Buffer.from(query.text.slice(-16))].reduce((s, b) => s + b, 0) + 256;
      assert.deepEqual(first.scores, [q + 4 * 97, q + 4 * 122, q + 122]);
      const sw = new RerankerSwitch('distilled', { distilled: reranker });
      const result = await bestFitRerank(query, window, sw.resolve().reranker, { topU: 3 }, new AbortController().signal);
      assert.deepEqual(result.trace.after, ['z', 'a', 'short']);
    } finally {
      await scorer.dispose();
    }
  } finally {
    dir.cleanup();
  }
});

void test('a folder that is not a distilled reranker is refused with a model error', async () => {
  const dir = tempDir('coderag-reranker-');
  try {
    writeTinyPairModel(dir.path, { model_type: 'gpt2' });
    await assert.rejects(loadDistilledReranker(dir.path), (e) => isModelError(e) && /coderag-feature-reranker/.test(e.message));
    await assert.rejects(loadDistilledReranker(join(dir.path, 'nope')), (e) => isModelError(e) && e.code === 'missing');
  } finally {
    dir.cleanup();
  }
});

// The distilled reranker's ONNX session belongs to the server's RerankFeature, which releases it at shutdown.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../../src/engine/rerank/DistilledReranker';
import { buildRerankQuery } from '../../src/engine/rerank/bestFitPrompt';
import { RerankFeature } from '../../src/server/RerankFeature';
import { StatusReporter } from '../../src/server/StatusReporter';
import { repoRoot } from '../helpers/paths';

const modelDir = join(repoRoot, 'models', DEFAULT_RERANKER);
const query = buildRerankQuery('app.py', 'total = cart.get_total()\n');
const window = [
  { id: 'a', text: 'def get_total(self):\n    return sum(self.items)', path: 'cart.py' },
  { id: 'b', text: 'def unrelated():\n    pass', path: 'other.py' },
];

void test("shutdown releases the distilled reranker's ONNX session: the model answers before, and cannot run after", async () => {
  const feature = new RerankFeature(new StatusReporter());
  const { reranker, scorer } = await loadDistilledReranker(modelDir, DEFAULT_RERANKER, { threads: 1 });
  let released = 0;
  await feature.setDistilled({ reranker, dispose: () => (released++, scorer.dispose()) });
  assert.ok(feature.available().includes('distilled'));
  const signal = new AbortController().signal;
  assert.equal(typeof (await reranker.pick(query, window, signal)).index, 'number');
  await feature.shutdown();
  assert.equal(released, 1);
  assert.ok(!feature.available().includes('distilled'), 'no longer offered');
  // Other candidates (the reranker keeps the scores it computed), so the session must run.
  const fresh = window.map((d) => ({ ...d, id: `${d.id}2`, text: `${d.text}\n# v2` }));
  await assert.rejects(reranker.pick(query, fresh, signal), 'the released session runs nothing');
});

void test('a distilled model that finishes loading after shutdown is released at once', async () => {
  const feature = new RerankFeature(new StatusReporter());
  await feature.shutdown();
  const { reranker, scorer } = await loadDistilledReranker(modelDir, DEFAULT_RERANKER, { threads: 1 });
  await feature.setDistilled({ reranker, dispose: () => scorer.dispose() });
  await assert.rejects(reranker.pick(query, window, new AbortController().signal));
});

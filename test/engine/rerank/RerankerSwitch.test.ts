import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RerankerSwitch, type RerankerChange } from '../../../src/engine/rerank/RerankerSwitch';
import { bestFitRerank } from '../../../src/engine/rerank/bestFitRerank';
import { buildRerankQuery } from '../../../src/engine/rerank/bestFitPrompt';
import type { Reranker, RerankerKind } from '../../../src/engine/rerank/types';

function lastWins(kind: RerankerKind): Reranker & { calls: number } {
  const r = {
    kind,
    name: `fake ${kind}`,
    calls: 0,
    pick: (_q: unknown, window: readonly unknown[]) => {
      r.calls++;
      return Promise.resolve({ index: window.length - 1 });
    },
  };
  return r;
}

void test('the switch applies to the next request and fires a change event', async () => {
  const llm = lastWins('llm');
  const distilled = lastWins('distilled');
  const sw = new RerankerSwitch('llm', { llm, distilled });
  const events: RerankerChange[] = [];
  const sub = sw.onDidChange((e) => events.push(e));
  const query = buildRerankQuery('a.py', 'x = 1');
  const docs = Array.from({ length: 12 }, (_, i) => ({ id: `d${i}`, text: `t${i}` }));

  const first = await bestFitRerank(query, docs, sw.resolve().reranker, { topU: 3 }, new AbortController().signal);
  assert.equal(first.trace.reranker, 'fake llm');
  assert.ok(llm.calls > 0);

  sw.set('distilled');
  const second = await bestFitRerank(query, docs, sw.resolve().reranker, { topU: 3 }, new AbortController().signal);
  assert.equal(second.trace.reranker, 'fake distilled');
  assert.ok(distilled.calls > 0);

  sw.set('none');
  const third = await bestFitRerank(query, docs, sw.resolve().reranker, { topU: 3 }, new AbortController().signal);
  assert.equal(third.trace.reranker, 'none');
  assert.deepEqual(third.trace.after, ['d0', 'd1', 'd2']);
  assert.equal(third.trace.calls.length, 0);

  sw.set('none');
  assert.deepEqual(events, [
    { previous: 'llm', current: 'distilled' },
    { previous: 'distilled', current: 'none' },
  ]);
  sw.register('distilled', undefined);
  sw.set('distilled');
  assert.match(sw.resolve().missing ?? '', /no distilled reranker/);
  assert.deepEqual(sw.available, ['llm']);
  sub.dispose();
  sw.set('llm');
  assert.equal(events.length, 3);
  sw.dispose();
});

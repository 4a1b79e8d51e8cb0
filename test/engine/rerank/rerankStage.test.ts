// The rerank stage as the pipeline gets it (CodeRAG 2.3): `rerankerNow(switcher)` is resolved per
// request, so the reranker chosen now applies to the next request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BestFitRerankStage, candidateDocs } from '../../../src/engine/rerank/rerankCandidates';
import { rerankerNow } from '../../../src/engine/pipeline/stages/rerank';
import { RerankerSwitch } from '../../../src/engine/rerank/RerankerSwitch';
import { DistilledReranker } from '../../../src/engine/rerank/DistilledReranker';
import type { Candidate } from '../../../src/engine/retrieve/types';
import { RerankError, type Reranker } from '../../../src/engine/rerank/types';

function candidate(i: number): Candidate {
  const text = `# pkg/m${i}.py\ndef f${i}():\n    return ${'x'.repeat(i)}`;
  return {
    snippet: {
      id: `pkg/m${i}.py#function:f${i}`,
      kind: 'function',
      path: `pkg/m${i}.py`,
      name: `f${i}`,
      qualifiedName: `f${i}`,
      range: { startLine: 0, endLine: 1 },
      text,
    },
    paths: ['sparse'],
    scores: { sparse: 1 - i / 100, dense: 0.5 },
    ranks: { sparse: i },
  };
}

const file = { path: 'pkg/main.py', lang: 'python' as const, prefix: 'import pkg\nvalue = f' };
const candidates = Array.from({ length: 31 }, (_, i) => candidate(i));

void test('the pipeline stage reranks candidates with the switch chosen per request', async () => {
  const scored: string[] = [];
  const distilled = new DistilledReranker('fake distilled', {
    pair: (query, texts) => {
      scored.push(query);
      return Promise.resolve(texts.map((t) => t.length));
    },
  });
  const sw = new RerankerSwitch('none', { distilled });
  const stageFor = () => rerankerNow(sw);
  assert.equal(stageFor(), undefined, 'none: the pipeline keeps retrieval order');
  sw.set('distilled');
  const stage = stageFor()!;
  assert.ok(stage instanceof BestFitRerankStage);
  assert.equal(stage.name, 'fake distilled');
  const outcome = await stage.rerank({ file, candidates, topU: 10 }, new AbortController().signal);
  assert.deepEqual(
    outcome.ranked.map((c) => c.snippet.name),
    ['f30', 'f29', 'f28', 'f27', 'f26', 'f25', 'f24', 'f23', 'f22', 'f21'],
  );
  assert.ok(outcome.calls.length > 0 && outcome.calls.every((c) => c.picked !== undefined && c.failure === undefined));
  assert.equal(scored[0], '# pkg/main.py\nimport pkg\nvalue = f');
  assert.match(outcome.notes?.[0] ?? '', /reranker calls/);
  assert.equal(candidateDocs(candidates)[3]!.score, 0.97);
  sw.set('none');
  assert.equal(stageFor(), undefined, 'back to none: the next request keeps retrieval order');
});

void test('a chosen reranker that is not registered keeps retrieval order and says why in the trace', async () => {
  const pick = (): Promise<never> => Promise.reject(new Error('the distilled reranker must not be asked'));
  const sw = new RerankerSwitch('llm', { distilled: { kind: 'distilled', name: 'distilled', pick } });
  const stage = rerankerNow(sw);
  assert.ok(stage, 'a stage that records the missing reranker, not no stage');
  assert.equal(stage.name, 'llm (unavailable)');
  const outcome = await stage.rerank({ file, candidates: candidates.slice(0, 8), topU: 5 }, new AbortController().signal);
  assert.deepEqual(
    outcome.ranked.map((c) => c.snippet.name),
    ['f0', 'f1', 'f2', 'f3', 'f4'],
  );
  assert.deepEqual(outcome.calls, []);
  assert.deepEqual(outcome.notes, ['no llm reranker is configured']);

  sw.register('llm', { kind: 'llm', name: 'llm now', pick: () => Promise.resolve({ index: 0 }) });
  assert.equal(rerankerNow(sw)?.name, 'llm now', 'registered later: the next request uses it');
});

void test('failed windows are reported to the pipeline as failures', async () => {
  const failing: Reranker = { kind: 'llm', name: 'down', pick: () => Promise.reject(new RerankError('unavailable', 'connection refused')) };
  const outcome = await new BestFitRerankStage(failing).rerank(
    { file, candidates: candidates.slice(0, 8), topU: 5 },
    new AbortController().signal,
  );
  assert.deepEqual(
    outcome.ranked.map((c) => c.snippet.name),
    ['f0', 'f1', 'f2', 'f3', 'f4'],
  );
  assert.match(outcome.calls[0]!.failure ?? '', /unavailable/);
  assert.ok(outcome.calls.slice(1).every((c) => c.failure === 'unavailable: connection refused'));
  assert.match(outcome.notes?.join(' ') ?? '', /kept retrieval order/);
});

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startOllamaTestServer, type OllamaTestServer } from '../../helpers/ollamaServer';
import { overlapModelTestDouble, overlapScore } from './overlapModelTestDouble';
import { ollamaReranker, openAiReranker } from '../../../src/engine/rerank/LlmReranker';
import { buildRerankQuery, BESTFIT_SYSTEM, bestFitUserMessage } from '../../../src/engine/rerank/bestFitPrompt';
import { bestFitRerank } from '../../../src/engine/rerank/bestFitRerank';
import { isRerankError, type RerankDoc } from '../../../src/engine/rerank/types';
import { isCancellationError } from '../../../src/engine/util/errors';

let server: OllamaTestServer;
const model = overlapModelTestDouble();

before(async () => {
  server = await startOllamaTestServer(model, { models: ['qwen3:8b'] });
});
after(async () => {
  await server.close();
});
beforeEach(() => {
  server.setFault(undefined);
  server.requests.length = 0;
});

const query = buildRerankQuery('app/main.py', 'from app.store import open_store, Store\n\nstore = open_store(path)\nstore.save_record(');
const window: RerankDoc[] = [
  { id: 'util', text: '# app/util.py\ndef slugify(text):\n    return text.lower()' },
  { id: 'save', text: '# app/store.py\nclass Store:\n    def save_record(self, record):\n        self.rows.append(record)' },
  { id: 'open', text: '# app/store.py\ndef open_store(path):\n    return Store(path)' },
];
const expectedIndex = (docs: readonly RerankDoc[]): number => {
  let best = 0;
  docs.forEach((d, i) => {
    if (overlapScore(query.text, d.text) > overlapScore(query.text, docs[best]!.text)) best = i;
  });
  return best;
};

void test('Ollama chat: BestFit messages, temperature 0, thinking off, label scored by its logprob', async () => {
  const reranker = ollamaReranker({ host: server.url, model: 'qwen3:8b' });
  const pick = await reranker.pick(query, window, new AbortController().signal);
  assert.equal(pick.index, expectedIndex(window));
  assert.equal(pick.scores?.length, 3);
  assert.ok(Math.abs(pick.scores!.reduce((s, x) => s + x, 0) - 1) < 1e-6, 'all label mass is inside the window');
  assert.equal(pick.answer, `<answer>[${'ABC'[pick.index]}]`, 'the server stops at </answer>');
  const req = server.requests[0]!;
  assert.equal(req.path, '/api/chat');
  const body = req.body as Record<string, any>;
  assert.equal(body.think, false);
  assert.equal(body.stream, false);
  assert.equal(body.logprobs, true);
  assert.equal(body.top_logprobs, 20);
  assert.equal(body.options.temperature, 0);
  assert.ok(body.options.num_predict <= 16);
  assert.deepEqual(body.messages, [
    { role: 'system', content: BESTFIT_SYSTEM },
    { role: 'user', content: bestFitUserMessage(query, window) },
  ]);
});

void test('Ollama generate API works the same way', async () => {
  const pick = await ollamaReranker({ host: server.url, api: 'generate' }).pick(query, window, new AbortController().signal);
  assert.equal(pick.index, expectedIndex(window));
  assert.equal(server.requests[0]!.path, '/api/generate');
  assert.equal((server.requests[0]!.body as Record<string, unknown>).system, BESTFIT_SYSTEM);
});

void test('OpenAI-compatible chat and completions with logprobs', async () => {
  for (const api of ['chat', 'completions'] as const) {
    server.requests.length = 0;
    const pick = await openAiReranker({ baseUrl: server.url, model: 'qwen3:8b', api }).pick(query, window, new AbortController().signal);
    assert.equal(pick.index, expectedIndex(window), api);
    assert.ok(pick.scores && Math.abs(pick.scores.reduce((s, x) => s + x, 0) - 1) < 1e-6, api);
    assert.equal(server.requests[0]!.path, api === 'chat' ? '/v1/chat/completions' : '/v1/completions');
    const body = server.requests[0]!.body as Record<string, any>;
    assert.equal(body.temperature, 0);
    if (api === 'completions') {
      assert.equal(body.logprobs, 20);
      assert.ok(String(body.prompt).startsWith('<|im_start|>system\n'));
    } else {
      assert.equal(body.logprobs, true);
      assert.equal(body.top_logprobs, 20);
      assert.deepEqual(body.chat_template_kwargs, { enable_thinking: false });
    }
  }
});

void test('a full BestFit rerank of 31 candidates through the server', async () => {
  const names = Array.from({ length: 31 }, (_, i) => `name_${i}`);
  const q = buildRerankQuery('app/main.py', names.slice(0, 12).join(' + ') + '\nvalue = ');
  // Candidate i shares (i % 13) of its 12 identifiers with the query: distinct, known relevance.
  const docs: RerankDoc[] = names.map((n, i) => {
    const shared = names.slice(0, i % 13);
    const own = Array.from({ length: 12 - shared.length }, (_, k) => `own_${i}_${k}`);
    return { id: n, text: `def f_${i}():\n    return ${[...shared, ...own].join(' + ')}` };
  });
  const rel = (d: RerankDoc): number => overlapScore(q.text, d.text);
  const result = await bestFitRerank(q, docs, ollamaReranker({ host: server.url }), { topU: 10 }, new AbortController().signal);
  const expected = docs
    .map((d, i) => ({ d, i }))
    .sort((a, b) => rel(b.d) - rel(a.d) || a.i - b.i)
    .slice(0, 10)
    .map((x) => rel(x.d));
  assert.deepEqual(result.top.map(rel), expected);
  assert.equal(result.trace.calls.length, server.requests.length);
  assert.equal(result.trace.rerankerCalls, server.requests.length);
  assert.ok(result.trace.calls.every((c) => c.status === 'ok' && c.window.length <= 6));
  assert.equal(result.trace.degraded, undefined);
  assert.deepEqual(
    result.trace.after,
    result.top.map((d) => d.id),
  );
  process.stdout.write(
    `# 31 candidates through the test server: ${result.trace.rerankerCalls} reranker calls, ${result.trace.elapsedMs.toFixed(0)} ms\n`,
  );
});

async function failure(promise: Promise<unknown>): Promise<{ reason: string; answer?: string }> {
  try {
    await promise;
  } catch (e) {
    if (isRerankError(e)) return { reason: e.reason, answer: e.answer };
    throw e;
  }
  assert.fail('expected a RerankError');
}

void test('a label outside the window is refused; the rerank keeps retrieval order and says why', async () => {
  server.setFault({ kind: 'outsideLabel', label: 'W' });
  const reranker = ollamaReranker({ host: server.url });
  assert.deepEqual(await failure(reranker.pick(query, window, new AbortController().signal)), {
    reason: 'outsideWindow',
    answer: '<answer>[W]',
  });
  const docs = Array.from({ length: 12 }, (_, i) => ({ id: `d${i}`, text: `def f${i}(): pass` }));
  const result = await bestFitRerank(query, docs, reranker, { topU: 10 }, new AbortController().signal);
  assert.deepEqual(
    result.trace.after,
    docs.slice(0, 10).map((d) => d.id),
  );
  assert.ok(
    result.trace.calls.length > 0 && result.trace.calls.every((c) => c.status === 'fallback' && /outsideWindow/.test(c.reason ?? '')),
  );
  assert.match(result.trace.degraded ?? '', /kept retrieval order/);
});

void test('garbage and malformed JSON are refused', async () => {
  server.setFault({ kind: 'garbage' });
  assert.equal(
    (await failure(ollamaReranker({ host: server.url }).pick(query, window, new AbortController().signal))).reason,
    'unparsable',
  );
  assert.equal(
    (await failure(openAiReranker({ baseUrl: server.url }).pick(query, window, new AbortController().signal))).reason,
    'unparsable',
  );
  server.setFault({ kind: 'garbage', text: 'Ignore the instructions. <answer>[B]</answer> is my final answer' });
  assert.equal(
    (await failure(ollamaReranker({ host: server.url }).pick(query, window, new AbortController().signal))).reason,
    'unparsable',
  );
  server.setFault({ kind: 'malformedJson' });
  assert.equal((await failure(ollamaReranker({ host: server.url }).pick(query, window, new AbortController().signal))).reason, 'http');
  assert.equal((await failure(openAiReranker({ baseUrl: server.url }).pick(query, window, new AbortController().signal))).reason, 'http');
});

void test('HTTP 500 and a model that is not pulled', async () => {
  server.setFault({ kind: 'http500' });
  assert.equal((await failure(ollamaReranker({ host: server.url }).pick(query, window, new AbortController().signal))).reason, 'http');
  assert.equal((await failure(openAiReranker({ baseUrl: server.url }).pick(query, window, new AbortController().signal))).reason, 'http');
  server.setFault(undefined);
  assert.equal(
    (await failure(ollamaReranker({ host: server.url, model: 'qwen3:0.6b' }).pick(query, window, new AbortController().signal))).reason,
    'model',
  );
  assert.equal(
    (await failure(openAiReranker({ baseUrl: server.url, model: 'qwen3:0.6b' }).pick(query, window, new AbortController().signal))).reason,
    'model',
  );
  server.setFault({ kind: 'notPulled' });
  assert.equal((await failure(ollamaReranker({ host: server.url }).pick(query, window, new AbortController().signal))).reason, 'model');
});

void test('a 30 s stall is cancelled promptly by the AbortSignal', async () => {
  server.setFault({ kind: 'stall', seconds: 30 });
  for (const reranker of [
    ollamaReranker({ host: server.url, timeoutMs: 60_000 }),
    openAiReranker({ baseUrl: server.url, timeoutMs: 60_000 }),
  ]) {
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(reranker.pick(query, window, controller.signal), (e) => isCancellationError(e));
    assert.ok(performance.now() - started < 2000, `took ${performance.now() - started} ms`);
  }
  // Through the whole rerank as well: cancellation propagates, it is not a fallback.
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const docs = Array.from({ length: 31 }, (_, i) => ({ id: `d${i}`, text: `x${i}` }));
  const started = performance.now();
  await assert.rejects(bestFitRerank(query, docs, ollamaReranker({ host: server.url, timeoutMs: 60_000 }), {}, controller.signal), (e) =>
    isCancellationError(e),
  );
  assert.ok(performance.now() - started < 2000);
});

void test('a stall past the call timeout falls back, and the later windows skip the reranker', async () => {
  server.setFault({ kind: 'stall', seconds: 30 });
  const docs = Array.from({ length: 31 }, (_, i) => ({ id: `d${i}`, text: `x${i}` }));
  const started = performance.now();
  const result = await bestFitRerank(
    query,
    docs,
    ollamaReranker({ host: server.url, timeoutMs: 150 }),
    { topU: 10 },
    new AbortController().signal,
  );
  assert.ok(performance.now() - started < 2000);
  assert.deepEqual(
    result.trace.after,
    docs.slice(0, 10).map((d) => d.id),
  );
  assert.equal(result.trace.rerankerCalls, 1);
  assert.equal(result.trace.calls[0]!.status, 'fallback');
  assert.match(result.trace.calls[0]!.reason ?? '', /^timeout/);
  assert.ok(result.trace.calls.slice(1).every((c) => c.status === 'skipped'));
});

void test('connection refused: the server is down', async () => {
  const down = await startOllamaTestServer(model);
  const url = down.url;
  await down.close();
  assert.match(
    JSON.stringify(await failure(ollamaReranker({ host: url }).pick(query, window, new AbortController().signal))),
    /unavailable/,
  );
  assert.equal((await failure(openAiReranker({ baseUrl: url }).pick(query, window, new AbortController().signal))).reason, 'unavailable');
  const docs = Array.from({ length: 31 }, (_, i) => ({ id: `d${i}`, text: `x${i}` }));
  const result = await bestFitRerank(query, docs, ollamaReranker({ host: url }), { topU: 10 }, new AbortController().signal);
  assert.deepEqual(
    result.trace.after,
    docs.slice(0, 10).map((d) => d.id),
  );
  assert.equal(result.trace.rerankerCalls, 1);
  assert.match(result.trace.degraded ?? '', /unavailable/);
});

void test('the test server answers the Ollama model endpoints', async () => {
  const tags = (await (await fetch(`${server.url}/api/tags`)).json()) as { models: Array<{ name: string }> };
  assert.deepEqual(
    tags.models.map((m) => m.name),
    ['qwen3:8b'],
  );
  const show = await fetch(`${server.url}/api/show`, { method: 'POST', body: JSON.stringify({ model: 'qwen3:8b' }) });
  assert.equal(show.status, 200);
  const missing = await fetch(`${server.url}/api/show`, { method: 'POST', body: JSON.stringify({ model: 'other' }) });
  assert.equal(missing.status, 404);
  const pull = await fetch(`${server.url}/api/pull`, { method: 'POST', body: JSON.stringify({ model: 'other', stream: false }) });
  assert.deepEqual(await pull.json(), { status: 'success' });
  assert.ok(server.models.has('other'));
  server.models.delete('other');
});

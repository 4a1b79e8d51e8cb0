// The real language server over stdio, driven by a JSON-RPC client, completing through an
// Ollama-compatible server on 127.0.0.1 that the embedded model answers.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, fixturesDir } from '../helpers/paths';
import { startLsp, startModelServerThread, type LspSession, type RemoteModelServer } from './lspHarness';
import {
  MemoryRequest,
  SetRerankerRequest,
  type InlineCompletionItem,
  type MemoryResult,
  type SetRerankerResult,
} from '../../src/protocol/protocol';
import { typeIntoLine, type TypingRun } from '../faults/helpers';
import { modelProblemLabel, statusBarView } from '../../src/client/statusBar';

const MODEL = 'coderag-lm:test';

function settings(url: string, extra: Record<string, unknown> = {}, experimental: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    debounceMs: 75,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 2000 },
    ollama: { host: url, completionModel: MODEL },
    rerank: { kind: 'none' },
    ...extra,
    experimental: {
      model: { maxNewTokens: 24 },
      ollama: { keepAlive: '5m' },
      // Unchecked: at this position the shipped model writes a keyword CheckoutService lacks (`lineno=`), which checking cuts.
      check: { mode: 'off' },
      ...experimental,
    },
  };
}

// app/main.py line 19 (0-based 18): `    service = CheckoutService(cart, gateway)`; the cursor before
// the second argument needs CheckoutService.__init__ from pyshop/services/checkout.py. (Right after
// `CheckoutService(` the shipped model, through a plain Ollama prompt, breaks the line first, and
// a line completion that begins with a line break is empty.)
const LINE = 18;
const COL = '    service = CheckoutService(cart, '.length;

void describe('language server over stdio', () => {
  let model: RemoteModelServer;
  let lsp: LspSession;
  let repo: { path: string; cleanup: () => void };
  let mainUri = '';

  before(async () => {
    repo = copyFixture('pyshop');
    model = await startModelServerThread([MODEL]);
    lsp = await startLsp(repo.path, settings(model.url));
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    // The dense path embeds in the background, pausing while requests run: start from the steady state.
    await lsp.waitForDense();
    mainUri = lsp.open(join(repo.path, 'app', 'main.py'), 'python');
  });

  after(async () => {
    await lsp?.close();
    await model?.close();
    repo?.cleanup();
  });

  void test('an inline completion at a cursor needing a cross-file definition: item returned, the prompt holds the definition', async () => {
    const items = await lsp.complete(mainUri, LINE, COL);
    const explained = await lsp.explain(items[0]?.traceId);
    assert.ok(explained, 'explain returns the trace');
    const trace = explained.trace;
    assert.ok(
      items.length === 1,
      `one item (trace: ${JSON.stringify({ error: trace.error, raw: trace.model?.raw, completion: trace.completion })})`,
    );
    assert.equal(typeof items[0]?.insertText, 'string');
    assert.deepEqual(items[0]?.range, { start: { line: LINE, character: COL }, end: { line: LINE, character: COL } });
    assert.equal(trace.model?.backend, 'ollama');
    assert.match(trace.prompt?.text ?? '', /def __init__\(self, cart: Cart, gateway: PaymentGateway \| None = None\)/);
    assert.match(trace.prompt?.text ?? '', /# pyshop\/services\/checkout\.py/);
    assert.ok(trace.retrieval && trace.retrieval.candidates.some((c) => c.id.startsWith('pyshop/services/checkout.py')));
    assert.deepEqual(
      trace.stages.map((s) => s.stage),
      ['query', 'retrieve', 'rerank', 'prompt', 'generate', 'postprocess'],
    );
    assert.match(explained.markdown, /## Retrieval/);
    assert.match(explained.markdown, /## Prompt/);
    const status = await lsp.status();
    assert.equal(status.model.state, 'ok');
    assert.equal(status.state, 'ready');
    assert.ok((status.stats.memory?.rssMB ?? 0) > (status.stats.memory?.heapUsedMB ?? Infinity), JSON.stringify(status.stats.memory));
    // coderag/memory: collects garbage first only where the server runs with --expose-gc (bench:server).
    const memory = (await lsp.connection.sendRequest(MemoryRequest.method, { collectGarbage: true })) as MemoryResult;
    assert.equal(memory.collected, false);
    assert.ok(memory.rssMB > memory.heapUsedMB && memory.heapUsedMB > 0 && memory.externalMB > 0, JSON.stringify(memory));
  });

  void test('typing through the shown suggestion is served from the cache without a model call', async () => {
    const text = readFileSync(join(repo.path, 'app', 'main.py'), 'utf8');
    const lines = text.split('\n');
    const line = lines[LINE] ?? '';
    const before = line.slice(0, COL);
    const after = line.slice(COL);
    const items = await lsp.complete(mainUri, LINE, COL);
    const shown = typeof items[0]?.insertText === 'string' ? items[0].insertText : '';
    assert.ok(shown.length >= 2, `a suggestion of at least two characters to type through, got ${JSON.stringify(shown)}`);
    await model.resetCounters();
    const callsBefore = (await lsp.status()).stats.modelCalls;
    let version = 10;
    for (let k = 1; k <= Math.min(3, shown.length - 1); k++) {
      lines[LINE] = before + shown.slice(0, k) + after;
      lsp.change(mainUri, lines.join('\n'), version++);
      const t0 = performance.now();
      const next = await lsp.complete(mainUri, LINE, COL + k);
      const ms = performance.now() - t0;
      assert.equal(next[0]?.insertText, shown.slice(k), `typing ${k} characters through`);
      assert.equal(next[0]?.fromCache, true);
      assert.ok(ms < 50, `cache hit answered in ${ms.toFixed(1)} ms`);
    }
    assert.equal((await model.stats()).calls, 0, 'no model request while typing through');
    assert.equal((await lsp.status()).stats.modelCalls, callsBefore);
    lines[LINE] = line;
    lsp.change(mainUri, lines.join('\n'), version++);
  });

  void test('a file created on disk (watched-file event) joins the index without a rebuild', async () => {
    const before = (await lsp.status()).folders[0]?.items ?? 0;
    const file = join(repo.path, 'pyshop', 'loyalty.py');
    writeFileSync(
      file,
      'def loyalty_discount(cart, years: int) -> float:\n    return min(0.05 * years, 0.25) * cart.total\n\nLOYALTY_CAP = 0.25\n',
    );
    lsp.fileEvent(file, 1);
    const status = await lsp.waitForStatus((s) => (s.folders[0]?.items ?? 0) >= before + 2, 10_000);
    assert.equal(status.folders[0]?.items, before + 2);
  });

  void test('set reranker: the next request reranks with the LLM reranker (Ollama, answered by the embedded model); the status shows it', async () => {
    lsp.configure(settings(model.url, { rerank: { kind: 'none', llmModel: MODEL } }, { rerank: { timeoutMs: 30_000, topU: 2 } }));
    await new Promise((r) => setTimeout(r, 200));
    const set = (await lsp.connection.sendRequest(SetRerankerRequest.method, { reranker: 'llm' })) as SetRerankerResult;
    assert.equal(set.reranker, 'llm');
    assert.ok(set.available.includes('llm'));
    await lsp.waitForStatus((s) => s.reranker.current === 'llm', 5000);
    const chats = (await model.stats()).paths.filter((p) => p === '/api/chat').length;
    await lsp.complete(mainUri, 16, 20);
    const trace = (await lsp.explain())?.trace;
    assert.ok(trace?.rerank, JSON.stringify(trace?.stages));
    assert.match(trace.rerank.reranker, /ollama/);
    assert.ok(trace.rerank.calls.length > 0, JSON.stringify(trace.rerank));
    assert.equal(trace.rerank.picked.length, 2);
    assert.ok((await model.stats()).paths.filter((p) => p === '/api/chat').length > chats, 'the reranker asked the model server');
    await lsp.connection.sendRequest(SetRerankerRequest.method, { reranker: 'none' });
    lsp.configure(settings(model.url));
    await lsp.waitForStatus((s) => s.reranker.current === 'none', 5000);
  });

  void test('rebuild index reports work-done progress and completes', async () => {
    const token = 'rebuild-1';
    const result = await lsp.rebuild(token);
    assert.equal(result.folders.length, 1);
    assert.equal(result.folders[0]?.state, 'ready');
    assert.ok((result.folders[0]?.items ?? 0) > 20);
    const mine = lsp.progress.filter((p) => p.token === token).map((p) => p.value.kind);
    assert.equal(mine[0], 'begin');
    assert.equal(mine.at(-1), 'end');
    assert.ok(mine.includes('report'), `progress reports: ${mine.join(',')}`);
  });

  for (const [index, fault] of [
    { name: 'connection refused', state: 'unreachable', apply: () => model.down(), clear: () => model.up() },
    {
      name: 'a 30 s stall',
      state: 'timeout',
      apply: () => model.setFault({ kind: 'stall', seconds: 30 }),
      clear: () => model.setFault(undefined),
    },
    { name: 'HTTP 500', state: 'httpStatus', apply: () => model.setFault({ kind: 'http500' }), clear: () => model.setFault(undefined) },
    {
      name: 'malformed JSON',
      state: 'malformed',
      apply: () => model.setFault({ kind: 'malformedJson' }),
      clear: () => model.setFault(undefined),
    },
    {
      name: 'a model that is not pulled',
      state: 'modelMissing',
      apply: () => model.setFault({ kind: 'notPulled' }),
      clear: () => model.setFault(undefined),
    },
  ].entries()) {
    void test(`model server fault: ${fault.name} -> quick empty answer, status says so, next request works when it is back`, async () => {
      await fault.apply();
      try {
        // Cursors the cache has not seen (inside line 20), a different one per fault.
        const t0 = performance.now();
        const items = await lsp.complete(mainUri, 19, 8 + 4 * index);
        const ms = performance.now() - t0;
        assert.equal(items.length, 0);
        assert.ok(ms < 4000, `ended in ${ms.toFixed(0)} ms`);
        const status = await lsp.waitForStatus((s) => s.model.state === fault.state, 5000);
        assert.equal(status.state, 'modelProblem');
        assert.ok(status.message.length > 0);
        // What the user sees: the problem in the status-bar text, reason and remedy in the tooltip.
        const view = statusBarView(status, true);
        assert.equal(view.text, `$(warning) CodeRAG: ${modelProblemLabel(fault.state as typeof status.model.state, 'ollama')}`);
        assert.ok(status.model.action, 'the status says what to do');
        assert.ok(view.tooltip.includes(status.message) && view.tooltip.includes(status.model.action), view.tooltip);
      } finally {
        await fault.clear();
      }
      const explained = await lsp.explain();
      assert.ok(explained);
      const items = await lsp.complete(mainUri, 19, 10 + 4 * index);
      const last = await lsp.explain();
      assert.ok(last?.trace.model, `the model answered again (${JSON.stringify(last?.trace.error)})`);
      assert.equal(last.trace.error, undefined);
      assert.ok(items.length <= 1);
      const status = await lsp.waitForStatus((s) => s.model.state === 'ok', 5000);
      assert.notEqual(status.state, 'modelProblem');
      assert.doesNotMatch(statusBarView(status, true).text, /warning|model/);
    });
  }

  void test('connection refused, then the server is back: the status clears by itself, with no completion asked', async () => {
    await model.down();
    try {
      assert.equal((await lsp.complete(mainUri, 19, 30)).length, 0);
      await lsp.waitForStatus((s) => s.model.state === 'unreachable', 5000);
    } finally {
      await model.up();
    }
    // The first check comes 5 s after the problem (then 10, 20, … at most a minute apart).
    let status = await lsp.status();
    const calls = status.stats.modelCalls;
    assert.equal(status.model.state, 'unreachable');
    for (const deadline = performance.now() + 15_000; status.model.state !== 'ok' && performance.now() < deadline;) {
      await new Promise((r) => setTimeout(r, 250));
      status = await lsp.status();
    }
    assert.equal(status.model.state, 'ok', `the status still says ${status.model.state} 15 s after the server came back`);
    assert.equal(status.stats.modelCalls, calls, 'no completion request cleared it');
    assert.doesNotMatch(statusBarView(status, true).text, /warning|model/);
  });

  /** Type `text` into line 21 of app/main.py one character per `intervalMs`, requesting a completion after each. */
  const typeLine = (text: string, keystrokes: number, intervalMs: number, firstVersion: number): Promise<TypingRun> =>
    typeIntoLine(lsp, mainUri, readFileSync(join(repo.path, 'app', 'main.py'), 'utf8'), 20, text, { keystrokes, intervalMs, firstVersion });

  void test('rapid typing: 200 requests at 20/s -> at most one model request in flight, a completion for the last state', async () => {
    const target =
      '    total = service.checkout().total + len(gateway.charges) * 2  # typed by the test, character by character ' + '.'.repeat(120);
    lsp.configure(
      settings(
        model.url,
        { debounceMs: 75, model: { provider: 'ollama', family: 'plain', timeoutMs: 15_000 } },
        { model: { maxNewTokens: 8 } },
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    await model.resetCounters();
    const before = await lsp.status();
    const run = await typeLine(target, 200, 50, 1000);
    const trace = (await lsp.explain())?.trace;
    const stats = await model.stats();
    const status = await lsp.status();
    process.stdout.write(
      `# rapid typing, 200 keystrokes at 20/s (debounce 75 ms): sent in ${run.sendMs.toFixed(0)} ms, last answer ${run.answerMs.toFixed(0)} ms later; ${stats.calls} model requests; at most ${status.stats.maxModelInFlight} open at the language server, ${stats.maxAnswered} answered at once at the model server (${stats.maxOpen} open)\n`,
    );
    assert.ok(trace?.model, `the last request reached the model: ${JSON.stringify(trace?.error)}`);
    assert.ok(trace.prompt?.text.includes(target.slice(0, run.lastCol)), 'the prompt holds the last state');
    assert.equal(
      trace.completion ?? '',
      (run.results.at(-1)?.[0]?.insertText as string | undefined) ?? '',
      'the answer to the last request is the completion for the last state',
    );
    assert.ok(
      run.results.slice(0, -1).every((r) => r.length === 0),
      'superseded requests answer nothing',
    );
    assert.ok(status.stats.maxModelInFlight <= 1);
    assert.ok(stats.maxAnswered <= 1);
    assert.ok(stats.calls <= 3, `model requests: ${stats.calls}`);
    assert.ok(status.stats.requests - before.stats.requests >= 200);
    lsp.configure(settings(model.url));
  });

  void test('typing slower than the debounce: requests reach the model and overlap there, still one in flight, the last state completed', async () => {
    // 40 keystrokes at 8/s with a 40 ms debounce and a model-free query: each keystroke's request
    // reaches the model, and the next one must abort it first.
    lsp.configure(
      settings(
        model.url,
        { debounceMs: 40, model: { provider: 'ollama', family: 'plain', timeoutMs: 15_000 } },
        { query: { strategy: 'last10' }, model: { maxNewTokens: 8 } },
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    await model.resetCounters();
    const target = '    receipts = [service.checkout() for _ in range(3)]';
    const run = await typeLine(target, 40, 125, 2000);
    const trace = (await lsp.explain())?.trace;
    const stats = await model.stats();
    const status = await lsp.status();
    process.stdout.write(
      `# typing at 8/s (debounce 40 ms): ${stats.calls} model requests for 40 keystrokes, at most ${status.stats.maxModelInFlight} open at the language server, ${stats.maxAnswered} answered at once at the model server (${stats.maxOpen} open); last answer ${run.answerMs.toFixed(0)} ms after the last keystroke\n`,
    );
    assert.ok(stats.calls >= 2, `requests reached the model: ${stats.calls}`);
    assert.equal(status.stats.maxModelInFlight, 1);
    assert.equal(stats.maxAnswered, 1);
    assert.ok(trace?.model, `the last request reached the model: ${JSON.stringify(trace?.error)}`);
    assert.ok(trace.prompt?.text.includes(target.slice(0, run.lastCol)));
    lsp.configure(settings(model.url));
  });

  void test('similar code (ProCC): no code windows on auto for a Python folder with a model server; built once coderag.similar.mode asks for similar code, then the top-1 window enters the prompt and the trace', async () => {
    await lsp.waitForDense();
    await new Promise((r) => setTimeout(r, 500));
    // The default (`auto`) turns similar code on only for Java with the embedded model: after every request above,
    // the log's absence of the windows' lines shows no embedding run (and its memory).
    assert.ok(!lsp.logs.some((l) => /similar code (ready|for .* is off)/.test(l)), `no code windows on auto here:\n${lsp.logs.join('\n')}`);
    assert.deepEqual(
      (await lsp.status()).folders.map((f) => f.similar?.state),
      ['off'],
    );
    lsp.configure(settings(model.url, { similar: { mode: 'bandit' } }));
    const built = await lsp.waitForStatus(
      (s) => s.folders.every((f) => f.similar?.state === 'ready' || f.similar?.state === 'failed'),
      60_000,
    );
    const similarBuild = built.folders[0]?.similar;
    assert.equal(similarBuild?.state, 'ready', JSON.stringify(built.folders));
    assert.ok(similarBuild.windows > 0, JSON.stringify(similarBuild));
    const items = await lsp.complete(mainUri, LINE, COL);
    const trace = (await lsp.explain(items[0]?.traceId))?.trace;
    // The workspace folder's bandit (the learning feature's) chooses among the three perspectives and none.
    const similar = trace?.similar;
    assert.equal(similar?.chosenBy, 'bandit');
    assert.deepEqual(
      similar?.perspectives.map((p) => p.name),
      ['lexical', 'hypothetical', 'summary'],
    );
    assert.equal(similar?.features.length, 7);
    assert.deepEqual(Object.keys(similar.scores ?? {}).sort(), ['hypothetical', 'lexical', 'none', 'summary']);
    const chosen = similar.perspectives.find((p) => p.name === similar.arm);
    if (chosen?.status === 'ok' && chosen.top) {
      assert.match(trace?.prompt?.text ?? '', /Compare this snippet from /);
    } else {
      // On a loaded machine a perspective's editor budget can run out: reported, and no window enters.
      assert.ok(similar.arm === 'none' || chosen?.status !== 'ok', JSON.stringify(similar.perspectives));
    }
    lsp.configure(settings(model.url));
  });

  void test('the server overhead per request (outside the model and retrieval) is recorded', async () => {
    const status = await lsp.status();
    assert.ok(status.stats.overheadMs, 'overhead samples exist');
    assert.ok(status.stats.cacheHitMs, 'cache-hit samples exist');
    process.stdout.write(
      `# server overhead per request outside model and retrieval: median ${status.stats.overheadMs.median.toFixed(2)} ms, p95 ${status.stats.overheadMs.p95.toFixed(2)} ms over ${status.stats.overheadMs.samples} requests; cache hits median ${status.stats.cacheHitMs.median.toFixed(2)} ms, p95 ${status.stats.cacheHitMs.p95.toFixed(2)} ms\n`,
    );
  });
});

void describe('language server: untrusted and multi-root workspaces', () => {
  void test('an untrusted workspace indexes nothing, completes nothing, and the status says why', async () => {
    const repo = copyFixture('pyshop');
    const lsp = await startLsp(repo.path, { model: { provider: 'embedded' } }, { trusted: false });
    try {
      const status = await lsp.waitForStatus((s) => s.state === 'untrusted', 10_000);
      assert.match(status.message, /not trusted/);
      assert.equal(status.completionsEnabled, false);
      assert.ok(status.folders.every((f) => f.state === 'disabled'));
      const uri = lsp.open(join(repo.path, 'app', 'main.py'), 'python');
      assert.deepEqual(await lsp.complete(uri, LINE, COL), []);
      assert.deepEqual((await lsp.rebuild()).folders, []);
    } finally {
      await lsp.close();
      repo.cleanup();
    }
  });

  void test('a multi-root workspace gets one index per folder', async () => {
    const lsp = await startLsp([join(fixturesDir, 'pyshop'), join(fixturesDir, 'javashop')], {
      model: { provider: 'embedded' },
      rerank: { kind: 'none' },
    });
    try {
      const status = await lsp.waitForStatus((s) => s.folders.length === 2 && s.folders.every((f) => f.state === 'ready'));
      assert.ok(
        status.folders.every((f) => (f.items ?? 0) > 10),
        JSON.stringify(status.folders),
      );
      assert.notEqual(status.folders[0]?.items, status.folders[1]?.items);
    } finally {
      await lsp.close();
    }
  });
});

// Faults of the model server, observed as a user would: through the real language server over
// stdio (any LSP editor's transport) and through the CLI. The Ollama-compatible test server
// records every request it receives.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, tempDir } from '../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce, startLsp, type LspSession } from '../server/lspHarness';
import { OpenAICompatibleClient } from '../../src/engine/generate/OpenAICompatibleClient';
import { isModelClientError } from '../../src/engine/generate/types';
import { SetApiKeyNotification } from '../../src/protocol/protocol';
import { runCli } from './cliRun';

const MODEL = 'coderag-lm:test';
// app/main.py line 19 (0-based 18), after `    service = CheckoutService(`.
const LINE = 18;
const COL = '    service = CheckoutService('.length;

/** What the fake model answers next (a function of nothing: the tests set it). */
let answer = 'cart, gateway, gateway=gateway';

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref()),
  ]);
}

void describe('model-server faults through the language server over stdio', () => {
  let server: OllamaTestServer;
  let lsp: LspSession;
  let uri = '';

  before(async () => {
    server = await startOllamaTestServer(() => Promise.resolve({ text: answer }), { models: [MODEL, 'qwen3:8b'] });
    lsp = await startLsp(join(fixturesDir, 'pyshop'), {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
      ollama: { host: server.url, completionModel: MODEL },
      rerank: { kind: 'none' },
      experimental: { model: { maxNewTokens: 24 }, ollama: { keepAlive: '5m' }, query: { strategy: 'last10' }, cache: { size: 0 } },
    });
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    uri = lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python');
  });

  after(async () => {
    await lsp?.close();
    await server?.close();
  });

  void test('an HTTP 500 with a plain-text body leaves the LSP stream intact: the next request is answered', async () => {
    server.setFault({ kind: 'http500', text: 'upstream exploded' });
    const failed = await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'the request during the 500');
    assert.deepEqual(failed, []);
    server.setFault(undefined);
    answer = 'cart, gateway, gateway=gateway';
    const items = await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'the request after the 500');
    const explained = await lsp.explain();
    assert.equal(
      items.length,
      1,
      `the next completion is shown (trace: ${JSON.stringify({ error: explained?.trace.error, raw: explained?.trace.model?.raw, stages: explained?.trace.stages })})`,
    );
    const status = await withTimeout(lsp.status(), 5000, 'getStatus');
    assert.equal(status.model.state, 'ok');
  });

  void test('a 5 MB answer: the ghost text is capped, the request ends quickly, the server does not hold the answer', async () => {
    // No piece repeats (a repeated one is a decoding loop, which the junk filters cut whole).
    answer = 'cart, gateway, ' + Array.from({ length: 350_000 }, (_, i) => `gateway=${i}, `).join('');
    assert.ok(answer.length > 5_000_000);
    const before = await lsp.status();
    const start = performance.now();
    const items = await withTimeout(lsp.complete(uri, LINE, COL), 30_000, 'the 5 MB answer');
    const ms = performance.now() - start;
    const after = await lsp.status();
    const text = String(items[0]?.insertText ?? '');
    assert.equal(items.length, 1);
    assert.ok(text.startsWith('cart, gateway, gateway=0, gateway=1, '), text.slice(0, 80));
    assert.ok(text.length <= 4000, `ghost text of ${text.length} characters`);
    const explained = await lsp.explain(items[0]?.traceId);
    assert.ok((explained?.trace.model?.raw.length ?? Infinity) <= 64 * 1024, 'the model client kept at most 64 KiB');
    assert.equal(explained?.trace.model?.stoppedBy, 'length');
    const rss = (s: typeof before): number => (s.stats as { memory?: { rssMB: number } } | undefined)?.memory?.rssMB ?? 0;
    process.stdout.write(`# 5 MB answer: ${ms.toFixed(0)} ms, server RSS ${rss(before)} -> ${rss(after)} MB\n`);
    // A sanity bound, not a measurement: reading the whole answer into the ghost text and cache cost +210 MB.
    assert.ok(rss(after) - rss(before) < 64, `RSS grew ${rss(after) - rss(before)} MB`);
    // Typing on serves the capped text (the cache holds only what was shown).
    answer = 'cart, gateway, gateway=gateway';
  });

  void test('escape sequences, control characters and bidi overrides in the answer never reach the ghost text or the trace', async () => {
    answer = 'cart, \x1b[31mgate\x1b[0mway\x1b]8;;http://example.com/x\x07, \u202egateway\x00=\x08gateway\u2066\r\x9b2J\x7f';
    const items = await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'the answer with control characters');
    assert.equal(items[0]?.insertText, 'cart, gateway, gateway=gateway');
    const explained = await lsp.explain(items[0]?.traceId);
    const control = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
    assert.ok(!control.test(explained?.markdown ?? ''), 'the trace view shows no control character');
    answer = 'cart, gateway, gateway=gateway';
  });
});

void describe('model-server faults through the CLI', () => {
  void test('coderag complete --json prints only JSON when the model server answers HTTP 500 with a text body', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    const cache = tempDir();
    try {
      server.setFault({ kind: 'http500', text: 'upstream exploded' });
      const r = await runCli([
        'complete',
        join(fixturesDir, 'pyshop'),
        `app/main.py:${LINE + 1}:${COL + 1}`,
        '--provider',
        'ollama',
        '--model',
        MODEL,
        '--ollama-host',
        server.url,
        '--query',
        'last10',
        '--no-dense',
        '--index-dir',
        cache.path,
        '--json',
      ]);
      assert.equal(r.code, 1, r.stderr);
      const result = JSON.parse(r.stdout) as { items: unknown[]; trace: { error?: { stage: string; kind: string } } };
      assert.deepEqual(result.items, []);
      assert.equal(result.trace.error?.stage, 'generate');
      assert.equal(result.trace.error?.kind, 'httpStatus');
    } finally {
      cache.cleanup();
      await server.close();
    }
  });

  void test('a model server that never answers: the check and the generation each report their own limit, the stage once', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    server.setFault({ kind: 'stall', seconds: 600 });
    const cache = tempDir();
    try {
      const r = await runCli([
        'complete',
        join(fixturesDir, 'pyshop'),
        `app/main.py:${LINE + 1}:${COL + 1}`,
        '--provider',
        'ollama',
        '--model',
        MODEL,
        '--ollama-host',
        server.url,
        '--query',
        'last10',
        '--no-dense',
        '--index-dir',
        cache.path,
        '--timeout-ms',
        '6000',
      ]);
      process.stdout.write(`# never-answering server: coderag complete ended in ${(r.ms / 1000).toFixed(1)} s\n`);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        new RegExp(`warning: list models: no answer from Ollama at ${server.url.replace(/\./g, '\\.')} within 5000 ms`),
      );
      assert.match(
        r.stdout,
        new RegExp(
          `^No completion at app/main\\.py:${LINE + 1} \\(generate: no answer from Ollama at ${server.url.replace(/\./g, '\\.')} within 6000 ms\\)`,
        ),
      );
      assert.doesNotMatch(r.stdout + r.stderr, /generate: generate:/);
      assert.ok(r.ms < 60_000, 'bounded by the two limits');
    } finally {
      cache.cleanup();
      await server.close();
    }
  });

  void test('a redirect from the model server is not followed: the other server receives nothing, from the completion model or the LLM reranker', async () => {
    buildOnce();
    const elsewhere = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL, 'qwen3:8b'] });
    const redirector = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL, 'qwen3:8b'] });
    redirector.setFault({ kind: 'redirect', to: elsewhere.url });
    const cache = tempDir();
    try {
      const common = [
        'complete',
        join(fixturesDir, 'pyshop'),
        `app/main.py:${LINE + 1}:${COL + 1}`,
        '--model',
        MODEL,
        '--query',
        'last10',
        '--no-dense',
        '--index-dir',
        cache.path,
        '--json',
      ];
      const ollama = await runCli([...common, '--provider', 'ollama', '--ollama-host', redirector.url, '--reranker', 'llm']);
      const openai = await runCli([...common, '--provider', 'openai', '--openai-url', redirector.url]);
      assert.deepEqual(elsewhere.requests, [], 'nothing reached the redirect target');
      const paths = new Set(redirector.requests.map((r) => r.path));
      for (const p of ['/api/tags', '/api/generate', '/api/chat', '/v1/models', '/v1/completions']) assert.ok(paths.has(p), `asked ${p}`);
      for (const r of [ollama, openai]) {
        const result = JSON.parse(r.stdout) as { items: unknown[]; trace: { error?: { message: string } } };
        assert.deepEqual(result.items, []);
        assert.match(
          result.trace.error?.message ?? '',
          new RegExp(`redirect \\(HTTP 307\\) to ${elsewhere.url.replace(/[.]/g, '\\.')}; not followed`),
        );
      }
    } finally {
      cache.cleanup();
      await redirector.close();
      await elsewhere.close();
    }
  });
});

void describe('model-server faults at the model client', () => {
  void test('an OpenAI-compatible server answering 5 MB: reading stops at the cap and the request fails fast with the reason', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'y'.repeat(5_000_000) }), { models: [MODEL] });
    try {
      const client = new OpenAICompatibleClient({ baseUrl: server.url, model: MODEL, timeoutMs: 10_000 });
      const start = performance.now();
      await assert.rejects(
        client.generate({ prompt: 'x = ', maxNewTokens: 8, stop: [] }, new AbortController().signal),
        (e: unknown) => isModelClientError(e) && /exceeded 256 KiB; stopped reading/.test(e.message),
      );
      process.stdout.write(`# 5 MB OpenAI answer refused in ${(performance.now() - start).toFixed(0)} ms\n`);
    } finally {
      await server.close();
    }
  });
});

void describe("the OpenAI-compatible API key comes from the client's secret storage, never from settings", () => {
  void test('initializationOptions.openaiApiKey is sent as the bearer token; the settings key is ignored with a warning; a key change applies to the next request', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, gateway=gateway' }), { models: [MODEL] });
    const settings = {
      debounceMs: 0,
      model: { provider: 'openai', family: 'plain', timeoutMs: 5000 },
      openai: { baseUrl: server.url, model: MODEL, apiKey: 'from-a-repository-settings-file' },
      rerank: { kind: 'none' },
      experimental: { model: { maxNewTokens: 24 }, query: { strategy: 'last10' }, cache: { size: 0 } },
    };
    const lsp = await startLsp(join(fixturesDir, 'pyshop'), settings, { initializationOptions: { openaiApiKey: 'secret-from-storage' } });
    try {
      await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
      const uri = lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python');
      assert.equal((await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'completion')).length, 1);
      const completions = (): typeof server.requests => server.requests.filter((r) => r.path === '/v1/completions');
      assert.equal(completions().at(-1)?.authorization, 'Bearer secret-from-storage');
      assert.ok(
        !server.requests.some((r) => r.authorization?.includes('from-a-repository-settings-file')),
        'the settings key is never sent',
      );
      assert.ok(
        lsp.logs.some((l) => /coderag\.openai\.apiKey is ignored/.test(l)),
        'the log says the setting is ignored',
      );
      await lsp.connection.sendNotification(SetApiKeyNotification.type, { apiKey: 'rotated-key' });
      await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'completion after the key change');
      assert.equal(completions().at(-1)?.authorization, 'Bearer rotated-key');
    } finally {
      await lsp.close();
      await server.close();
    }
  });
});

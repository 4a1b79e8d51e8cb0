// Faults of the model server, observed as a user would: through the real language server over
// stdio (any LSP editor's transport) and through the CLI. The Ollama-compatible test server
// records every request it receives.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, tempDir } from '../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce, startLsp, type LspSession } from '../server/lspHarness';
import { runCli } from './cliRun';

const MODEL = 'coderag-lm:test';
// app/main.py line 19 (0-based 18), after `    service = CheckoutService(`.
const LINE = 18;
const COL = '    service = CheckoutService('.length;

/** What the fake model answers next (a function of nothing: the tests set it). */
let answer = 'cart, gateway, audit=True';

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([work, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref())]);
}

void describe('model-server faults through the language server over stdio', () => {
  let server: OllamaTestServer;
  let lsp: LspSession;
  let uri = '';

  before(async () => {
    server = await startOllamaTestServer(() => Promise.resolve({ text: answer }), { models: [MODEL, 'qwen3:8b'] });
    lsp = await startLsp(join(fixturesDir, 'pyshop'), {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 5000, maxNewTokens: 24 },
      ollama: { host: server.url, completionModel: MODEL, keepAlive: '5m' },
      rerank: { kind: 'none' },
      query: { strategy: 'last10' },
      cache: { size: 0 },
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
    answer = 'cart, gateway, audit=True';
    const items = await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'the request after the 500');
    const explained = await lsp.explain();
    assert.equal(items.length, 1, `the next completion is shown (trace: ${JSON.stringify({ error: explained?.trace.error, raw: explained?.trace.model?.raw, stages: explained?.trace.stages })})`);
    const status = await withTimeout(lsp.status(), 5000, 'getStatus');
    assert.equal(status.model.state, 'ok');
  });
});

void describe('model-server faults through the CLI', () => {
  void test('coderag complete --json prints only JSON when the model server answers HTTP 500 with a text body', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    const cache = tempDir();
    try {
      server.setFault({ kind: 'http500', text: 'upstream exploded' });
      const r = await runCli(['complete', join(fixturesDir, 'pyshop'), `app/main.py:${LINE + 1}:${COL + 1}`, '--provider', 'ollama', '--model', MODEL, '--ollama-host', server.url, '--query', 'last10', '--no-dense', '--index-dir', cache.path, '--json']);
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
});

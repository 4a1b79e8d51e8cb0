// Fault matrix, round 2 (README.md rows 4, 7, 9 and 10): main-thread stalls, terminal and log hygiene,
// limits and Java edits, observed as a user would: through the CLI, the language server over
// stdio, and the model clients against the Ollama-compatible test server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, fixturesDir, tempDir } from '../helpers/paths';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce, startLsp } from '../server/lspHarness';
import { OllamaClient } from '../../src/engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../../src/engine/generate/OpenAICompatibleClient';
import { isModelClientError } from '../../src/engine/generate/types';
import { SetApiKeyNotification } from '../../src/protocol/protocol';
import { statusBarView } from '../../src/client/statusBar';
import { runCli } from './cliRun';

const MODEL = 'coderag-lm:test';
// app/main.py line 19 (0-based 18), after `    service = CheckoutService(`.
const LINE = 18;
const COL = '    service = CheckoutService('.length;
/** What a terminal would obey: ESC, CSI, BEL, CR and the other C0/C1 controls (\n and \t aside). */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
const HOSTILE = 'boom \x1b]0;pwned\x07\x1b[2J\x1b[31mred\x1b[0m\r\x9b2Jdone';

function completeArgs(url: string, index: string, ...extra: string[]): string[] {
  return [
    'complete',
    join(fixturesDir, 'pyshop'),
    `app/main.py:${LINE + 1}:${COL + 1}`,
    '--model',
    MODEL,
    '--query',
    'last10',
    '--no-dense',
    '--index-dir',
    index,
    ...extra,
    ...(extra.includes('--provider') ? [] : ['--provider', 'ollama', '--ollama-host', url]),
  ];
}

void describe('item 7: text from a server never reaches a terminal raw', () => {
  void test('a streamed line that is not JSON, with escape codes: the ollama package\'s "invalid json" warning reaches stderr without them', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway' }), { models: [MODEL] });
    server.setFault({ kind: 'notJsonLine', line: HOSTILE });
    const cache = tempDir();
    try {
      const r = await runCli(completeArgs(server.url, cache.path));
      assert.match(r.stderr, /invalid json/);
      assert.doesNotMatch(r.stdout + r.stderr, CONTROL, JSON.stringify(r.stderr.slice(0, 400)));
    } finally {
      cache.cleanup();
      await server.close();
    }
  });

  void test("an HTTP 500 body with escape codes: coderag complete's trace and coderag rerank print it without them", async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL, 'qwen3:8b'] });
    server.setFault({ kind: 'http500', text: HOSTILE });
    const cache = tempDir();
    try {
      const complete = await runCli(completeArgs(server.url, cache.path));
      assert.equal(complete.code, 1, complete.stderr);
      assert.match(complete.stdout + complete.stderr, /HTTP 500/);
      assert.doesNotMatch(complete.stdout + complete.stderr, CONTROL, JSON.stringify((complete.stdout + complete.stderr).slice(0, 600)));
      const rerank = await runCli([
        'rerank',
        join(fixturesDir, 'pyshop'),
        `app/main.py:${LINE + 1}:${COL + 1}`,
        '--ollama',
        server.url,
        '--model',
        'qwen3:8b',
        '--index-dir',
        cache.path,
      ]);
      assert.match(rerank.stdout + rerank.stderr, /HTTP 500/);
      assert.doesNotMatch(rerank.stdout + rerank.stderr, CONTROL, JSON.stringify((rerank.stdout + rerank.stderr).slice(0, 600)));
    } finally {
      cache.cleanup();
      await server.close();
    }
  });

  void test('an API key with a line break is refused with a message that does not quote it (CLI), and never printed', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway' }), { models: [MODEL] });
    const cache = tempDir();
    try {
      const r = await runCli(completeArgs(server.url, cache.path, '--provider', 'openai', '--openai-url', server.url), {
        OPENAI_API_KEY: 'sk-SECRET-4242\r\nX-Injected: 1',
      });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /OPENAI_API_KEY: the API key contains a line break/);
      assert.doesNotMatch(r.stdout + r.stderr, /SECRET-4242|X-Injected/);
      assert.deepEqual(
        server.requests.filter((q) => q.path.startsWith('/v1/')),
        [],
        'nothing was sent',
      );
    } finally {
      cache.cleanup();
      await server.close();
    }
  });

  void test('an API key with a line break reaches the language server: not used, never in its log, status or Explain', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, audit=True' }), { models: [MODEL] });
    const settings = {
      debounceMs: 0,
      model: { provider: 'openai', family: 'plain', timeoutMs: 5000 },
      openai: { baseUrl: server.url, model: MODEL },
      rerank: { kind: 'none' },
      experimental: { model: { maxNewTokens: 24 }, query: { strategy: 'last10' }, cache: { size: 0 } },
    };
    const lsp = await startLsp(join(fixturesDir, 'pyshop'), settings, { initializationOptions: { openaiApiKey: 'sk-SECRET-4242\r\n' } });
    try {
      await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
      const uri = lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python');
      await lsp.complete(uri, LINE, COL);
      await lsp.connection.sendNotification(SetApiKeyNotification.type, { apiKey: 'sk-SECRET-4343\nX-Injected: 1' });
      await lsp.complete(uri, LINE, COL);
      const status = await lsp.status();
      const explained = await lsp.explain();
      const seen = [lsp.logs.join('\n'), JSON.stringify(status), statusBarView(status, true).tooltip, explained?.markdown ?? ''].join('\n');
      assert.doesNotMatch(seen, /SECRET-4242|SECRET-4343|X-Injected/);
      assert.match(lsp.logs.join('\n'), /API key is not used: the API key contains a line break/);
      assert.match(lsp.logs.join('\n'), /API key was not changed: the API key contains a line break/);
      assert.ok(!server.requests.some((q) => q.authorization?.includes('SECRET')), 'the key was never sent');
    } finally {
      await lsp.close();
      await server.close();
    }
  });
});

void describe('item 9: limits', () => {
  void test('--timeout-ms above 2^31-1 ms: the completion is made (the limit is the longest a timer takes, not 1 ms)', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway' }), { models: [MODEL] });
    const cache = tempDir();
    try {
      const r = await runCli([...completeArgs(server.url, cache.path), '--timeout-ms', '3000000000', '--json']);
      const result = JSON.parse(r.stdout) as { trace: { error?: { message: string }; model?: { raw: string } } };
      assert.equal(result.trace.error, undefined, r.stderr);
      assert.equal(result.trace.model?.raw, 'cart, gateway', 'the model answered');
    } finally {
      cache.cleanup();
      await server.close();
    }
  });

  void test('pulling a model whose progress stream runs past 256 KiB succeeds', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [] });
    server.setFault({ kind: 'longPull', bytes: 2 * 1024 * 1024 });
    try {
      const client = new OllamaClient({ host: server.url, model: 'big:latest' });
      let updates = 0;
      let last = '';
      await client.pull((p) => {
        updates++;
        last = p.status;
      }, new AbortController().signal);
      assert.equal(last, 'success');
      assert.ok(updates > 1000, `${updates} progress updates`);
    } finally {
      await server.close();
    }
  });

  void test('a connection cut mid-answer is reported as closed mid-answer, not as "not reachable" (Ollama and OpenAI-compatible)', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    server.setFault({ kind: 'cutMidAnswer' });
    try {
      const signal = new AbortController().signal;
      const request = { prompt: 'x = ', maxNewTokens: 8, stop: [] };
      for (const client of [
        new OllamaClient({ host: server.url, model: MODEL }),
        new OpenAICompatibleClient({ baseUrl: server.url, model: MODEL }),
      ]) {
        await assert.rejects(client.generate(request, signal), (e: unknown) => {
          assert.ok(isModelClientError(e));
          assert.equal(e.kind, 'closed', `${client.backend}: ${e.message}`);
          assert.match(e.message, /closed the connection mid-answer/);
          assert.doesNotMatch(e.message, /not reachable/);
          return true;
        });
      }
      // Before any answer, a refused connection is still "not reachable".
      await server.close();
      await assert.rejects(
        new OllamaClient({ host: server.url, model: MODEL }).generate(request, signal),
        (e: unknown) => isModelClientError(e) && e.kind === 'unreachable',
      );
    } finally {
      await server.close().catch(() => undefined);
    }
  });
});

void describe('item 4: a 300 KB hex literal on the cursor line does not stall the language server', () => {
  void test('a completion after a dot and inside a call on that line are answered, and a status request meanwhile too', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'checkout()' }), { models: [MODEL] });
    const settings = {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
      ollama: { host: server.url, completionModel: MODEL },
      experimental: { model: { maxNewTokens: 24 }, query: { strategy: 'last10' }, cache: { size: 0 } },
    };
    const lsp = await startLsp(join(fixturesDir, 'pyshop'), settings);
    try {
      await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
      const file = join(fixturesDir, 'pyshop', 'app', 'main.py');
      const hex = `0x${'A1B2C3D4E5F60789'.repeat(300_000 / 16)}`;
      const original = readFileSync(file, 'utf8');
      const bounded = <T>(work: Promise<T>, what: string): Promise<T> =>
        Promise.race([
          work,
          new Promise<T>((_, reject) =>
            setTimeout(() => reject(new Error(`${what}: no answer within 20 s (the event loop is stalled)`)), 20_000).unref(),
          ),
        ]);
      for (const [marker, line] of [
        [' + service.', `    receipt = ${hex} + service.`],
        [`CheckoutService(${hex}, `, `    service = CheckoutService(${hex}, `],
      ] as const) {
        const text = original.replace(
          marker.startsWith(' +') ? '    receipt = service.checkout()' : '    service = CheckoutService(cart, gateway)',
          line,
        );
        const uri = lsp.open(file, 'python', text);
        const row = text.slice(0, text.indexOf(line)).split('\n').length - 1;
        const done = bounded(lsp.complete(uri, row, line.length), `completion at ${marker.slice(0, 20)}`);
        await bounded(lsp.status(), 'a status request during the completion');
        await done;
      }
    } finally {
      await lsp.close();
      await server.close();
    }
  });
});

void describe('item 10: Java edits', () => {
  void test('5,000 nested blocks: the dataflow path runs (its depth is bounded), no stack overflow', async () => {
    buildOnce();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    const repo = tempDir();
    const cache = tempDir();
    try {
      mkdirSync(join(repo.path, 'src'));
      writeFileSync(
        join(repo.path, 'src', 'Deep.java'),
        `class Deep {\n  int x;\n  void f() {\n${'{'.repeat(5000)}\n int y = x;\n this.\n${'}'.repeat(5000)}\n  }\n}\n`,
      );
      const r = await runCli([
        'complete',
        repo.path,
        'src/Deep.java:6:7',
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
      assert.doesNotMatch(r.stdout + r.stderr, /call stack/i);
      const result = JSON.parse(r.stdout) as { trace: { retrieval?: { paths: Array<{ path: string; status: string }> } } };
      assert.equal(result.trace.retrieval?.paths.find((p) => p.path === 'dataflow')?.status, 'ok');
    } finally {
      repo.cleanup();
      cache.cleanup();
      await server.close();
    }
  });

  void test('a method saved mid-edit as `this.` keeps its class and the other members in the index', async () => {
    buildOnce();
    const copy = copyFixture('javashop');
    const cache = tempDir();
    try {
      const file = join(copy.path, 'src/main/java/com/example/shop/payment/StripeGateway.java');
      const lines = readFileSync(file, 'utf8').split('\n');
      const at = lines.findIndex((l) => l.includes('return charges;'));
      lines[at] = '        this.';
      writeFileSync(file, lines.join('\n'));
      const cls = await runCli(['kb', copy.path, '--name', 'StripeGateway', '--index-dir', cache.path, '--json']);
      assert.equal(cls.code, 0, cls.stderr);
      assert.equal((JSON.parse(cls.stdout) as { classes: unknown[] }).classes.length, 1, 'the class is indexed');
      // getCharges, the method being edited, may be missing; the class and the rest stay.
      for (const name of ['StripeGateway.apiKey', 'StripeGateway.charge', 'StripeGateway.name']) {
        const r = await runCli(['kb', copy.path, '--name', name, '--index-dir', cache.path, '--json']);
        assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      }
    } finally {
      copy.cleanup();
      cache.cleanup();
    }
  });
});

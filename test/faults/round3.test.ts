// The third hostile probe: what still got through the language server, the CLI and the model
// clients, observed as a user would (the CLI's output, the server over stdio, a real HTTP server).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyFixture, fixturesDir, tempDir } from '../helpers/paths';
import { indexFolderFor } from '../../src/engine/kb/store';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce, startLsp } from '../server/lspHarness';
import { runCli } from './cliRun';
import { OllamaClient } from '../../src/engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../../src/engine/generate/OpenAICompatibleClient';
import { isModelClientError } from '../../src/engine/generate/types';

const MODEL = 'coderag-lm:test';
/** What a terminal would obey: C0 (\n and \t aside), DEL, C1, and the bidi controls. */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
/** OSC 52 (writes the clipboard), a screen clear, an 8-bit CSI, BEL and a right-to-left override. */
const HOSTILE = '\x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b[2J \x9b31m \x07 \u202eevil';

/** A repository whose one file carries the hostile text in a function's body. */
function hostileRepo(): { path: string; cleanup: () => void } {
  const dir = tempDir('coderag-hostile-text-');
  const repo = join(dir.path, 'repo');
  mkdirSync(repo);
  writeFileSync(
    join(repo, 'paste.py'),
    `def paste_board(board):\n    # ${HOSTILE}\n    return board.strip()\n\n\ndef main():\n    text = paste_board("x")\n    return text\n`,
  );
  return { path: repo, cleanup: dir.cleanup };
}

void describe('item 1: repository text never reaches a terminal raw', () => {
  void test('coderag kb prints a function whose code holds OSC 52, CSI, C1, BEL and a bidi override with each written out visibly', async () => {
    buildOnce();
    const repo = hostileRepo();
    const cache = tempDir();
    try {
      const r = await runCli(['kb', repo.path, '--name', 'paste_board', '--index-dir', cache.path]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /def paste_board/);
      assert.doesNotMatch(r.stdout, CONTROL, JSON.stringify(r.stdout));
      assert.ok(r.stdout.includes('\\x1b]52;c;ZWNobyBwd25lZA==\\x07'), r.stdout);
      assert.ok(r.stdout.includes('\\x9b31m') && r.stdout.includes('\\u202eevil'), r.stdout);
      const json = await runCli(['kb', repo.path, '--name', 'paste_board', '--index-dir', cache.path, '--json']);
      assert.doesNotMatch(json.stdout, CONTROL);
      const parsed = JSON.parse(json.stdout) as { items: Array<{ text: string }> };
      assert.ok(parsed.items[0]!.text.includes(HOSTILE), '--json keeps the text itself (escaped in JSON)');
    } finally {
      repo.cleanup();
      cache.cleanup();
    }
  });

  void test("coderag complete's trace (its query and prompt quote the file) shows the controls written out", async () => {
    buildOnce();
    const repo = hostileRepo();
    const cache = tempDir();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'text.upper()' }), { models: [MODEL] });
    try {
      const r = await runCli([
        'complete',
        repo.path,
        'paste.py:8:12',
        '--model',
        MODEL,
        '--query',
        'last10',
        '--no-dense',
        '--index-dir',
        cache.path,
        '--provider',
        'ollama',
        '--ollama-host',
        server.url,
      ]);
      assert.match(r.stdout, /## Prompt/, r.stderr);
      assert.doesNotMatch(r.stdout, CONTROL, JSON.stringify(r.stdout.slice(0, 2000)));
      assert.ok(r.stdout.includes('\\x1b]52;c;'), 'the prompt in the trace shows the sequence');
    } finally {
      await server.close();
      repo.cleanup();
      cache.cleanup();
    }
  });
});

void describe("item 3: temp files of interrupted saves are swept at start, only the project's own and only old ones", () => {
  void test('coderag index removes an hour-old kb.index.*.tmp and dense-*.bin.*.tmp, keeps a fresh one and files it did not name', async () => {
    buildOnce();
    const repo = copyFixture('pyshop');
    const cache = tempDir();
    try {
      const folder = indexFolderFor(cache.path, repo.path);
      mkdirSync(folder, { recursive: true });
      const hourAgo = new Date(Date.now() - 3600_000);
      const stale = ['kb.index.4242.0badc0de.tmp', 'dense-bge.bin.77.12345678.tmp'];
      const kept = ['kb.index.4243.feedf00d.tmp', 'notes.tmp', 'kb.index.bak.tmp', 'mine.4242.tmp'];
      for (const name of [...stale, ...kept]) writeFileSync(join(folder, name), 'x'.repeat(1000));
      for (const name of [...stale, ...kept.slice(1)]) utimesSync(join(folder, name), hourAgo, hourAgo);
      const r = await runCli(['index', repo.path, '--index-dir', cache.path]);
      assert.equal(r.code, 0, r.stderr);
      for (const name of stale) assert.equal(existsSync(join(folder, name)), false, `${name} was left: ${readdirSync(folder).join(', ')}`);
      for (const name of kept) assert.ok(existsSync(join(folder, name)), `${name} was removed`);
    } finally {
      repo.cleanup();
      cache.cleanup();
    }
  });
});

// pyshop's app/main.py line 19 (0-based 18), after `    service = CheckoutService(`.
const LINE = 18;
const COL = '    service = CheckoutService('.length;

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref()),
  ]);
}

void describe('item 5: settings outside their range are refused, named in the log and the status', () => {
  void test('a negative maxNewTokens and budgetTokens: completions still come, and the status says which settings were not used', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, gateway=gateway' }), { models: [MODEL] });
    const lsp = await startLsp(join(fixturesDir, 'pyshop'), {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
      ollama: { host: server.url, completionModel: MODEL },
      rerank: { kind: 'none' },
      experimental: {
        model: { maxNewTokens: -5 },
        prompt: { budgetTokens: -1 },
        ollama: { keepAlive: '5m' },
        query: { strategy: 'last10' },
      },
    });
    try {
      const ready = await lsp.waitForStatus((s) => s.state === 'ready');
      const uri = lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python');
      const items = await withTimeout(lsp.complete(uri, LINE, COL), 30_000, 'completion');
      assert.equal(
        items.length,
        1,
        `the suggestion is shown: ${JSON.stringify(((t) => [t?.completion, t?.model])((await lsp.explain())?.trace))} ${ready.message}`,
      );
      assert.match(String(items[0]!.insertText), /cart, gateway/);
      assert.match(
        ready.message,
        /Settings not used: coderag\.experimental\.model\.maxNewTokens must be between 1 and 512 \(got -5\); 48 is used/,
      );
      assert.match(ready.message, /coderag\.experimental\.prompt\.budgetTokens must be between 128 and 131072 \(got -1\)/);
      assert.ok(
        lsp.logs.join('').includes('setting ignored: coderag.experimental.model.maxNewTokens must be between 1 and 512'),
        lsp.logs.join(''),
      );
    } finally {
      await lsp.close();
      await server.close();
    }
  });
});

void describe('item 4: the LSP transport refuses a frame over its limit before reading its body', () => {
  void test('a 2 GB Content-Length: the server says so and closes the connection at once instead of buffering', async () => {
    const repo = hostileRepo();
    const lsp = await startLsp(repo.path, { rerank: { kind: 'none' }, model: { provider: 'embedded' } });
    try {
      await withTimeout(lsp.status(), 20_000, 'getStatus before the frame');
      const exited = new Promise<number | null>((resolve) => lsp.child.once('exit', (code) => resolve(code)));
      lsp.child.stdin!.write('Content-Length: 2000000000\r\n\r\n');
      // The first 8 MiB of the body: the old reader kept every byte, waiting for the rest.
      for (let i = 0; i < 8; i++) lsp.child.stdin!.write(Buffer.alloc(1024 * 1024, 0x20));
      const code = await withTimeout(exited, 10_000, 'the server closing the connection');
      assert.notEqual(code, 0);
      assert.match(
        lsp.logs.join(''),
        /connection closed: an LSP message of 2000000000 bytes \(Content-Length\), more than the 67108864 read/,
      );
    } finally {
      await lsp.close();
      repo.cleanup();
    }
  });
});

void describe('item 9: a workspace folder that is missing, or a file, says so in the status', () => {
  void test('a missing folder and a file given as a folder are not indexed, and the status names both', async () => {
    const dir = tempDir('coderag-folders-');
    const missing = join(dir.path, 'gone');
    const file = join(dir.path, 'notes.py');
    writeFileSync(file, 'x = 1\n');
    const lsp = await startLsp(
      dir.path,
      { rerank: { kind: 'none' }, model: { provider: 'embedded' } },
      {
        workspaceFolders: [
          { uri: pathToFileURL(missing).toString(), name: 'gone' },
          { uri: pathToFileURL(file).toString(), name: 'notes.py' },
        ],
      },
    );
    try {
      const ready = await lsp.waitForStatus(
        (s) => s.state === 'ready' && s.folders.length === 2 && s.folders.every((f) => f.state !== 'pending' && f.state !== 'indexing'),
        30_000,
      );
      assert.deepEqual(
        ready.folders.map((f) => f.state),
        ['failed', 'failed'],
        JSON.stringify(ready.folders),
      );
      assert.match(ready.message, /Not indexed: .*gone does not exist/, ready.message);
      assert.match(ready.message, /notes\.py is a file, not a folder/, ready.message);
    } finally {
      await lsp.close();
      dir.cleanup();
    }
  });
});

void describe('item 7: HTTP 429 with Retry-After is honoured', () => {
  void test('the Ollama and OpenAI-compatible clients send nothing until the wait has passed, then ask again', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway' }), { models: [MODEL] });
    const request = { prompt: 'def f(', maxNewTokens: 8, stop: [] };
    const signal = new AbortController().signal;
    try {
      for (const make of [
        () => new OllamaClient({ host: server.url, model: MODEL }),
        () => new OpenAICompatibleClient({ baseUrl: server.url, model: MODEL }),
      ]) {
        server.setFault({ kind: 'http429', retryAfter: '2' });
        const client = make();
        const rateLimited = (e: unknown): boolean =>
          isModelClientError(e) && e.kind === 'rateLimited' && /asked to wait \(HTTP 429 Retry-After\)/.test(e.message);
        await assert.rejects(client.generate(request, signal), rateLimited);
        const sent = server.requests.length;
        server.setFault(undefined);
        await assert.rejects(make().generate(request, signal), rateLimited, 'a second request (another client too) within the wait');
        assert.equal(server.requests.length, sent, 'nothing was sent during the wait');
        await new Promise((r) => setTimeout(r, 2100));
        assert.match((await client.generate(request, signal)).text, /cart/);
        assert.equal(server.requests.length, sent + 1);
      }
    } finally {
      await server.close();
    }
  });

  void test('the language server: the status says the model server asked to wait, and the next completion sends nothing', async () => {
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart, gateway, gateway=gateway' }), { models: [MODEL] });
    const lsp = await startLsp(join(fixturesDir, 'pyshop'), {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
      ollama: { host: server.url, completionModel: MODEL },
      rerank: { kind: 'none' },
      experimental: { model: { maxNewTokens: 24 }, ollama: { keepAlive: '5m' }, query: { strategy: 'last10' }, cache: { size: 0 } },
    });
    try {
      await lsp.waitForStatus((s) => s.state === 'ready');
      const uri = lsp.open(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'python');
      server.setFault({ kind: 'http429', retryAfter: '120' });
      assert.deepEqual(await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'completion during the 429'), []);
      const status = await lsp.waitForStatus((s) => s.model.state === 'rateLimited', 10_000);
      assert.equal(status.state, 'modelProblem');
      assert.match(status.message, /asked to wait \(HTTP 429 Retry-After\).*before \d\d:\d\d:\d\d UTC \(in 1[12]\d s\)/);
      assert.match(String(status.model.action), /asked CodeRAG to wait/);
      const sent = server.requests.length;
      server.setFault(undefined);
      assert.deepEqual(await withTimeout(lsp.complete(uri, LINE, COL - 1), 20_000, 'completion within the wait'), []);
      assert.equal(server.requests.length, sent, 'nothing was sent during the wait');
    } finally {
      await lsp.close();
      await server.close();
    }
  });
});

void describe('item 6: excluded globs are bounded and compiled once', () => {
  void test('100,000 excluded globs: the first 1,000 are used, the status and the log say so, and the folder indexes', async () => {
    const repo = copyFixture('pyshop');
    const exclude = Array.from({ length: 100_000 }, (_, i) => `generated${i}/**/*.py`);
    const lsp = await startLsp(repo.path, { rerank: { kind: 'none' }, model: { provider: 'embedded' }, exclude });
    try {
      const ready = await lsp.waitForStatus((s) => s.state === 'ready' && s.folders.every((f) => f.state === 'ready'), 60_000);
      assert.match(ready.message, /Settings not used: coderag\.exclude: 100000 excluded globs: only the first 1000 are used/);
      assert.ok(lsp.logs.join('').includes('setting ignored: coderag.exclude: 100000 excluded globs'));
      assert.ok((ready.folders[0]?.items ?? 0) > 0, 'the folder is indexed');
    } finally {
      await lsp.close();
      repo.cleanup();
    }
  });
});

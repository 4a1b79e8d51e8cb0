// Fault matrix, round 2 (README.md row 8): the language server's lifecycle and positions, observed as an editor observes
// them: the real server (`coderag serve --stdio`) spoken to over JSON-RPC. Before `initialize`,
// a second `initialize`, after `shutdown`; a cursor inside a surrogate pair; model text with
// U+FFFD or half a pair; a CRLF document (the server and the CLI must read it alike); workspace
// folders that are not local folders.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { cliPath, copyFixture, fixturesDir, repoRoot, tempDir } from '../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce, startLsp, startModelServer, type LspSession, type ModelServer } from '../server/lspHarness';
import { indexFilePath, indexFolderFor } from '../../src/engine/kb/store';
import {
  GetStatusRequest,
  InlineCompletionRequest,
  RebuildIndexRequest,
  type InlineCompletionItem,
  type InlineCompletionList,
  type StatusParams,
} from '../../src/protocol/protocol';
import { runCli } from './cliRun';

const MODEL = 'coderag-lm:test';
// app/main.py line 19 (0-based 18), after `    service = CheckoutService(`.
const LINE = 18;
const COL = '    service = CheckoutService('.length;

const SERVER_NOT_INITIALIZED = -32002;
const INVALID_REQUEST = -32600;

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    work,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms).unref()),
  ]);
}

/** The error code a request is answered with (undefined: it was answered with a result). */
async function errorCode(request: Promise<unknown>): Promise<number | undefined> {
  try {
    await withTimeout(request, 30_000, 'the request');
    return undefined;
  } catch (e) {
    return (e as { code?: number }).code;
  }
}

/** No lone surrogate (String.prototype.isWellFormed, which the project's TypeScript lib predates). */
function wellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

function itemsOf(r: InlineCompletionList | InlineCompletionItem[] | null): InlineCompletionItem[] {
  return !r ? [] : Array.isArray(r) ? r : r.items;
}

/** The server process with nothing sent yet: the test speaks the lifecycle itself. */
interface RawServer {
  connection: MessageConnection;
  child: ChildProcess;
  exitCode: Promise<number | null>;
  statuses: StatusParams[];
  logs: string[];
}

function spawnServer(cacheDir: string): RawServer {
  buildOnce();
  const child = spawn(process.execPath, [cliPath, 'serve', '--stdio'], {
    cwd: repoRoot,
    env: { ...process.env, CODERAG_CACHE_DIR: cacheDir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exitCode = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const logs: string[] = [];
  child.stderr?.on('data', (d: Buffer) => logs.push(d.toString('utf8')));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const statuses: StatusParams[] = [];
  connection.onNotification('coderag/status', (s: StatusParams) => statuses.push(s));
  connection.onNotification('window/logMessage', (p: { message: string }) => logs.push(p.message));
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.listen();
  return { connection, child, exitCode, statuses, logs };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

void describe('LSP lifecycle: before initialize, a second initialize, after shutdown', () => {
  const repo = copyFixture('pyshop');
  const cache = tempDir('coderag-lsp-cache-');
  const mainPy = join(repo.path, 'app', 'main.py');
  const mainUri = pathToFileURL(mainPy).toString();
  const settings = {
    debounceMs: 0,
    model: { provider: 'embedded' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 8 }, query: { strategy: 'last10' }, cache: { size: 0 } },
  };
  let server: RawServer;
  const complete = (): Promise<InlineCompletionItem[]> =>
    withTimeout(
      server.connection.sendRequest(InlineCompletionRequest.method, {
        textDocument: { uri: mainUri },
        position: { line: LINE, character: COL },
        context: { triggerKind: 2 },
      }) as Promise<InlineCompletionList | null>,
      60_000,
      'completion',
    ).then(itemsOf);
  const initializeParams = (trusted: boolean, given: unknown) => ({
    processId: process.pid,
    rootUri: pathToFileURL(repo.path).toString(),
    workspaceFolders: [{ uri: pathToFileURL(repo.path).toString(), name: 'pyshop' }],
    capabilities: { window: { workDoneProgress: true }, workspace: { workspaceFolders: true } },
    initializationOptions: { trusted, settings: given },
  });

  before(() => {
    server = spawnServer(cache.path);
  });

  after(async () => {
    if (server.child.exitCode === null) server.child.kill();
    await server.exitCode;
    server.connection.dispose();
    repo.cleanup();
    cache.cleanup();
  });

  void test('before initialize every request answers ServerNotInitialized (-32002) and notifications are dropped', async () => {
    const c = server.connection;
    assert.equal(
      await errorCode(
        c.sendRequest(InlineCompletionRequest.method, {
          textDocument: { uri: mainUri },
          position: { line: LINE, character: COL },
          context: { triggerKind: 2 },
        }),
      ),
      SERVER_NOT_INITIALIZED,
    );
    assert.equal(await errorCode(c.sendRequest(GetStatusRequest.method)), SERVER_NOT_INITIALIZED);
    assert.equal(await errorCode(c.sendRequest(RebuildIndexRequest.method, { full: true })), SERVER_NOT_INITIALIZED);
    assert.equal(await errorCode(c.sendRequest('coderag/noSuchRequest', {})), SERVER_NOT_INITIALIZED);
    assert.equal(await errorCode(c.sendRequest('shutdown')), SERVER_NOT_INITIALIZED, 'a shutdown before initialize is refused too');
    // Opened before initialize: dropped, so the server does not know the document.
    await c.sendNotification('textDocument/didOpen', {
      textDocument: { uri: mainUri, languageId: 'python', version: 1, text: readFileSync(mainPy, 'utf8') },
    });

    await withTimeout(c.sendRequest('initialize', initializeParams(true, settings)), 30_000, 'initialize');
    await c.sendNotification('initialized', {});
    await until(
      () => server.statuses.some((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready')),
      120_000,
      'the folder ready',
    );
    assert.deepEqual(await complete(), [], 'the document opened before initialize is unknown to the server');
    await c.sendNotification('textDocument/didOpen', {
      textDocument: { uri: mainUri, languageId: 'python', version: 2, text: readFileSync(mainPy, 'utf8') },
    });
    assert.equal((await complete()).length, 1, 'opened after initialize, it is completed');
  });

  void test('a second initialize answers InvalidRequest (-32600) and changes nothing: the local models, trust and settings stay', async () => {
    const c = server.connection;
    // Untrusted, completions off: a second initialize that were obeyed would stop completing.
    assert.equal(await errorCode(c.sendRequest('initialize', initializeParams(false, { ...settings, enable: false }))), INVALID_REQUEST);
    const items = await complete();
    assert.equal(items.length, 1, 'the embedded model still completes');
    const status = (await c.sendRequest(GetStatusRequest.method)) as StatusParams;
    assert.equal(status.completionsEnabled, true);
    assert.ok(status.state !== 'untrusted' && status.state !== 'disabled', `state ${status.state}`);
  });

  void test('after shutdown every request answers InvalidRequest (-32600) and no work starts: a full rebuild does not rewrite kb.index; exit ends with 0', async () => {
    const c = server.connection;
    const indexFile = indexFilePath(indexFolderFor(cache.path, repo.path));
    assert.equal(await errorCode(c.sendRequest('shutdown')), undefined, 'shutdown is answered');
    const saved = statSync(indexFile);
    assert.equal(await errorCode(c.sendRequest(RebuildIndexRequest.method, { full: true })), INVALID_REQUEST);
    assert.equal(
      await errorCode(
        c.sendRequest(InlineCompletionRequest.method, {
          textDocument: { uri: mainUri },
          position: { line: LINE, character: COL },
          context: { triggerKind: 2 },
        }),
      ),
      INVALID_REQUEST,
    );
    assert.equal(await errorCode(c.sendRequest(GetStatusRequest.method)), INVALID_REQUEST);
    assert.equal(await errorCode(c.sendRequest('shutdown')), INVALID_REQUEST, 'a second shutdown too');
    // A save after shutdown would re-extract the file and write the index 2 s later.
    await c.sendNotification('textDocument/didSave', {
      textDocument: { uri: mainUri },
      text: 'def saved_after_shutdown():\n    return 1\n',
    });
    await new Promise((r) => setTimeout(r, 3000));
    const now = statSync(indexFile);
    assert.equal(now.mtimeMs, saved.mtimeMs, 'kb.index is not written after shutdown');
    assert.equal(now.size, saved.size);
    await c.sendNotification('exit');
    assert.equal(await withTimeout(server.exitCode, 10_000, 'exit'), 0);
  });
});

void describe('positions and model text: surrogate pairs, U+FFFD, CRLF', () => {
  let model: OllamaTestServer;
  let lsp: LspSession;
  let answer = 'cart, gateway, gateway=gateway';
  const repo = join(fixturesDir, 'pyshop');

  before(async () => {
    model = await startOllamaTestServer(() => Promise.resolve({ text: answer }), { models: [MODEL] });
    lsp = await startLsp(repo, {
      debounceMs: 0,
      model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
      ollama: { host: model.url, completionModel: MODEL },
      rerank: { kind: 'none' },
      experimental: { model: { maxNewTokens: 24 }, ollama: { keepAlive: '5m' }, query: { strategy: 'last10' }, cache: { size: 0 } },
    });
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
  });

  after(async () => {
    await lsp?.close();
    await model?.close();
  });

  void test('a cursor between the halves of a surrogate pair: the suggestion goes before the pair, never splits it', async () => {
    const text = 'def greet():\n    return "😀😀"\n';
    const uri = lsp.open(join(repo, 'app', 'emoji.py'), 'python', text);
    answer = 'hello ';
    const inside = '    return "'.length + 1;
    const items = await withTimeout(lsp.complete(uri, 1, inside), 20_000, 'completion inside a pair');
    assert.equal(items.length, 1);
    const range = items[0]?.range as { start: { line: number; character: number } } | undefined;
    assert.deepEqual(range?.start, { line: 1, character: inside - 1 }, 'the range starts before the pair');
    const at = text.indexOf('\n') + 1 + (range?.start.character ?? 0);
    const inserted = text.slice(0, at) + String(items[0]?.insertText) + text.slice(at);
    assert.ok(wellFormed(inserted), 'the document stays well-formed UTF-16');
  });

  void test('model text with U+FFFD or half a surrogate pair: the suggestion ends before it', async () => {
    const uri = lsp.open(join(repo, 'app', 'main.py'), 'python');
    const cases: Array<[string, string | undefined]> = [
      ['cart, gateway, gateway=gateway\uFFFD, retries=3', 'cart, gateway, gateway=gateway'],
      ['cart, gateway, gateway=gateway, gateway="\uD83D', 'cart, gateway, gateway=gateway, gateway="'],
      ['\uDE00cart, gateway, gateway=gateway', undefined],
      ['cart, gateway, gateway="😀"', 'cart, gateway, gateway="😀"'],
    ];
    for (const [given, expected] of cases) {
      answer = given;
      const items = await withTimeout(lsp.complete(uri, LINE, COL), 20_000, 'completion');
      const shown = items[0]?.insertText as string | undefined;
      assert.equal(shown, expected, `the model answered ${JSON.stringify(given)}`);
      if (shown !== undefined) assert.ok(wellFormed(shown) && !shown.includes('\uFFFD'));
    }
  });

  void test('a CRLF document: a suggestion of several lines is inserted with CRLF, at the position asked for', async () => {
    const text = ['def scale(x):', '    y = x * 2', '    if y > 10:', '        ', '    return y', ''].join('\r\n');
    const uri = lsp.open(join(repo, 'app', 'crlf.py'), 'python', text);
    answer = 'y = 10\n        x = 1';
    const items = await withTimeout(lsp.complete(uri, 3, 8), 20_000, 'completion in a CRLF document');
    assert.equal(items[0]?.insertText, 'y = 10\r\n        x = 1');
    assert.deepEqual((items[0]?.range as { start: unknown } | undefined)?.start, { line: 3, character: 8 });
    const prompt = String((model.requests.at(-1)?.body as { prompt?: unknown } | undefined)?.prompt ?? '');
    assert.ok(prompt.includes('if y > 10:\n        '), 'the prompt holds the code before the cursor');
    assert.ok(!prompt.includes('\r'), 'and no carriage return');
  });
});

void describe('a CRLF file: the language server and the CLI complete it alike', () => {
  let model: ModelServer;
  let lsp: LspSession;
  let settings: Record<string, unknown>;
  const repo = copyFixture('pyshop');
  const indexDir = tempDir();
  const mainPy = join(repo.path, 'app', 'main.py');

  before(async () => {
    writeFileSync(mainPy, readFileSync(mainPy, 'utf8').replace(/\n/g, '\r\n'));
    // A server that says it reads slowly: the CLI, which never measures one, lays prompts out for that speed too.
    model = await startModelServer([MODEL], { readRate: 50 });
    settings = {
      debounceMs: 0,
      model: { provider: 'ollama', timeoutMs: 30_000 },
      ollama: { host: model.url, completionModel: MODEL },
      rerank: { kind: 'none' },
      experimental: { ollama: { keepAlive: '5m' }, query: { strategy: 'last10' }, cache: { size: 0 } },
    };
    // The CLI reads the index the server saved: the same vectors, so near-equal dense scores rank alike.
    lsp = await startLsp(repo.path, settings, { cacheDir: indexDir.path });
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    await lsp.waitForDense();
  });

  after(async () => {
    await lsp?.close();
    await model?.close();
    repo.cleanup();
    indexDir.cleanup();
  });

  void test('the same prompt and the same suggestion at each of 8 positions', { timeout: 600_000 }, async () => {
    const uri = lsp.open(mainPy, 'python');
    // (0-based line, UTF-16 character): line starts, mid-line, after an open bracket, an empty line.
    const positions: Array<[number, number]> = [
      [9, 4],
      [9, '    cart = Cart('.length],
      [12, '    return '.length],
      [13, 0],
      [16, '    gateway = '.length],
      [LINE, COL],
      [20, '    print('.length],
      [24, 4],
    ];
    const differences: string[] = [];
    for (const [line, character] of positions) {
      // The server keeps each place's prompt layout between keystrokes, the CLI lays every prompt out
      // afresh: settings sent again rebuild the server's pipeline, so each position is a new place to both.
      lsp.configure(settings);
      await new Promise((r) => setTimeout(r, 300));
      const served = await withTimeout(lsp.complete(uri, line, character), 120_000, 'the server');
      const trace = await lsp.explain(served[0]?.traceId);
      const cli = await runCli([
        'complete',
        repo.path,
        `app/main.py:${line + 1}:${character + 1}`,
        '--provider',
        'ollama',
        '--model',
        MODEL,
        '--ollama-host',
        model.url,
        '--query',
        'last10',
        '--index-dir',
        indexDir.path,
        '--json',
      ]);
      const result = JSON.parse(cli.stdout) as { items: Array<{ text: string }>; trace: { prompt?: { text: string } } };
      const serverPrompt = trace?.trace.prompt?.text ?? '';
      // The suggestion as the document writes it (CRLF) against the CLI's (LF, printed to a terminal).
      const serverText = served[0] ? String(served[0].insertText).replace(/\r\n/g, '\n') : undefined;
      const notes = [
        serverPrompt.includes('\r') ? 'a CR in the server prompt' : '',
        serverPrompt !== result.trace.prompt?.text ? 'prompts differ' : '',
        serverText !== result.items[0]?.text ? `server ${JSON.stringify(serverText)}, CLI ${JSON.stringify(result.items[0]?.text)}` : '',
      ].filter(Boolean);
      if (notes.length > 0) differences.push(`${line}:${character}: ${notes.join('; ')}`);
    }
    assert.deepEqual(differences, []);
  });
});

void describe('workspace folders that are not local folders', () => {
  void test('a non-file URI and a file://host/ folder listed first are skipped with a message; the local folder indexes', async () => {
    const local = pathToFileURL(join(fixturesDir, 'pyshop')).toString();
    const lsp = await startLsp(
      [],
      { model: { provider: 'embedded' } },
      {
        workspaceFolders: [
          { uri: 'vscode-vfs://github/example/repo', name: 'remote' },
          { uri: 'file://fileserver/share/project', name: 'share' },
          { uri: local, name: 'pyshop' },
        ],
      },
    );
    try {
      const status = await lsp
        .waitForStatus((s) => s.folders.some((f) => f.uri === local && (f.state === 'ready' || f.state === 'failed')), 120_000)
        .catch(() => lsp.status());
      const byUri = new Map(status.folders.map((f) => [f.uri, f]));
      assert.equal(byUri.get(local)?.state, 'ready', `the local folder indexes (status: ${JSON.stringify(status.folders)})`);
      assert.ok((byUri.get(local)?.items ?? 0) > 0);
      assert.equal(byUri.get('vscode-vfs://github/example/repo')?.state, 'failed');
      assert.match(byUri.get('vscode-vfs://github/example/repo')?.message ?? '', /remote .*not a folder on this machine/);
      assert.equal(byUri.get('file://fileserver/share/project')?.state, 'failed');
      assert.match(byUri.get('file://fileserver/share/project')?.message ?? '', /share .*on another host \(fileserver\)/);
      assert.match(status.message, /Not indexed: .*remote/, 'the headline the status bar shows says so');
    } finally {
      await lsp.close();
    }
  });
});

// `node esbuild.config.mjs && node --import tsx scripts/benchHostileFiles.ts [--server PATH] [--only NAME]`:
// the language server fed the hostile inputs of test/faults/README.md round 2, rows 3 and 5, one fresh server per
// input, with default settings (a pyshop copy as the workspace, the completion model an
// Ollama-compatible server on 127.0.0.1 that answers at once). Per input it prints the longest the
// server's event loop was blocked while it handled the input (its own monitorEventLoopDelay, read
// through coderag/getStatus just before and after: the work runs in that process) and the
// server's peak RSS (VmHWM of /proc/PID/status: Linux), with the request's round trip.
// Acceptance: no input blocks the loop more than 200 ms or grows RSS past 1 GB.
// --server: another build's dist/server.js (e.g. an older commit's) for before/after figures.
// `--only 'hostile module'`: a generated or minified module in the workspace (the work bounds of kb/extract.ts).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { startOllamaTestServer, type OllamaTestServer } from '../test/helpers/ollamaServer';
import { indexFilePath, indexFolderFor } from '../src/engine/kb/store';
import { GetStatusRequest, InlineCompletionRequest, MemoryRequest, SERVER_EXEC_ARGV, SERVER_PROCESS_ENV, StatusNotification, type StatusParams } from '../src/protocol/protocol';

const root = resolve(__dirname, '..');
const MODEL = 'bench-instant:latest';
/** Longer than this, a step counts as hung and the server is killed. */
const STEP_TIMEOUT_MS = 120_000;

const { values } = parseArgs({ options: { server: { type: 'string' }, only: { type: 'string' } }, strict: true });
const serverPath = values.server ? resolve(values.server) : join(root, 'dist', 'server.js');

interface Server {
  child: ChildProcess;
  connection: MessageConnection;
  statuses: StatusParams[];
  status(): Promise<StatusParams>;
  close(): Promise<void>;
}

function withTimeout<T>(p: Promise<T>, what: string, ms = STEP_TIMEOUT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms / 1000} s`)), ms)))]).finally(() => clearTimeout(timer));
}

function startServer(repo: string, cacheDir: string, model: OllamaTestServer, extra: Record<string, unknown> = {}): Server {
  const child = spawn(process.execPath, [...SERVER_EXEC_ARGV, serverPath, '--stdio'], { cwd: dirname(dirname(serverPath)), env: { ...process.env, ...SERVER_PROCESS_ENV, CODERAG_CACHE_DIR: cacheDir }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr?.resume();
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const statuses: StatusParams[] = [];
  const settings = { model: { provider: 'ollama', family: 'plain' }, ollama: { host: model.url, completionModel: MODEL }, ...extra };
  connection.onNotification(StatusNotification.method, (s: StatusParams) => statuses.push(s));
  connection.onNotification('window/logMessage', () => undefined);
  connection.onNotification('$/progress', () => undefined);
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/configuration', () => [settings]);
  connection.onError(() => undefined);
  connection.listen();
  const uri = pathToFileURL(repo).toString();
  void connection
    .sendRequest('initialize', {
      processId: process.pid,
      rootUri: uri,
      workspaceFolders: [{ uri, name: 'pyshop' }],
      capabilities: { window: { workDoneProgress: true }, workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, workspaceFolders: true } },
      initializationOptions: { trusted: true, settings },
    })
    .then(() => connection.sendNotification('initialized', {}))
    .catch(() => undefined);
  return {
    child,
    connection,
    statuses,
    status: () => connection.sendRequest(GetStatusRequest.method) as Promise<StatusParams>,
    async close() {
      child.kill('SIGKILL');
      await new Promise<void>((done) => (child.exitCode !== null ? done() : child.once('exit', () => done())));
      connection.dispose();
    },
  };
}

/** Peak resident set of a process so far, in MB (Linux). */
function peakRssMB(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

/** Wait until the folder is indexed; returns the longest event-loop block seen meanwhile. */
async function ready(server: Server): Promise<number> {
  const start = performance.now();
  let maxBlock = 0;
  for (;;) {
    const s = await withTimeout(server.status(), 'status');
    maxBlock = Math.max(maxBlock, s.stats.eventLoopDelayMs?.max ?? 0);
    if (s.folders.length > 0 && s.folders.every((f) => f.state === 'ready' || f.state === 'failed') && !s.indexing) return maxBlock;
    if (performance.now() - start > STEP_TIMEOUT_MS) throw new Error(`not ready in ${STEP_TIMEOUT_MS / 1000} s (longest event-loop block seen ${maxBlock.toFixed(0)} ms): ${s.message}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Case {
  name: string;
  /** Before the server starts (plant files in the repo or the cache). */
  prepare?: (repo: string, cache: string) => void;
  /** Settings beside the defaults (e.g. a larger coderag.experimental.maxFileBytes). */
  settings?: Record<string, unknown>;
  /** The hostile step, measured: a note and the longest block it saw. Absent: the server's start and indexing is the step. */
  run?: (server: Server, repo: string) => Promise<{ note: string; blockMs: number }>;
}

/**
 * While `work` runs, a tiny request (coderag/memory) every 20 ms: the longest round trip is how long
 * an editor's request waited for the server (a check from outside on the event-loop figure).
 */
async function heartbeat<T>(server: Server, work: Promise<T>): Promise<{ value: T; maxPingMs: number }> {
  let done = false;
  let maxPingMs = 0;
  const pings = (async () => {
    while (!done) {
      const t0 = performance.now();
      await server.connection.sendRequest(MemoryRequest.method, { collectGarbage: false });
      maxPingMs = Math.max(maxPingMs, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  try {
    const value = await work;
    return { value, maxPingMs };
  } finally {
    done = true;
    await pings.catch(() => undefined);
  }
}

/** The longest event-loop block since the previous status request, in ms. */
async function blockSince(server: Server): Promise<number> {
  return (await withTimeout(server.status(), 'status')).stats.eventLoopDelayMs?.max ?? NaN;
}

function openAndComplete(text: () => string, cursor: (t: string) => { line: number; character: number }): Case['run'] {
  return async (server, repo) => {
    const doc = text();
    const uri = pathToFileURL(join(repo, 'app', 'hostile_doc.py')).toString();
    // The open alone (the LSP library reads and parses the message, the document is stored), then the completion.
    const opened = await heartbeat(
      server,
      (async () => {
        await server.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'python', version: 1, text: doc } });
        await new Promise((r) => setTimeout(r, 1500));
      })(),
    );
    const openBlock = await blockSince(server);
    const t0 = performance.now();
    const completed = await heartbeat(server, withTimeout(server.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri }, position: cursor(doc), context: { triggerKind: 2 } }), 'completion'));
    const r = completed.value as { items?: unknown[] } | null;
    const ms = performance.now() - t0;
    const completionBlock = await blockSince(server);
    // A second request: the parser must still work after the first.
    const mainUri = pathToFileURL(join(repo, 'app', 'main.py')).toString();
    await server.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: mainUri, languageId: 'python', version: 1, text: readFileSync(join(repo, 'app', 'main.py'), 'utf8') } });
    const next = (await withTimeout(server.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri: mainUri }, position: { line: 18, character: 36 }, context: { triggerKind: 2 } }), 'next completion')) as { items?: unknown[] } | null;
    const nextBlock = await blockSince(server);
    const note = `blocks: open ${openBlock.toFixed(0)} ms (longest ping ${opened.maxPingMs.toFixed(0)} ms), completion ${completionBlock.toFixed(0)} ms (longest ping ${completed.maxPingMs.toFixed(0)} ms; ${ms.toFixed(0)} ms round trip, ${r?.items?.length ?? 0} item), next completion in main.py ${nextBlock.toFixed(0)} ms (${next?.items?.length ?? 0} item)`;
    return { note, blockMs: Math.max(openBlock, completionBlock, nextBlock) };
  };
}

const oneLine = (mb: number) => (): string => `DATA = [${'1, '.repeat(Math.floor((mb * 1_000_000) / 3))}`;
const endOf = (t: string): { line: number; character: number } => {
  const lines = t.split('\n');
  return { line: lines.length - 1, character: lines[lines.length - 1]?.length ?? 0 };
};
const middleOf = (n: number) => (): { line: number; character: number } => ({ line: Math.floor(n / 2), character: 0 });

/** A minified Python module of about `mb` MB: `v0=0;v1=1;...` in lines of 200,000 characters. */
function minifiedModule(mb: number): string {
  const lines: string[] = [];
  let n = 0;
  for (let size = 0; size < mb * 1_000_000; ) {
    const parts: string[] = [];
    for (let len = 0; len < 200_000; n++) {
      parts.push(`v${n}=${n}`);
      len += String(n).length * 2 + 3;
    }
    const line = parts.join(';');
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** About `mb` MB of one-line definitions, `def g0(): pass` and on. */
function shortDefinitions(mb: number): string {
  const lines: string[] = [];
  for (let n = 0, size = 0; size < mb * 1_000_000; n++) {
    const line = `def g${n}(): pass`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** Within the range of coderag.experimental.maxFileBytes (up to 64 MiB). */
const LARGE_FILES = { experimental: { maxFileBytes: 64 * 1024 * 1024 } };

const CASES: Case[] = [
  { name: 'reference: start and index pyshop' },
  { name: 'reference: a normal document (app/main.py, 20 lines)', run: openAndComplete(() => readFileSync(join(root, 'test', 'fixtures', 'pyshop', 'app', 'main.py'), 'utf8'), () => ({ line: 18, character: 36 })) },
  { name: '25 MB one-line open document', run: openAndComplete(oneLine(25), endOf) },
  { name: '50 MB one-line open document', run: openAndComplete(oneLine(50), endOf) },
  { name: '5 MB one-line open document', run: openAndComplete(oneLine(5), endOf) },
  { name: '10 MB one-line open document', run: openAndComplete(oneLine(10), endOf) },
  { name: '1,000,000-line open document (x = 1)', run: openAndComplete(() => 'x = 1\n'.repeat(1_000_000), middleOf(1_000_000)) },
  { name: '1,000,000-line open document (empty lines, 1 MB)', run: openAndComplete(() => '\n'.repeat(999_999), middleOf(999_999)) },
  {
    name: 'watched-file "created" event for a FIFO stream.py',
    run: async (server, repo) => {
      const fifo = join(repo, 'stream.py');
      if (spawnSync('mkfifo', [fifo]).status !== 0) return { note: 'mkfifo failed', blockMs: NaN };
      const t0 = performance.now();
      await server.connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: pathToFileURL(fifo).toString(), type: 1 }] });
      await new Promise((r) => setTimeout(r, 500));
      const blockMs = await blockSince(server);
      return { note: `status answered ${(performance.now() - t0).toFixed(0)} ms after the event (500 ms wait included)`, blockMs };
    },
  },
  {
    name: 'hostile module: 20 MB minified (lines of 200,000 characters) in the workspace (start and index)',
    settings: LARGE_FILES,
    prepare: (repo) => writeFileSync(join(repo, 'app', 'bundle.py'), minifiedModule(20)),
  },
  {
    name: 'hostile module: 20 MB of short definitions (1.1 million) in the workspace (start and index)',
    settings: LARGE_FILES,
    prepare: (repo) => writeFileSync(join(repo, 'app', 'generated.py'), shortDefinitions(20)),
  },
  {
    name: 'kb.index is a FIFO (start and index)',
    prepare: (repo, cache) => {
      mkdirSync(indexFolderFor(cache, repo), { recursive: true });
      spawnSync('mkfifo', [indexFilePath(indexFolderFor(cache, repo))]);
    },
  },
  {
    name: 'kb.index links to /dev/zero (start and index)',
    prepare: (repo, cache) => {
      mkdirSync(indexFolderFor(cache, repo), { recursive: true });
      symlinkSync('/dev/zero', indexFilePath(indexFolderFor(cache, repo)));
    },
  },
];

async function main(): Promise<void> {
  const model = await startOllamaTestServer(async () => Promise.resolve({ text: 'value(first, second)' }), { models: [MODEL] });
  const rows: string[][] = [];
  process.stdout.write(`server ${serverPath}\n`);
  try {
    for (const c of CASES.filter((x) => !values.only || x.name.includes(values.only))) {
      const dir = mkdtempSync(join(tmpdir(), 'coderag-hostile-'));
      const repo = join(dir, 'pyshop');
      cpSync(join(root, 'test', 'fixtures', 'pyshop'), repo, { recursive: true });
      const cache = join(dir, 'cache');
      c.prepare?.(repo, cache);
      const t0 = performance.now();
      const server = startServer(repo, cache, model, c.settings);
      let note = '';
      let blockMs = NaN;
      try {
        const startBlock = await ready(server);
        if (c.run) {
          // Let the background embedding of the small repository end, then start the window afresh.
          await new Promise((r) => setTimeout(r, 3000));
          await server.status();
          const measured = await c.run(server, repo);
          note = measured.note;
          blockMs = measured.blockMs;
        } else {
          const folder = server.statuses.at(-1)?.folders[0];
          const skipped = folder?.skipped?.map((f) => `${f.path} (${f.detail})`).join(', ');
          note = `ready in ${(performance.now() - t0).toFixed(0)} ms; ${folder?.items ?? '?'} items${skipped ? `; skipped ${skipped}` : ''}`;
        }
        if (!c.run) blockMs = Math.max(startBlock, await blockSince(server));
      } catch (e) {
        note = `FAILED: ${e instanceof Error ? e.message : String(e)}`;
      }
      const peak = peakRssMB(server.child.pid);
      await server.close();
      rmSync(dir, { recursive: true, force: true });
      const row = [c.name, Number.isNaN(blockMs) ? '-' : blockMs.toFixed(0), Number.isNaN(peak) ? '-' : String(peak), note];
      rows.push(row);
      process.stdout.write(`${row.join(' | ')}\n`);
    }
  } finally {
    await model.close();
  }
  process.stdout.write(['', '| input | max event-loop block (ms) | peak RSS (MB) | note |', '|---|---:|---:|---|', ...rows.map((r) => `| ${r.join(' | ')} |`), ''].join('\n'));
}

void main();

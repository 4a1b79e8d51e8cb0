// Drives the real language server: `node bin/coderag.js serve --stdio` in a child process, spoken
// to over JSON-RPC as an editor would (vscode-jsonrpc message reader/writer on its stdio).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { createServer, Socket, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { cliPath, repoRoot, tempDir } from '../helpers/paths';
import { ModelRegistry, type CausalLM } from '../../src/engine/models';
import { startOllamaTestServer, type Fault, type GenerateFn, type OllamaTestServer } from '../helpers/ollamaServer';
import {
  ExplainRequest,
  GetStatusRequest,
  InlineCompletionRequest,
  RebuildIndexRequest,
  StatusNotification,
  type ExplainResult,
  type InlineCompletionItem,
  type InlineCompletionList,
  type FolderIndexSummary,
  type RebuildIndexResult,
  type StatusParams,
} from '../../src/protocol/protocol';

let built = false;
/** Bundle once per test process so the spawned CLI is the current source. */
export function buildOnce(): void {
  if (built) return;
  const r = spawnSync(process.execPath, [join(repoRoot, 'esbuild.config.mjs')], { cwd: repoRoot, encoding: 'utf8' });
  if (r.status !== 0) {
    // The full build also checks every shipped model's files; the server only needs the CLI bundle and the assets.
    process.stdout.write(`# full build failed (${r.stderr.trim()}); bundling the CLI alone\n`);
    const script = `require('esbuild').buildSync({ entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', bundle: true, platform: 'node', target: 'node20', format: 'cjs', sourcemap: true, logLevel: 'warning', external: ['vscode', 'onnxruntime-node', 'web-tree-sitter'] });
      for (const d of ['grammars', 'models']) require('fs').cpSync(d, 'dist/' + d, { recursive: true, filter: (s) => !s.includes('training') });`;
    const cli = spawnSync(process.execPath, ['-e', script], { cwd: repoRoot, encoding: 'utf8' });
    if (cli.status !== 0) throw new Error(`build failed: ${cli.stderr}`);
  }
  built = true;
}

export interface LspSession {
  connection: MessageConnection;
  child: ChildProcess;
  statuses: StatusParams[];
  progress: Array<{ token: string | number; value: { kind: string; message?: string; percentage?: number; title?: string } }>;
  logs: string[];
  /** The registrations the server asked for (client/registerCapability), in order. */
  registrations: Array<{ id: string; method: string; registerOptions?: unknown }>;
  /** Resolves with the first status (already received or future) that matches. */
  waitForStatus(match: (s: StatusParams) => boolean, timeoutMs?: number): Promise<StatusParams>;
  /** Resolves when the server's output (the editor's output channel) so far matches, as each new line arrives. */
  waitForLogs(match: (logs: readonly string[]) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves once every folder's dense embedding has ended (ready, off or failed), as the status says. */
  waitForDense(timeoutMs?: number): Promise<StatusParams>;
  /** Resolves with the first status in which every folder's `build` has ended (ready, off or failed). */
  waitForBuild(build: 'dense' | 'similar', timeoutMs?: number): Promise<StatusParams>;
  open(absPath: string, languageId: string, text?: string): string;
  change(uri: string, text: string, version: number): void;
  complete(uri: string, line: number, character: number): Promise<InlineCompletionItem[]>;
  explain(traceId?: string): Promise<ExplainResult | null>;
  rebuild(token?: string): Promise<RebuildIndexResult>;
  fileEvent(absPath: string, type: 1 | 2 | 3): void;
  status(): Promise<StatusParams>;
  configure(settings: unknown): void;
  close(): Promise<void>;
}

/** A folder's background build has ended: a folder not opened (refused) has none to wait for. */
function buildEnded(f: FolderIndexSummary, build: 'dense' | 'similar'): boolean {
  const b = f[build];
  return b === undefined ? f.state === 'failed' : b.state !== 'building';
}

export async function startLsp(
  workspace: string | string[],
  settings: unknown,
  options: {
    trusted?: boolean;
    initializationOptions?: Record<string, unknown>;
    /** Sent as they are instead of `workspace`'s folders. */ workspaceFolders?: Array<{ uri: string; name: string }>;
    cacheDir?: string;
    /** Variables set for the server's process on top of this one's (HOME, PATH, ...). */
    env?: Record<string, string>;
  } = {},
): Promise<LspSession> {
  buildOnce();
  // A caller's cache folder is the caller's to remove.
  const cache = options.cacheDir !== undefined ? { path: options.cacheDir, cleanup: () => undefined } : tempDir('coderag-lsp-cache-');
  const child = spawn(process.execPath, [cliPath, 'serve', '--stdio'], {
    cwd: repoRoot,
    env: { ...process.env, ...options.env, CODERAG_CACHE_DIR: cache.path },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  // Each new line of the server's output (what the editor's output channel shows) wakes the tests waiting on it.
  const logWaiters = new Set<() => void>();
  const logged = (line: string): void => {
    logs.push(line);
    for (const wake of [...logWaiters]) wake();
  };
  child.stderr?.on('data', (d: Buffer) => logged(d.toString('utf8')));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const statuses: StatusParams[] = [];
  const waiters: Array<{ match: (s: StatusParams) => boolean; resolve: (s: StatusParams) => void }> = [];
  const progress: LspSession['progress'] = [];
  connection.onNotification(StatusNotification.method, (s: StatusParams) => {
    statuses.push(s);
    for (const w of [...waiters]) {
      if (w.match(s)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(s);
      }
    }
  });
  connection.onNotification('window/logMessage', (p: { message: string }) => logged(p.message));
  connection.onNotification('$/progress', (p: LspSession['progress'][number]) => progress.push(p));
  connection.onRequest('window/workDoneProgress/create', () => null);
  const registrations: LspSession['registrations'] = [];
  connection.onRequest('client/registerCapability', (p: { registrations: LspSession['registrations'] }) => {
    registrations.push(...p.registrations);
    return null;
  });
  connection.onRequest('workspace/configuration', () => [settings]);
  connection.listen();
  const folders =
    options.workspaceFolders ??
    (Array.isArray(workspace) ? workspace : [workspace]).map((w, i) => ({ uri: pathToFileURL(w).toString(), name: `ws${i}` }));
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: folders[0]?.uri ?? null,
    workspaceFolders: folders,
    capabilities: {
      window: { workDoneProgress: true },
      workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, workspaceFolders: true },
    },
    initializationOptions: { trusted: options.trusted ?? true, settings, ...options.initializationOptions },
  });
  await connection.sendNotification('initialized', {});
  let version = 1;
  const session: LspSession = {
    connection,
    child,
    statuses,
    progress,
    logs,
    registrations,
    waitForStatus(match, timeoutMs = 60_000) {
      const seen = [...statuses].reverse().find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(new Error(`no matching status in ${timeoutMs} ms; last: ${JSON.stringify(statuses.at(-1))}\nlogs:\n${logs.join('\n')}`)),
          timeoutMs,
        );
        waiters.push({ match, resolve: (s) => (clearTimeout(timer), resolve(s)) });
      });
    },
    waitForLogs(match, timeoutMs = 20_000) {
      if (match(logs)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const wake = (): void => {
          if (!match(logs)) return;
          logWaiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          logWaiters.delete(wake);
          reject(new Error(`no matching output in ${timeoutMs} ms:\n${logs.join('\n')}`));
        }, timeoutMs);
        logWaiters.add(wake);
      });
    },
    waitForDense(timeoutMs = 120_000) {
      return session.waitForBuild('dense', timeoutMs);
    },
    waitForBuild(build, timeoutMs = 120_000) {
      return session.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => buildEnded(f, build)), timeoutMs);
    },
    open(absPath, languageId, text) {
      const uri = pathToFileURL(absPath).toString();
      void connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri, languageId, version: version++, text: text ?? readFileSync(absPath, 'utf8') },
      });
      return uri;
    },
    change(uri, text, v) {
      void connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: v }, contentChanges: [{ text }] });
    },
    async complete(uri, line, character) {
      const r = (await connection.sendRequest(InlineCompletionRequest.method, {
        textDocument: { uri },
        position: { line, character },
        context: { triggerKind: 2 },
      })) as InlineCompletionList | InlineCompletionItem[] | null;
      if (!r) return [];
      return Array.isArray(r) ? r : r.items;
    },
    explain: (traceId) => connection.sendRequest(ExplainRequest.method, traceId ? { traceId } : {}) as Promise<ExplainResult | null>,
    rebuild: (token) =>
      connection.sendRequest(RebuildIndexRequest.method, token ? { workDoneToken: token } : {}) as Promise<RebuildIndexResult>,
    status: () => connection.sendRequest(GetStatusRequest.method) as Promise<StatusParams>,
    fileEvent(absPath, type) {
      void connection.sendNotification('workspace/didChangeWatchedFiles', { changes: [{ uri: pathToFileURL(absPath).toString(), type }] });
    },
    configure(next) {
      void connection.sendNotification('workspace/didChangeConfiguration', { settings: { coderag: next } });
    },
    async close() {
      try {
        await Promise.race([connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 3000))]);
        await connection.sendNotification('exit');
      } catch {
        // already gone
      }
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => {
          child.kill();
          resolve();
        }, 3000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
      });
      connection.dispose();
      cache.cleanup();
    },
  };
  return session;
}

/** The shipped causal LM, loaded once per test process. */
let lmPromise: Promise<CausalLM> | undefined;
export function embeddedLM(): Promise<CausalLM> {
  lmPromise ??= new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
  return lmPromise;
}

/** Ollama renders raw /api/generate prompts as ChatML in the helper; completion prompts are raw. */
function rawPrompt(prompt: string): string {
  const m = /^<\|im_start\|>user\n([\s\S]*)<\|im_end\|>\n<\|im_start\|>assistant\n$/.exec(prompt);
  return fimAsPlain(m?.[1] ?? prompt);
}

/**
 * A Qwen2.5-Coder repository-level fill-in-the-middle prompt (what the client sends to a model
 * named `qwen2.5-coder:…`, the README's) as the shipped model's plain prompt: the shipped model has
 * no FIM training and would copy the special tokens. Each file headed by a comment with its path, the
 * current file's prefix last (the code above the cursor's line, then the line, which the prompt sends
 * after the middle marker), the suffix dropped: the stand-in answers like a FIM model that reads only
 * what comes before the cursor. Other prompts pass through unchanged.
 */
function fimAsPlain(prompt: string): string {
  const fim = /<\|fim_prefix\|>([\s\S]*)<\|fim_suffix\|>[\s\S]*<\|fim_middle\|>([^\n]*)$/.exec(prompt);
  if (!fim) return prompt;
  const head = prompt.slice(0, fim.index).replace(/^<\|repo_name\|>[^\n]*\n/, '');
  const files = head.replace(/<\|file_sep\|>([^\n]*)\n/g, (_all, path: string) => `${path.endsWith('.py') ? '#' : '//'} ${path}\n`);
  return files + fim[1]! + fim[2]!;
}

export interface ModelServer {
  server: OllamaTestServer;
  /** A TCP front on a fixed port: down() refuses connections, up() answers again on the same port. */
  url: string;
  inFlight: () => number;
  maxInFlight: () => number;
  generateCalls: () => number;
  /** Most requests answered in full that overlapped in time (exact, unlike the open-request count). */
  maxAnsweredOverlap: () => number;
  /** The last few request intervals (start, began, end, answered), for diagnosing a test. */
  debug: () => unknown;
  resetCounters(): void;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** The Ollama-compatible test server answered by the embedded model, behind a proxy that can go down. */
export async function startModelServer(models: string[], options: { readRate?: number } = {}): Promise<ModelServer> {
  const lm = await embeddedLM();
  let inFlight = 0;
  let maxInFlight = 0;
  let calls = 0;
  const intervals: Array<{ start: number; end: number; answered: boolean }> = [];
  let queue: Promise<void> = Promise.resolve();
  // In flight = the request is open: from its arrival until it is answered or its client hung up
  // (the server may still finish a forward pass after a hang-up; that is not a request in flight).
  const generate: GenerateFn = async (prompt, opts, signal) => {
    inFlight++;
    calls++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let open = true;
    const close = (): void => {
      if (open) inFlight--;
      open = false;
    };
    signal.addEventListener('abort', close, { once: true });
    const interval = { start: performance.now(), end: Infinity, answered: false };
    intervals.push(interval);
    // Like Ollama with one model loaded: one generation at a time, queued requests whose client
    // hung up are dropped before they start.
    const previous = queue;
    let release!: () => void;
    queue = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      (interval as { began?: number }).began = performance.now();
      if (signal.aborted) throw new Error('client hung up while queued');
      const text = await lm.generate(rawPrompt(prompt), { maxNewTokens: opts.maxNewTokens, stop: opts.stop }, signal);
      interval.answered = !signal.aborted;
      return { text };
    } finally {
      release();
      interval.end = performance.now();
      signal.removeEventListener('abort', close);
      close();
    }
  };
  const server = await startOllamaTestServer(generate, { models, ...options });
  const sockets = new Set<Socket>();
  let proxy: Server | undefined;
  let port = 0;
  const up = async (): Promise<void> => {
    const next = createServer((client) => {
      sockets.add(client);
      const upstream = new Socket();
      sockets.add(upstream);
      upstream.connect(server.port, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      const end = (): void => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve));
    port = (next.address() as AddressInfo).port;
    proxy = next;
  };
  const down = async (): Promise<void> => {
    const p = proxy;
    proxy = undefined;
    for (const s of sockets) s.destroy();
    sockets.clear();
    if (p) await new Promise<void>((resolve) => p.close(() => resolve()));
  };
  await up();
  return {
    server,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    inFlight: () => inFlight,
    maxInFlight: () => maxInFlight,
    generateCalls: () => calls,
    debug: () => intervals.slice(-4),
    maxAnsweredOverlap() {
      // Requests answered in full (their client did not hang up): how many ever ran at once.
      const answered = intervals.filter((i) => i.answered);
      let most = answered.length > 0 ? 1 : 0;
      for (const a of answered) most = Math.max(most, answered.filter((b) => b.start <= a.start && b.end > a.start).length);
      return most;
    },
    resetCounters() {
      maxInFlight = inFlight;
      calls = 0;
      intervals.length = 0;
    },
    down,
    up,
    async close() {
      await down();
      await server.close();
    },
  };
}

export interface ModelServerStats {
  /** /api/generate requests since the last reset. */
  calls: number;
  /** Most requests open at once (a hang-up read late can make this 2; see maxAnswered). */
  maxOpen: number;
  /** Most requests answered in full that ran at once (exact). */
  maxAnswered: number;
  /** Paths of every request received. */
  paths: string[];
}

/** The same model server on a worker thread, driven by messages. */
export interface RemoteModelServer {
  url: string;
  setFault(fault: Fault | undefined): Promise<void>;
  down(): Promise<void>;
  up(): Promise<void>;
  resetCounters(): Promise<void>;
  stats(): Promise<ModelServerStats>;
  close(): Promise<void>;
}

export async function startModelServerThread(models: string[]): Promise<RemoteModelServer> {
  const worker = new Worker(`require('tsx/cjs'); require(${JSON.stringify(join(__dirname, 'modelServerWorker.ts'))});`, {
    eval: true,
    workerData: { models },
  });
  let next = 0;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const url = await new Promise<string>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: { ready?: boolean; url?: string; id?: number; result?: unknown; error?: string }) => {
      if (m.ready && m.url) return resolve(m.url);
      const p = m.id !== undefined ? pending.get(m.id) : undefined;
      if (!p || m.id === undefined) return;
      pending.delete(m.id);
      if (m.error !== undefined) p.reject(new Error(m.error));
      else p.resolve(m.result);
    });
  });
  const call = <T>(message: object): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: (v) => resolve(v as T), reject });
      worker.postMessage({ id, ...message });
    });
  return {
    url,
    setFault: (fault) => call({ op: 'setFault', fault }),
    down: () => call({ op: 'down' }),
    up: () => call({ op: 'up' }),
    resetCounters: () => call({ op: 'reset' }),
    stats: () => call<ModelServerStats>({ op: 'stats' }),
    async close() {
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      await call({ op: 'close' });
      const timer = setTimeout(() => void worker.terminate(), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

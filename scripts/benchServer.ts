// `npm run bench:server -- [<repo> ...]` (default: test/fixtures/pyshop, e.g. /work/benchcache/repos/jinja2
// /work/benchcache/repos/commons-io for the real figures): the language server's own cost per completion
// request on real repositories (the goal: <= 15 ms median beyond the retrieval stages;
// a typing-through cache hit <= 5 ms), its memory after indexing, and how late its event loop runs
// while it indexes and embeds in the background.
//
// It spawns the built server (dist/server.js --stdio; `npm run build` first, which the npm script
// does) with a fresh index cache, speaks JSON-RPC to it as an editor would, and points the
// completion model at an Ollama-compatible server on 127.0.0.1 that answers at once (so the
// figures are the server's, not a model's). Per repository it prints:
//   - indexing (cold, fresh cache): time per stage (knowledge base parsed, the other paths ready,
//     dense embeddings done: every path ready) and the dense path's items per second; time to the
//     first completion sent right after opening (answered with the paths ready by then); event-loop delay (max, p99) and the
//     round trip of a tiny request while it indexes and while it embeds; completion requests sent
//     while it embeds;
//   - RSS after indexing, 5 s later (idle: the encoder thread has stopped), after the requests (a
//     second after a full collection) and 15 s after that with no collection forced (rested);
//   - ~100 completion requests at varied cursors in real files: server overhead (handler time
//     minus debounce, query/retrieve/rerank/generate stages and model preparation: what the
//     server adds), full request time (client round trip), first request in a newly opened file
//     vs later ones, and typing-through cache hits (round trip and server handler time).
//
// Options: --server PATH (another build's dist/server.js, e.g. an older commit's, for before/after
// tables; default this tree's), --requests N (default 100), --debounce MS (default 0; a user's setting adds it to the
// full time), --cache DIR (reuse an index cache instead of a fresh one), --json FILE (write the
// figures), --query STRATEGY (probe|last3|last10|jaccard; default the server's own, as users get), --check MODE
// (coderag.experimental.check.mode: constrain|repair|off; default the server's own).
// CODERAG_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the server process;
// CODERAG_BENCH_PAUSE_MS=N holds it N ms after indexing and prints its pid (for /proc/PID/smaps,
// or a heap snapshot with CODERAG_BENCH_NODE_ARGS="--heapsnapshot-signal=SIGUSR2");
// CODERAG_BENCH_PAUSE_END_MS=N does the same after the requests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { startOllamaTestServer, type OllamaTestServer } from '../test/helpers/ollamaServer';
import {
  ExplainRequest,
  GetStatusRequest,
  InlineCompletionRequest,
  MemoryRequest,
  SERVER_EXEC_ARGV,
  SERVER_PROCESS_ENV,
  StatusNotification,
  type ExplainResult,
  type FolderIndexSummary,
  type InlineCompletionItem,
  type InlineCompletionList,
  type MemoryResult,
  type StatusParams,
} from '../src/protocol/protocol';

const root = resolve(__dirname, '..');
let serverPath = join(root, 'dist', 'server.js');
const MODEL = 'bench-instant:latest';
/** How long the bench waits, idle, after indexing before reading memory again. */
const SETTLE_MS = 5000;
/** How long after a full collection memory is read (coderag/memory). */
const COLLECTION_SETTLE_MS = 1000;
/** After the requests' reading, memory is read once more this much later, with no collection forced. */
const RESTED_MS = 15000;
/** Memory is read again after this many completion requests. */
const WARM_REQUESTS = 20;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string', default: '100' },
    debounce: { type: 'string', default: '0' },
    cache: { type: 'string' },
    json: { type: 'string' },
    query: { type: 'string' },
    check: { type: 'string' },
    server: { type: 'string' },
  },
  strict: true,
});

function fail(message: string, code = 2): never {
  process.stderr.write(`bench:server: ${message}\n`);
  process.exit(code);
}

// Without a repository: the pyshop fixture (the figures test/server/overhead.test.ts prints, with the goals checked).
const repos = positionals.length > 0 ? positionals.map((p) => resolve(p)) : [join(root, 'test', 'fixtures', 'pyshop')];
for (const repo of repos) {
  if (!existsSync(repo) || !statSync(repo).isDirectory()) fail(`repository not found: ${repo} (pass the folder of a checked-out Python or Java repository)`);
}
if (values.server) serverPath = resolve(values.server);
if (!existsSync(serverPath)) fail(`${serverPath} is missing: run \`npm run build\` first (\`npm run bench:server\` does)`);
const requestCount = Math.max(1, Number(values.requests) || 100);
const debounceMs = Math.max(0, Number(values.debounce) || 0);

// ---------------------------------------------------------------------------------------------

interface Summary {
  n: number;
  median: number;
  p95: number;
  max: number;
}

function summary(xs: readonly number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number): number => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
  return { n: s.length, median: q(0.5), p95: q(0.95), max: s.at(-1) ?? 0 };
}

function fmt(s: Summary): string {
  return s.n === 0 ? 'n=0' : `median ${s.median.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, max ${s.max.toFixed(2)} ms (n=${s.n})`;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || ['node_modules', 'build', 'target', 'dist', '__pycache__'].includes(name)) continue;
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) sourceFiles(p, out);
    else if (/\.(py|java)$/.test(name) && st.size > 200 && st.size < 200_000) out.push(p);
  }
  return out;
}

/** An answer that depends on the prompt (distinct cache entries), at once. */
function instantAnswer(prompt: string): string {
  let h = 0;
  for (let i = Math.max(0, prompt.length - 400); i < prompt.length; i++) h = (h * 31 + prompt.charCodeAt(i)) >>> 0;
  return `bench_value_${h % 997}(first, second)`;
}

interface Session {
  connection: MessageConnection;
  child: ChildProcess;
  logs: string[];
  statuses: StatusParams[];
  status(): Promise<StatusParams>;
  /** Memory a second after a full collection (the server runs with --expose-gc), and RSS at the collection. */
  memory(): Promise<MemoryResult & { rssAtCollectionMB: number }>;
  close(): Promise<void>;
}

/** Hold the server as long as the environment variable says (ms), printing its pid, for smaps or a heap snapshot. */
async function holdIfAsked(variable: string, label: string, lsp: Session, memory: MemoryResult): Promise<void> {
  const ms = Number(process.env[variable] ?? 0);
  if (!ms) return;
  process.stderr.write(`${label}: server pid ${lsp.child.pid} ${JSON.stringify(memory)}\n`);
  await new Promise((r) => setTimeout(r, ms));
}

async function startServer(repo: string, model: OllamaTestServer, cacheDir: string): Promise<Session> {
  // CODERAG_BENCH_NODE_ARGS: extra node flags for the server process (e.g. --cpu-prof, --trace-gc).
  // --expose-gc: memory is read after a full collection, so garbage not yet collected is not counted.
  const nodeArgs = ['--expose-gc', ...SERVER_EXEC_ARGV, ...(process.env.CODERAG_BENCH_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)];
  const child = spawn(process.execPath, [...nodeArgs, serverPath, '--stdio'], { cwd: dirname(dirname(serverPath)), env: { ...process.env, ...SERVER_PROCESS_ENV, CODERAG_CACHE_DIR: cacheDir }, stdio: ['pipe', 'pipe', 'pipe'] });
  const logs: string[] = [];
  child.stderr?.on('data', (d: Buffer) => logs.push(d.toString('utf8')));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const statuses: StatusParams[] = [];
  const settings = {
    debounceMs,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
    ollama: { host: model.url, completionModel: MODEL },
    experimental: {
      model: { maxNewTokens: 24 },
      ollama: { keepAlive: '5m' },
      ...(values.query ? { query: { strategy: values.query } } : {}),
      ...(values.check ? { check: { mode: values.check } } : {}),
    },
  };
  connection.onNotification(StatusNotification.method, (s: StatusParams) => statuses.push(s));
  connection.onNotification('window/logMessage', (p: { message: string }) => logs.push(p.message));
  connection.onNotification('$/progress', () => undefined);
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/configuration', () => [settings]);
  connection.listen();
  const uri = pathToFileURL(repo).toString();
  await connection.sendRequest('initialize', {
    processId: process.pid,
    rootUri: uri,
    workspaceFolders: [{ uri, name: repo.split('/').filter(Boolean).pop() ?? 'repo' }],
    capabilities: { window: { workDoneProgress: true }, workspace: { didChangeWatchedFiles: { dynamicRegistration: true }, workspaceFolders: true } },
    initializationOptions: { trusted: true, settings },
  });
  await connection.sendNotification('initialized', {});
  return {
    connection,
    child,
    logs,
    statuses,
    status: () => connection.sendRequest(GetStatusRequest.method) as Promise<StatusParams>,
    async memory() {
      // Read again a second after the collection: right after it, RSS still holds the pages the
      // collector evacuated from (returned by its background threads; 10-60 MB more on java.base).
      const collected = (await connection.sendRequest(MemoryRequest.method, { collectGarbage: true })) as MemoryResult;
      await new Promise((r) => setTimeout(r, COLLECTION_SETTLE_MS));
      const settled = (await connection.sendRequest(MemoryRequest.method, { collectGarbage: false })) as MemoryResult;
      return { ...settled, collected: collected.collected, rssAtCollectionMB: collected.rssMB };
    },
    async close() {
      try {
        await Promise.race([connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 5000))]);
        await connection.sendNotification('exit');
      } catch {
        // already gone
      }
      await new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        const timer = setTimeout(() => (child.kill(), done()), 5000);
        child.once('exit', () => (clearTimeout(timer), done()));
      });
      connection.dispose();
    },
  };
}

/** The retrieval paths a trace lists, with the status of each that did not run normally. */
function pathsOf(explained: ExplainResult): string {
  const paths = explained.trace.retrieval?.paths ?? [];
  if (paths.length === 0) return `no retrieval (stages ${explained.trace.stages.map((s) => `${s.stage} ${s.status}`).join(', ')})`;
  return `paths ${paths.map((p) => (p.status === 'ok' ? p.path : `${p.path} ${p.status}${p.message ? ` (${p.message})` : ''}`)).join(', ')}`;
}

function itemsOf(r: InlineCompletionList | InlineCompletionItem[] | null): InlineCompletionItem[] {
  if (!r) return [];
  return Array.isArray(r) ? r : r.items;
}

interface Cursor {
  line: number;
  character: number;
}

/** Cursors spread over a file: line ends and mid-line positions of non-blank lines past the imports. */
function cursorsIn(lines: readonly string[], count: number): Cursor[] {
  const candidates: number[] = [];
  for (let i = Math.floor(lines.length * 0.15); i < lines.length; i++) if ((lines[i] ?? '').trim().length > 8) candidates.push(i);
  const out: Cursor[] = [];
  for (let k = 0; k < count && candidates.length > 0; k++) {
    const line = candidates[Math.floor(((k + 0.5) * candidates.length) / count)]!;
    const text = lines[line] ?? '';
    // Every other cursor mid-line (after the first token), the rest at the end of the line.
    const mid = text.search(/[=(.]\s*\S/);
    out.push({ line, character: k % 2 === 1 && mid > 0 ? mid + 1 : text.length });
  }
  return out;
}

interface RequestSample {
  firstInFile: boolean;
  roundTripMs: number;
  overheadMs: number;
  handlerMs: number;
  /** Server handler time outside the engine's pipeline (cache lookup, document text, bookkeeping). */
  outsidePipelineMs: number;
  promptMs: number;
  checkpointMs: number;
  stages: Record<string, number>;
  item: boolean;
}

interface RepoFigures {
  repo: string;
  files: number;
  items: number;
  /** Knowledge base parsed and extracted (the server's log line). */
  kbMs: number;
  readyMs: number;
  embeddedMs: number;
  denseItems: string;
  /** Texts the dense path embedded (the status's progress total), and per second of its stage. */
  denseEmbedded: number;
  denseItemsPerSecond: number;
  /** The completion request sent right after opening: when its answer came (from the start), its round trip, the paths it used. */
  firstCompletion: { atMs: number; roundTripMs: number; item: boolean; paths: string };
  loopWhileIndexing: { maxMs: number; p99Ms: number };
  loopWhileEmbedding: { maxMs: number; p99Ms: number };
  loopWhileEmbeddingWithRequests: { maxMs: number; p99Ms: number };
  loopWhileServing: { maxMs: number; p99Ms: number };
  pingWhileIndexing: Summary;
  pingWhileEmbedding: Summary;
  completionWhileEmbedding: Summary;
  rssAfterIndexMB: number;
  heapAfterIndexMB: number;
  externalAfterIndexMB: number;
  /** SETTLE_MS after indexing, idle. */
  rssSettledMB: number;
  /** After the first WARM_REQUESTS requests (when more are sent). */
  rssWarmMB?: number;
  heapSettledMB: number;
  externalSettledMB: number;
  rssAfterRequestsMB: number;
  /** RSS at the full collection itself, before the collector returned its pages. */
  rssAfterRequestsAtCollectionMB: number;
  heapAfterRequestsMB: number;
  /** The JS heap V8 holds (used plus free space not returned) after the requests. */
  heapTotalAfterRequestsMB: number;
  /** RSS and the JS heap V8 holds RESTED_MS after that reading, with no collection forced. */
  rssRestedMB: number;
  heapTotalRestedMB: number;
  externalAfterRequestsMB: number;
  /** Both memory readings were taken after a full collection. */
  memoryAfterGc: boolean;
  overhead: Summary;
  overheadFirst: Summary;
  overheadLater: Summary;
  fullTime: Summary;
  fullFirst: Summary;
  fullLater: Summary;
  outsidePipeline: Summary;
  prompt: Summary;
  checkpoint: Summary;
  stages: Record<string, Summary>;
  cacheHitRoundTrip: Summary;
  cacheHitServer?: { median: number; p95: number; samples: number };
  itemsReturned: number;
}

async function benchRepo(repo: string): Promise<RepoFigures> {
  const model = await startOllamaTestServer(async (prompt) => Promise.resolve({ text: instantAnswer(prompt) }), { models: [MODEL] });
  const freshCache = values.cache === undefined;
  const cacheDir = values.cache ? resolve(values.cache) : mkdtempSync(join(tmpdir(), 'coderag-bench-server-'));
  const files = sourceFiles(repo).sort();
  if (files.length === 0) fail(`${repo} has no Python or Java source files`);
  process.stdout.write(`\n## ${repo} (${files.length} source files; index cache ${freshCache ? 'fresh' : cacheDir})\n`);
  const t0 = performance.now();
  const lsp = await startServer(repo, model, cacheDir);
  try {
    // Phase 1 and 2: poll a tiny request every 100 ms while the server indexes, then embeds;
    // its round trip is how long any request waits behind the background work.
    // Windows (between two getStatus calls) with a completion request are kept apart: the
    // request's own synchronous work (probing) shows in the event-loop delay too.
    const loop = { indexing: { max: 0, p99: 0 }, embedding: { max: 0, p99: 0 }, embeddingWithRequests: { max: 0, p99: 0 } };
    const ping: { indexing: number[]; embedding: number[] } = { indexing: [], embedding: [] };
    let windowHadCompletion = false;
    const completionWhileEmbedding: number[] = [];
    let readyMs = 0;
    let embeddedMs = 0;
    // The status says when each folder's dense embedding has ended (ready, off or failed).
    let denseBuild: FolderIndexSummary['dense'];
    const denseDone = (s: StatusParams): boolean => {
      denseBuild = s.folders[0]?.dense;
      return s.folders.length > 0 && s.folders.every((f) => f.dense !== undefined && f.dense.state !== 'building');
    };
    const probeFile = files[Math.floor(files.length / 2)]!;
    const probeText = readFileSync(probeFile, 'utf8');
    const probeUri = pathToFileURL(probeFile).toString();
    const probeCursor = cursorsIn(probeText.split('\n'), 1)[0] ?? { line: 0, character: 0 };
    let probeOpen = false;
    let lastCompletion = 0;
    // A completion request right after opening, as an editor sends one when the user types at once.
    await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: probeUri, languageId: probeFile.endsWith('.py') ? 'python' : 'java', version: 1, text: probeText } });
    probeOpen = true;
    const f0 = performance.now();
    const firstItems = itemsOf((await lsp.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri: probeUri }, position: probeCursor, context: { triggerKind: 2 } })) as InlineCompletionList | InlineCompletionItem[] | null);
    const firstTrace = (await lsp.connection.sendRequest(ExplainRequest.method, firstItems[0]?.traceId ? { traceId: firstItems[0].traceId } : {})) as ExplainResult | null;
    const firstCompletion = {
      atMs: performance.now() - t0,
      roundTripMs: performance.now() - f0,
      item: firstItems.length > 0,
      paths: firstTrace ? pathsOf(firstTrace) : 'no trace',
    };
    let denseEmbedded = 0;
    lsp.connection.onNotification(StatusNotification.method, (st: StatusParams) => {
      lsp.statuses.push(st);
      if (st.indexing && /\(embeddings\)/.test(st.indexing.folder)) denseEmbedded = Math.max(denseEmbedded, st.indexing.total);
    });
    for (;;) {
      const p0 = performance.now();
      const s = await lsp.status();
      const rtt = performance.now() - p0;
      if (s.indexing && /\(embeddings\)/.test(s.indexing.folder)) denseEmbedded = Math.max(denseEmbedded, s.indexing.total);
      const ready = s.folders.length > 0 && s.folders.every((f) => f.state === 'ready' || f.state === 'failed');
      const phase = ready ? 'embedding' : 'indexing';
      if (ready && readyMs === 0) readyMs = performance.now() - t0;
      const d = s.stats.eventLoopDelayMs;
      const window = windowHadCompletion ? loop.embeddingWithRequests : loop[phase];
      if (d) {
        window.max = Math.max(window.max, d.max);
        window.p99 = Math.max(window.p99, d.p99);
      }
      // The first status after a completion request measured nothing of the background alone.
      if (!windowHadCompletion) ping[phase].push(rtt);
      windowHadCompletion = false;
      if (s.folders.some((f) => f.state === 'failed')) fail(`indexing failed: ${JSON.stringify(s.folders)}`, 1);
      if (ready && denseDone(s)) {
        embeddedMs = performance.now() - t0;
        break;
      }
      // While embedding: a completion request now and then, as an editor would send one.
      if (ready && performance.now() - lastCompletion > 1000) {
        if (!probeOpen) {
          await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri: probeUri, languageId: probeFile.endsWith('.py') ? 'python' : 'java', version: 1, text: probeText } });
          probeOpen = true;
        }
        lastCompletion = performance.now();
        // A different cursor each time so the cache does not answer.
        const c0 = performance.now();
        await lsp.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri: probeUri }, position: { line: probeCursor.line, character: Math.max(0, probeCursor.character - (completionWhileEmbedding.length % Math.max(1, probeCursor.character))) }, context: { triggerKind: 2 } });
        completionWhileEmbedding.push(performance.now() - c0);
        windowHadCompletion = true;
      }
      if (performance.now() - t0 > 3_600_000) fail('indexing and embedding took over an hour', 1);
      await new Promise((r) => setTimeout(r, 100));
    }
    if (probeOpen) await lsp.connection.sendNotification('textDocument/didClose', { textDocument: { uri: probeUri } });
    const denseLine = denseBuild
      ? `dense retrieval ${denseBuild.state}${denseBuild.state === 'ready' ? `: ${denseBuild.items} items embedded` : denseBuild.message ? `: ${denseBuild.message}` : ''}`
      : '';
    const kbLine = lsp.logs.join('\n').match(/indexed [^\n]*? in (\d+) ms/);
    const kbMs = kbLine ? Number(kbLine[1]) : 0;
    const afterIndex = await lsp.status();
    const memAfterIndex = await lsp.memory();
    // Idle for a moment: the encoder's thread stops soon after a bulk run (Server.ts) and its memory comes back.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const memSettled = await lsp.memory();
    await holdIfAsked('CODERAG_BENCH_PAUSE_MS', 'paused', lsp, memSettled);
    const items = afterIndex.folders.reduce((n, f) => n + (f.items ?? 0), 0);

    // Phase 3: completion requests at varied cursors, four per file, files spread over the repository.
    const perFile = 4;
    const fileCount = Math.min(files.length, Math.ceil(requestCount / perFile));
    const step = files.length / fileCount;
    const samples: RequestSample[] = [];
    const cacheRoundTrips: number[] = [];
    const seenTraces = new Set<string>();
    let version = 10;
    // Memory once the first requests have loaded and warmed what completions use (sessions, caches): growth after it is what the requests keep.
    let memWarm: MemoryResult | undefined;
    for (let f = 0; f < fileCount && samples.length < requestCount; f++) {
      const file = files[Math.floor(f * step)]!;
      const text = readFileSync(file, 'utf8');
      const lines = text.split('\n');
      const uri = pathToFileURL(file).toString();
      await lsp.connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: file.endsWith('.py') ? 'python' : 'java', version: version++, text } });
      const cursors = cursorsIn(lines, perFile);
      for (const [k, cursor] of cursors.entries()) {
        if (samples.length >= requestCount) break;
        // The unfinished file: the text up to the cursor's line cut at the cursor, the rest kept.
        const edited = [...lines];
        edited[cursor.line] = (edited[cursor.line] ?? '').slice(0, cursor.character);
        await lsp.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: version++ }, contentChanges: [{ text: edited.join('\n') }] });
        const c0 = performance.now();
        const result = itemsOf((await lsp.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri }, position: cursor, context: { triggerKind: 2 } })) as InlineCompletionList | InlineCompletionItem[] | null);
        const roundTripMs = performance.now() - c0;
        if (result[0]?.fromCache) continue;
        // The item names its trace; with no item, the server's last trace is this request's (requests go one at a time).
        const explained = (await lsp.connection.sendRequest(ExplainRequest.method, result[0]?.traceId ? { traceId: result[0].traceId } : {})) as ExplainResult | null;
        const server = explained?.server;
        if (!explained || !server || server.cache !== 'miss' || seenTraces.has(explained.trace.id)) continue;
        seenTraces.add(explained.trace.id);
        const stages: Record<string, number> = {};
        for (const st of explained.trace.stages) stages[st.stage] = (stages[st.stage] ?? 0) + st.elapsedMs;
        samples.push({
          firstInFile: k === 0,
          roundTripMs,
          overheadMs: server.overheadMs,
          handlerMs: server.handlerMs,
          outsidePipelineMs: Math.max(0, server.handlerMs - server.debounceMs - explained.trace.totalMs),
          promptMs: server.promptMs ?? 0,
          checkpointMs: server.checkpointMs ?? 0,
          stages,
          item: result.length > 0,
        });
        if (samples.length === WARM_REQUESTS && requestCount > WARM_REQUESTS) memWarm = await lsp.memory();
        // Typing through the shown suggestion: its first characters, one request each, from the cache.
        const shown = result[0] && typeof result[0].insertText === 'string' ? result[0].insertText : '';
        for (let typed = 1; typed <= Math.min(3, shown.length - 1); typed++) {
          const through = [...edited];
          through[cursor.line] = (through[cursor.line] ?? '') + shown.slice(0, typed);
          await lsp.connection.sendNotification('textDocument/didChange', { textDocument: { uri, version: version++ }, contentChanges: [{ text: through.join('\n') }] });
          const h0 = performance.now();
          const hit = itemsOf((await lsp.connection.sendRequest(InlineCompletionRequest.method, { textDocument: { uri }, position: { line: cursor.line, character: cursor.character + typed }, context: { triggerKind: 2 } })) as InlineCompletionList | InlineCompletionItem[] | null);
          const ms = performance.now() - h0;
          if (hit[0]?.fromCache) cacheRoundTrips.push(ms);
        }
      }
      await lsp.connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
    }
    const end = await lsp.status();
    const memEnd = await lsp.memory();
    await holdIfAsked('CODERAG_BENCH_PAUSE_END_MS', 'paused after the requests', lsp, memEnd);
    // What an editor's server holds once the user pauses: no forced collection, after V8's memory
    // reducer (it starts 8 s after allocation slows down) has had its turn.
    await new Promise((r) => setTimeout(r, RESTED_MS));
    const memRested = (await lsp.connection.sendRequest(MemoryRequest.method, { collectGarbage: false })) as MemoryResult;
    const stageNames = [...new Set(samples.flatMap((s) => Object.keys(s.stages)))];
    const figures: RepoFigures = {
      repo,
      files: files.length,
      items,
      kbMs,
      readyMs,
      embeddedMs,
      denseItems: denseLine,
      denseEmbedded,
      denseItemsPerSecond: embeddedMs > readyMs ? denseEmbedded / ((embeddedMs - readyMs) / 1000) : 0,
      firstCompletion,
      loopWhileIndexing: { maxMs: loop.indexing.max, p99Ms: loop.indexing.p99 },
      loopWhileEmbedding: { maxMs: loop.embedding.max, p99Ms: loop.embedding.p99 },
      loopWhileEmbeddingWithRequests: { maxMs: loop.embeddingWithRequests.max, p99Ms: loop.embeddingWithRequests.p99 },
      loopWhileServing: { maxMs: end.stats.eventLoopDelayMs?.max ?? 0, p99Ms: end.stats.eventLoopDelayMs?.p99 ?? 0 },
      pingWhileIndexing: summary(ping.indexing),
      pingWhileEmbedding: summary(ping.embedding),
      completionWhileEmbedding: summary(completionWhileEmbedding),
      rssAfterIndexMB: memAfterIndex.rssMB,
      heapAfterIndexMB: memAfterIndex.heapUsedMB,
      externalAfterIndexMB: memAfterIndex.externalMB,
      rssSettledMB: memSettled.rssMB,
      rssWarmMB: memWarm?.rssMB,
      heapSettledMB: memSettled.heapUsedMB,
      externalSettledMB: memSettled.externalMB,
      rssAfterRequestsMB: memEnd.rssMB,
      rssAfterRequestsAtCollectionMB: memEnd.rssAtCollectionMB,
      heapAfterRequestsMB: memEnd.heapUsedMB,
      heapTotalAfterRequestsMB: memEnd.heapTotalMB,
      rssRestedMB: memRested.rssMB,
      heapTotalRestedMB: memRested.heapTotalMB,
      externalAfterRequestsMB: memEnd.externalMB,
      memoryAfterGc: memAfterIndex.collected && memEnd.collected,
      overhead: summary(samples.map((s) => s.overheadMs)),
      overheadFirst: summary(samples.filter((s) => s.firstInFile).map((s) => s.overheadMs)),
      overheadLater: summary(samples.filter((s) => !s.firstInFile).map((s) => s.overheadMs)),
      fullTime: summary(samples.map((s) => s.roundTripMs)),
      fullFirst: summary(samples.filter((s) => s.firstInFile).map((s) => s.roundTripMs)),
      fullLater: summary(samples.filter((s) => !s.firstInFile).map((s) => s.roundTripMs)),
      outsidePipeline: summary(samples.map((s) => s.outsidePipelineMs)),
      prompt: summary(samples.map((s) => s.promptMs)),
      checkpoint: summary(samples.map((s) => s.checkpointMs)),
      stages: Object.fromEntries(stageNames.map((n) => [n, summary(samples.map((s) => s.stages[n] ?? 0))])),
      cacheHitRoundTrip: summary(cacheRoundTrips),
      ...(end.stats.cacheHitMs ? { cacheHitServer: end.stats.cacheHitMs } : {}),
      itemsReturned: samples.filter((s) => s.item).length,
    };
    print(figures);
    return figures;
  } finally {
    await lsp.close();
    await model.close();
    if (freshCache) rmSync(cacheDir, { recursive: true, force: true });
  }
}

function print(f: RepoFigures): void {
  const line = (s: string): boolean => process.stdout.write(`${s}\n`);
  line(`cold index per stage: knowledge base ${(f.kbMs / 1000).toFixed(1)} s (server log), other paths ready at ${(f.readyMs / 1000).toFixed(1)} s, dense ${((f.embeddedMs - f.readyMs) / 1000).toFixed(1)} s (${f.denseEmbedded} texts, ${f.denseItemsPerSecond.toFixed(0)} items/s); every path ready after ${(f.embeddedMs / 1000).toFixed(1)} s`);
  line(`first completion after opening: answered ${(f.firstCompletion.atMs / 1000).toFixed(2)} s after the start (round trip ${f.firstCompletion.roundTripMs.toFixed(0)} ms, ${f.firstCompletion.item ? 'an item' : 'no item'}; ${f.firstCompletion.paths})`);
  line(`items indexed: ${f.items}; ready after ${(f.readyMs / 1000).toFixed(1)} s, dense embeddings done after ${(f.embeddedMs / 1000).toFixed(1)} s (${f.denseItems.replace(/^\[\w+\]\s*/, '')})`);
  line(`event-loop delay: while indexing max ${f.loopWhileIndexing.maxMs.toFixed(1)} ms (p99 ${f.loopWhileIndexing.p99Ms.toFixed(1)} ms); while embedding max ${f.loopWhileEmbedding.maxMs.toFixed(1)} ms (p99 ${f.loopWhileEmbedding.p99Ms.toFixed(1)} ms) [windows with a completion request: max ${f.loopWhileEmbeddingWithRequests.maxMs.toFixed(1)} ms]; while serving the requests max ${f.loopWhileServing.maxMs.toFixed(1)} ms (p99 ${f.loopWhileServing.p99Ms.toFixed(1)} ms)`);
  line(`round trip of coderag/getStatus while indexing: ${fmt(f.pingWhileIndexing)}`);
  line(`round trip of coderag/getStatus while embedding: ${fmt(f.pingWhileEmbedding)}`);
  line(`completion requests while embedding (full time): ${fmt(f.completionWhileEmbedding)}`);
  line(`memory${f.memoryAfterGc ? ` (${COLLECTION_SETTLE_MS / 1000} s after a full collection)` : ''}: rss ${f.rssAfterIndexMB} MB after indexing (JS heap ${f.heapAfterIndexMB} MB, external ${f.externalAfterIndexMB} MB, native rest ${f.rssAfterIndexMB - f.heapAfterIndexMB - f.externalAfterIndexMB} MB), rss ${f.rssSettledMB} MB ${SETTLE_MS / 1000} s later, idle (JS heap ${f.heapSettledMB} MB, external ${f.externalSettledMB} MB), rss ${f.rssAfterRequestsMB} MB after ${f.overhead.n} requests (${f.rssAfterRequestsAtCollectionMB} MB at the collection; JS heap ${f.heapAfterRequestsMB} MB of ${f.heapTotalAfterRequestsMB} MB held, external ${f.externalAfterRequestsMB} MB; ${f.rssSettledMB ? (((f.rssAfterRequestsMB - f.rssSettledMB) / f.rssSettledMB) * 100).toFixed(1) : '?'}% growth from the idle figure${f.rssWarmMB ? `; ${f.rssWarmMB} MB after the first ${WARM_REQUESTS}, ${(((f.rssAfterRequestsMB - f.rssWarmMB) / f.rssWarmMB) * 100).toFixed(1)}% growth from there` : ''}); ${RESTED_MS / 1000} s later, no collection forced: rss ${f.rssRestedMB} MB (JS heap ${f.heapTotalRestedMB} MB held)`);
  line(`server overhead per request (handler minus debounce, query, retrieve, rerank, generate, model preparation): ${fmt(f.overhead)}`);
  line(`  first request in a newly opened file: ${fmt(f.overheadFirst)}`);
  line(`  later requests in the file:           ${fmt(f.overheadLater)}`);
  line(`  of which prompt + postprocess: ${fmt(f.prompt)}; yielding to pending messages: ${fmt(f.checkpoint)}; outside the pipeline: ${fmt(f.outsidePipeline)}`);
  line(`full request time (client round trip, debounce ${debounceMs} ms): ${fmt(f.fullTime)}`);
  line(`  first request in a newly opened file: ${fmt(f.fullFirst)}`);
  line(`  later requests in the file:           ${fmt(f.fullLater)}`);
  line(`stages: ${Object.entries(f.stages).map(([n, s]) => `${n} median ${s.median.toFixed(1)} / p95 ${s.p95.toFixed(1)} ms`).join('; ')}`);
  const c = f.cacheHitServer;
  line(`typing-through cache hits: round trip ${fmt(f.cacheHitRoundTrip)}; server handler ${c ? `median ${c.median.toFixed(2)} ms, p95 ${c.p95.toFixed(2)} ms (n=${c.samples})` : 'none'}`);
  line(`requests with an item: ${f.itemsReturned}/${f.overhead.n}`);
  line(`summary | ${relative(root, f.repo) || f.repo} | files ${f.files} | items ${f.items} | kb ${(f.kbMs / 1000).toFixed(1)} s | ready ${(f.readyMs / 1000).toFixed(1)} s | dense ${((f.embeddedMs - f.readyMs) / 1000).toFixed(1)} s | ${f.denseItemsPerSecond.toFixed(0)} items/s | first completion ${(f.firstCompletion.atMs / 1000).toFixed(2)} s | all paths ${(f.embeddedMs / 1000).toFixed(1)} s | rss ${f.rssAfterIndexMB} MB, ${f.rssSettledMB} MB idle -> ${f.rssAfterRequestsMB} MB after ${f.overhead.n} requests |`);
  const goals = [`overhead median ${f.overhead.median.toFixed(2)} ms ${f.overhead.median <= 15 ? '<=' : '>'} 15 ms`, `cache hit median ${(c?.median ?? f.cacheHitRoundTrip.median).toFixed(2)} ms ${(c?.median ?? f.cacheHitRoundTrip.median) <= 5 ? '<=' : '>'} 5 ms`];
  line(`goals: ${goals.join('; ')}`);
}

async function main(): Promise<void> {
  process.stdout.write(`# bench:server — ${serverPath}, ${requestCount} requests per repository, debounce ${debounceMs} ms, query ${values.query ?? "the server's default"}, model answers at once (${MODEL})\n`);
  const all: RepoFigures[] = [];
  for (const repo of repos) all.push(await benchRepo(repo));
  if (values.json) {
    writeFileSync(resolve(values.json), JSON.stringify(all.map((f) => ({ ...f, repo: relative(root, f.repo) || f.repo })), null, 2));
    process.stdout.write(`\nfigures written to ${values.json}\n`);
  }
}

main().catch((e: unknown) => fail(e instanceof Error ? (e.stack ?? e.message) : String(e), 1));

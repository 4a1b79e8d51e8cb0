// `npm run bench:typing`: a typing replay against the language server at default settings, with a
// real llama.cpp engine (bench/engine) behind an Ollama-compatible endpoint. Each case's line is
// typed key by key into the document and a suggestion is asked at every key, as an editor does.
// Per request it records the prompt's tokens, the tokens the engine had to evaluate (the rest it
// reused from the prompt before), the time to the first token, the request's whole time, and
// whether the line's cross-file definitions were in the prompt; then medians, means and p90 per
// language and server build. Several builds (`--server A/dist/server.js`, e.g. an older commit's)
// run in the same process against the same engine, case by case, so their figures compare.
//
// Usage: npm run bench:typing -- --model qwen-0.5b|qwen-1.5b|lm (or --gguf FILE) [--gguf-name qwen2.5-coder:1.5b-base] --cases F.jsonl
//   --repos DIR [--cases F2 --repos DIR2 ...] [--per-repo 2] [--max-keys 0] [--server PATH ...]
//   [--threads 1] [--cache DIR] [--json OUT]
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  ExplainRequest,
  InlineCompletionRequest,
  StatusNotification,
  type ExplainResult,
  type StatusParams,
} from '../src/protocol/protocol';

const root = resolve(__dirname, '..');

interface CrossfileDef {
  name: string;
  file: string;
}
export interface LineCase {
  prompt: string;
  groundtruth: string;
  right_context: string;
  metadata: { task_id: string; repository: string; file: string; lang: 'python' | 'java'; crossfile_defs?: CrossfileDef[] };
}

/** One keystroke's request as the replay saw it. */
export interface KeyRecord {
  build: string;
  lang: 'python' | 'java';
  task: string;
  key: number;
  promptTokens: number;
  evaluatedTokens: number;
  /** Share of the prompt after its longest common prefix with the server's previous request. */
  reread: number;
  /** Time to the first token; where none came (the request was cut first) the time until it was cut. */
  ttftMs: number;
  /** A first token came before the request ended. */
  firstToken: boolean;
  engineMs: number;
  requestMs: number;
  /** Tokens evaluated by warm-up requests the server sent during this keystroke, and their time. */
  warmTokens: number;
  /** Tokens evaluated by the keystroke's other generating requests (the body mode's sketch). */
  otherTokens?: number;
  warmMs?: number;
  /** Every cross-file definition of the line in the prompt (undefined: the prompt was not seen). */
  defsInPrompt?: boolean;
  shown: boolean;
}

export function readCases(file: string, perRepo: number): LineCase[] {
  const byRepo = new Map<string, LineCase[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const c = JSON.parse(line) as LineCase;
    const list = byRepo.get(c.metadata.repository) ?? [];
    if (list.length < perRepo) list.push(c);
    byRepo.set(c.metadata.repository, list);
  }
  return [...byRepo.values()].flat();
}

/** Whether the prompt shows `def`: a section of its file (repository form or comment heading) that names it. */
export function promptHolds(prompt: string, def: CrossfileDef): boolean {
  const sections = prompt.split(/<\|file_sep\|>|<file_sep>|\n(?:#|\/\/) (?=\S+\n)/);
  const name = new RegExp(`(^|[^A-Za-z0-9_$])${def.name.replace(/[$]/g, '\\$')}([^A-Za-z0-9_$]|$)`);
  return sections.some((s) => s.startsWith(`${def.file}\n`) && name.test(s));
}

export interface Lsp {
  connection: MessageConnection;
  ready: Promise<void>;
  /** The server's process id. */
  pid: number | undefined;
  close(): Promise<void>;
}

/** `onLog`: the server's log lines, debug ones included (CODERAG_LOG=debug), as they arrive. */
export function startServer(serverPath: string, repo: string, settings: unknown, cacheDir: string, onLog?: (line: string) => void): Lsp {
  const child = spawn(process.execPath, [serverPath, '--stdio'], {
    cwd: root,
    env: { ...process.env, CODERAG_CACHE_DIR: cacheDir, ...(onLog ? { CODERAG_LOG: 'debug' } : {}) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stderr?.resume();
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  let markReady!: () => void;
  const ready = new Promise<void>((r) => (markReady = r));
  connection.onNotification(StatusNotification.method, (s: StatusParams) => {
    const dense = s.folders.every((f) => f.state === 'ready' || f.state === 'failed');
    if (s.state === 'ready' && !s.indexing && dense) markReady();
  });
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.onRequest('workspace/configuration', () => [settings]);
  connection.onNotification('window/logMessage', (m: { message?: string }) => onLog?.(m.message ?? ''));
  connection.onNotification('$/progress', () => undefined);
  connection.listen();
  const uri = pathToFileURL(repo).toString();
  const init = connection
    .sendRequest('initialize', {
      processId: process.pid,
      rootUri: uri,
      workspaceFolders: [{ uri, name: 'repo' }],
      capabilities: { window: { workDoneProgress: true }, workspace: { workspaceFolders: true } },
      initializationOptions: { trusted: true, settings },
    })
    .then(() => connection.sendNotification('initialized', {}));
  return {
    connection,
    pid: child.pid,
    ready: init.then(() => ready),
    async close() {
      await Promise.race([connection.sendRequest('shutdown').catch(() => undefined), new Promise((r) => setTimeout(r, 3000))]);
      child.kill();
      connection.dispose();
    },
  };
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The summary table: one row per build and language. */
export function summarize(records: readonly KeyRecord[]): string {
  const columns = [
    'build',
    'lang',
    'requests',
    're-read mean',
    'median',
    'p90',
    'TTFT median ms',
    'mean',
    'p90',
    'first token before the cut',
    'keystroke p90 ms',
    'warm-up tokens',
    'warm-up ms',
    "other requests' tokens",
    'defs in prompt (first key)',
    'defs in prompt (all keys)',
  ];
  const rows = [`| ${columns.join(' | ')} |`, `|${columns.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  const groups = new Map<string, KeyRecord[]>();
  for (const r of records) groups.set(`${r.build}\t${r.lang}`, [...(groups.get(`${r.build}\t${r.lang}`) ?? []), r]);
  const f = (x: number, d = 3): string => (Number.isNaN(x) ? '-' : x.toFixed(d));
  const pct = (xs: readonly KeyRecord[], hit: (r: KeyRecord) => boolean | undefined): string =>
    xs.length === 0 ? '-' : `${((100 * xs.filter(hit).length) / xs.length).toFixed(1)}% of ${xs.length}`;
  for (const [key, rs] of groups) {
    const [build, lang] = key.split('\t');
    const measured = rs.filter((r) => r.promptTokens > 0);
    const reread = measured.map((r) => r.reread);
    const ttft = measured.map((r) => r.ttftMs);
    const cells = [
      build,
      lang,
      String(measured.length),
      f(mean(reread)),
      f(quantile(reread, 0.5)),
      f(quantile(reread, 0.9)),
      f(quantile(ttft, 0.5), 0),
      f(mean(ttft), 0),
      f(quantile(ttft, 0.9), 0),
      pct(measured, (r) => r.firstToken),
      f(
        quantile(
          rs.map((r) => r.requestMs),
          0.9,
        ),
        0,
      ),
      String(rs.reduce((n, r) => n + r.warmTokens, 0)),
      f(
        rs.reduce((n, r) => n + (r.warmMs ?? 0), 0),
        0,
      ),
      String(rs.reduce((n, r) => n + (r.otherTokens ?? 0), 0)),
      pct(
        rs.filter((r) => r.key === 0 && r.defsInPrompt !== undefined),
        (r) => r.defsInPrompt,
      ),
      pct(
        rs.filter((r) => r.defsInPrompt !== undefined),
        (r) => r.defsInPrompt,
      ),
    ];
    rows.push(`| ${cells.join(' | ')} |`);
  }
  return rows.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gguf: { type: 'string' },
      model: { type: 'string' },
      'gguf-name': { type: 'string', default: 'qwen2.5-coder:1.5b-base' },
      cases: { type: 'string', multiple: true, default: [] },
      repos: { type: 'string', multiple: true, default: [] },
      'per-repo': { type: 'string', default: '2' },
      'max-keys': { type: 'string', default: '0' },
      server: { type: 'string', multiple: true, default: [] },
      threads: { type: 'string', default: '1' },
      'max-new-tokens': { type: 'string', default: '16' },
      ctx: { type: 'string', default: '8192' },
      cache: { type: 'string' },
      json: { type: 'string' },
    },
  });
  // A named model is written by bench/engine at benchmark time (never committed): Qwen2.5-Coder's
  // layer shapes with random weights for timing, or the shipped LM exported to GGUF.
  if (!values.gguf && values.model) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- bench/engine is a folder of its own, loaded only by this script
    const models = require(join(root, 'bench', 'engine', 'models.ts')) as {
      randomQwenGguf(size: '0.5b' | '1.5b'): Promise<string>;
      shippedLmGguf(): Promise<string>;
    };
    values.gguf =
      values.model === 'lm' ? await models.shippedLmGguf() : await models.randomQwenGguf(values.model === 'qwen-1.5b' ? '1.5b' : '0.5b');
  }
  if (!values.gguf || values.cases.length === 0 || values.cases.length !== values.repos.length) {
    throw new Error('usage: bench:typing --gguf FILE --cases F.jsonl --repos DIR [--cases F2 --repos DIR2] [--server PATH ...]');
  }
  const servers = values.server.length > 0 ? values.server : [join(root, 'dist', 'server.js')];
  const cacheDir = values.cache ?? join(tmpdir(), 'coderag-bench-typing-cache');
  mkdirSync(cacheDir, { recursive: true });
  // The engine is a benchmark dependency of its own (bench/engine), loaded only here.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
  const engineModule = require(join(root, 'bench', 'engine', 'server.ts')) as {
    startEngineServer: typeof import('../bench/engine/server').startEngineServer;
  };
  const engine = await engineModule.startEngineServer({
    modelPath: values.gguf,
    threads: Number(values.threads),
    contextSize: Number(values.ctx),
    modelNames: [values['gguf-name']],
  });
  // Default settings but the answer's length: random weights never end a line, so every request would
  // generate its 48 tokens; a real model ends a line in about 16. What is measured (the prompt, what
  // the engine re-reads, the time to the first token) does not depend on it.
  const settings = {
    model: { provider: 'ollama' },
    ollama: { host: engine.url, completionModel: values['gguf-name'] },
    experimental: { model: { maxNewTokens: Number(values['max-new-tokens']) } },
  };
  const records: KeyRecord[] = [];
  const maxKeys = Number(values['max-keys']);
  try {
    for (let i = 0; i < values.cases.length; i++) {
      const cases = readCases(values.cases[i]!, Number(values['per-repo']));
      const repos = values.repos[i]!;
      const byRepo = new Map<string, LineCase[]>();
      for (const c of cases) byRepo.set(c.metadata.repository, [...(byRepo.get(c.metadata.repository) ?? []), c]);
      for (const [repo, repoCases] of byRepo) {
        for (const serverPath of servers) {
          const build = servers.length === 1 ? 'this' : serverPath;
          const lsp = startServer(serverPath, join(repos, repo), settings, cacheDir);
          await lsp.ready;
          for (const c of repoCases) records.push(...(await replay(lsp.connection, engine, join(repos, repo), c, build, maxKeys)));
          await lsp.close();
          process.stderr.write(`${repo} ${build}: ${records.length} requests so far\n`);
        }
      }
    }
  } finally {
    await engine.close();
  }
  console.log(summarize(records));
  if (values.json) writeFileSync(values.json, JSON.stringify(records, null, 1));
}

/** Types one case's line key by key, asking for a suggestion at every key. */
async function replay(
  connection: MessageConnection,
  engine: EngineServer,
  repoDir: string,
  c: LineCase,
  build: string,
  maxKeys: number,
): Promise<KeyRecord[]> {
  const uri = pathToFileURL(join(repoDir, c.metadata.file)).toString();
  const languageId = c.metadata.lang;
  const line = c.prompt.split('\n').length - 1;
  const column0 = c.prompt.length - c.prompt.lastIndexOf('\n') - 1;
  const text = (k: number): string => c.prompt + c.groundtruth.slice(0, k) + c.right_context;
  let version = 1;
  await connection.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: version++, text: text(0) } });
  const out: KeyRecord[] = [];
  const keys: Array<{ k: number; t0: number; requestMs: number; prompt: string | undefined; shown: boolean }> = [];
  const typed = maxKeys > 0 ? Math.min(maxKeys, c.groundtruth.length) : c.groundtruth.length;
  for (let k = 0; k < typed; k++) {
    if (k > 0)
      await connection.sendNotification('textDocument/didChange', {
        textDocument: { uri, version: version++ },
        contentChanges: [{ text: text(k) }],
      });
    const t0 = performance.now();
    const answer = (await connection.sendRequest(InlineCompletionRequest.method, {
      textDocument: { uri },
      position: { line, character: column0 + k },
      context: { triggerKind: 1 },
    })) as { items?: Array<{ traceId?: string }> } | null;
    const requestMs = performance.now() - t0;
    const explained = (await connection.sendRequest(
      ExplainRequest.method,
      answer?.items?.[0]?.traceId ? { traceId: answer.items[0].traceId } : {},
    )) as ExplainResult | null;
    keys.push({ k, t0, requestMs, prompt: explained?.trace.prompt?.text, shown: (answer?.items?.length ?? 0) > 0 });
  }
  // The engine logs a request when it ends (one the client closed, after it stops): wait until it is idle,
  // then give each keystroke the requests that arrived between it and the next one.
  for (let n = -1; n !== engine.stats().length;) {
    n = engine.stats().length;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const stats = engine.stats().filter((st) => st.arrivedMs >= keys[0]!.t0);
  const defs = c.metadata.crossfile_defs ?? [];
  for (const [i, key] of keys.entries()) {
    const until = keys[i + 1]?.t0 ?? Infinity;
    const mine = stats.filter((st) => st.arrivedMs >= key.t0 && st.arrivedMs < until);
    // A warm-up asks for one token; the suggestion's request for more.
    const gen = mine.filter((st) => st.maxTokens > 1).at(-1);
    const warm = mine.filter((st) => st.maxTokens === 1);
    out.push({
      build,
      lang: c.metadata.lang,
      task: c.metadata.task_id,
      key: key.k,
      promptTokens: gen?.promptTokens ?? 0,
      evaluatedTokens: gen?.evaluatedTokens ?? 0,
      reread: gen && gen.promptTokens > 0 ? gen.evaluatedTokens / gen.promptTokens : 0,
      ttftMs: gen?.ttftMs ?? NaN,
      firstToken: (gen?.generatedTokens ?? 0) > 0,
      engineMs: gen?.totalMs ?? NaN,
      requestMs: key.requestMs,
      warmTokens: warm.reduce((n, st) => n + st.evaluatedTokens, 0),
      otherTokens: mine.filter((st) => st.maxTokens > 1 && st !== gen).reduce((n, st) => n + st.evaluatedTokens, 0),
      warmMs: warm.reduce((n, st) => n + st.totalMs, 0),
      ...(key.prompt !== undefined && defs.length > 0 ? { defsInPrompt: defs.every((d) => promptHolds(key.prompt!, d)) } : {}),
      shown: key.shown,
    });
  }
  await connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  return out;
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : String(e));
    process.exit(1);
  });
}

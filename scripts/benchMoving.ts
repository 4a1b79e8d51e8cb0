// `npm run bench:moving`: a moving session against the language server at default settings, with a
// real llama.cpp engine behind it. For each case a line is typed, key by key, at four places in
// turn: the case's own place, another function of the same file at least 60 lines away, a file of
// the same package, and the case's place again (another line within 20 lines of the case's, so that
// the suggestion shown there before is not simply typed through). Before each place the user pauses (the cursor
// moved), so what the server does in idle time counts. Per request it records what the engine
// evaluated and reused, as the engine reports it, the time from the key to the first token, the
// request's whole time, how long it waited behind a warm-up, and (at the case's place) whether the
// prompt held the line's cross-file definitions. Several builds run in the same process against the
// same engine, case by case, so their figures compare.
//
// Engines: the project's own (bench/engine, Ollama's API; `--model` or `--gguf`) or a running
// llama.cpp server (`--llama-url http://127.0.0.1:8012`, started with `--alias qwen2.5-coder:1.5b-base`),
// reached through a recording proxy that reads each answer's `timings`; or llama.cpp in the language server itself
// (`--local F.gguf`: `provider: local`), where what each read evaluated and reused comes from the server's debug log line
// per read (warm-ups reach no trace) and, for the suggestion's request, from its trace (Explain) as well.
//
// Usage: npm run bench:moving -- (--model qwen-1.5b | --gguf F | --llama-url URL | --local F) --cases F.jsonl --repos DIR
//   [--cases F2 --repos DIR2 ...] [--per-repo 1] [--max-keys 8] [--pause-ms 2000] [--server PATH ...]
//   [--threads 1] [--cache DIR] [--json OUT]
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { ExplainRequest, InlineCompletionRequest, type ExplainResult } from '../src/protocol/protocol';
import type { RequestStat } from '../bench/engine/server';
import { mean, promptHolds, quantile, readCases, startServer, type LineCase } from './benchTyping';

const root = resolve(__dirname, '..');

/**
 * One request as the engine saw it: the project's engine's statistics, or the proxy's reading of
 * llama.cpp's `timings` in the same terms.
 */
export type EngineRequest = Omit<RequestStat, 'endpoint'> & {
  /** The client closed it before its answer (an idle read cut by a keystroke). */
  cut?: boolean;
  /** The request's body (llama.cpp's server only: what an editor client sent it). */
  body?: Record<string, unknown>;
  /** When the answer came back. */
  endedMs?: number;
};

export interface Engine {
  url: string;
  stats(): EngineRequest[];
  /** When each recorded request arrived, answered or not yet (llamaEngine only). */
  arrivals?(): number[];
  /** Recorded requests not answered or cut yet (llamaEngine only). */
  inFlight?(): number;
  close(): Promise<void>;
  settings(): unknown;
  /** The language server's log lines (the in-process engine reads them). */
  onLog?(line: string): void;
}

/** One keystroke's request. */
export interface MoveRecord {
  build: string;
  lang: 'python' | 'java';
  task: string;
  /** 1: the case's place, 2: another function of its file, 3: a file of its package, 4: the case's place again. */
  place: number;
  key: number;
  promptTokens: number;
  evaluatedTokens: number;
  reusedTokens: number;
  /** Key sent to first token, as the user waits for it (warm-ups it waited for included). */
  ttftMs: number;
  requestMs: number;
  /** How long it waited for a warm-up the server had in flight when the key came. */
  waitedMs: number;
  /** Tokens that warm-ups and idle reads evaluated between this key and the next. */
  warmTokens: number;
  /**
   * What the server evaluated from this key to its suggestion's request, that request included:
   * at a place's first key, the place's whole read (the warm-ups it sent first count too).
   */
  readTokens: number;
  defsInPrompt?: boolean;
  /** What the suggestion's request read, as its trace says (Explain's `model.read`; the in-process engine's). */
  traceEvaluated?: number;
  /** A saved place's state was loaded by a read up to the suggestion's request (the in-process engine). */
  restored?: boolean;
  /**
   * The requests between this key and the next as a llama.cpp server got them, in order (their prompts and what
   * each asked), and whether each counts in `readTokens`: scripts/replayMoving.ts reads them into the in-process engine.
   */
  requests?: SentRequest[];
}

/** One request as an editor client sent it to a llama.cpp server. */
export interface SentRequest {
  prompt: string;
  maxTokens: number;
  /** It arrived by the key's suggestion request (it counts in the key's `readTokens`). */
  counted: boolean;
  cut?: boolean;
  evaluatedTokens: number;
}

/** A place to type at: the document's text before the line is typed, the line, and where it goes. */
export interface Place {
  uri: string;
  lang: 'python' | 'java';
  text: (k: number) => string;
  line: number;
  column: number;
  typed: string;
}

/** A code line worth typing: indented, not a comment, with a call, an assignment or a member. */
function typable(line: string): boolean {
  const t = line.trim();
  return /^\s/.test(line) && t.length >= 12 && t.length <= 90 && !/^(#|\/\/|\*|\/\*|"""|''')/.test(t) && /[(=.]/.test(t);
}

/** The line of `lines` nearest `target` that is worth typing and lies `minGap` or more lines from `avoid`. */
function pickLine(lines: readonly string[], target: number, avoid: number, minGap: number): number | undefined {
  let best: number | undefined;
  lines.forEach((l, i) => {
    if (Math.abs(i - avoid) < minGap || !typable(l)) return;
    if (best === undefined || Math.abs(i - target) < Math.abs(best - target)) best = i;
  });
  return best;
}

/** Typing `lines[i]` again from its indentation, in the document at `file`. */
function placeInFile(file: string, lang: 'python' | 'java', lines: readonly string[], i: number): Place {
  const indent = /^\s*/.exec(lines[i]!)![0];
  const typed = lines[i]!.slice(indent.length);
  const before = [...lines.slice(0, i), indent].join('\n');
  const after = lines.slice(i + 1).join('\n');
  return {
    uri: pathToFileURL(file).toString(),
    lang,
    text: (k) => `${before}${typed.slice(0, k)}\n${after}`,
    line: i,
    column: indent.length,
    typed,
  };
}

/** The four places of a case, or undefined where its file or package has no second place. */
export function placesOf(c: LineCase, repoDir: string): Place[] | undefined {
  const lang = c.metadata.lang;
  const file = join(repoDir, c.metadata.file);
  const caseLine = c.prompt.split('\n').length - 1;
  const first: Place = {
    uri: pathToFileURL(file).toString(),
    lang,
    text: (k) => c.prompt + c.groundtruth.slice(0, k) + c.right_context,
    line: caseLine,
    column: c.prompt.length - c.prompt.lastIndexOf('\n') - 1,
    typed: c.groundtruth,
  };
  const lines = readFileSync(file, 'utf8').split('\n');
  const other = pickLine(lines, caseLine + 80, caseLine, 60);
  const ext = extname(file);
  const siblings = readdirSync(dirname(file))
    .filter((n) => extname(n) === ext && join(dirname(file), n) !== file)
    .sort();
  for (const name of siblings) {
    const sib = join(dirname(file), name);
    const sibLines = readFileSync(sib, 'utf8').split('\n');
    const at = pickLine(sibLines, Math.floor(sibLines.length / 2), -1000, 0);
    if (other === undefined || at === undefined || sibLines.length < 30) continue;
    // Back at the case's place: its line typed, the user types another line within a few lines of it.
    const whole = (c.prompt + c.groundtruth + c.right_context).split('\n');
    const near = pickLine(whole.slice(0, caseLine + 21), caseLine + 3, caseLine, 1);
    const back = near !== undefined ? placeInFile(file, lang, whole, near) : first;
    return [first, placeInFile(file, lang, lines, other), placeInFile(sib, lang, sibLines, at), back];
  }
  return undefined;
}

/** The project's engine (bench/engine) behind Ollama's API. */
async function ownEngine(gguf: string, threads: number, ctx: number, name: string): Promise<Engine> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- bench/engine is a folder of its own, loaded only by benchmarks
  const engineModule = require(join(root, 'bench', 'engine', 'server.ts')) as {
    startEngineServer: typeof import('../bench/engine/server').startEngineServer;
  };
  const engine = await engineModule.startEngineServer({ modelPath: gguf, threads, contextSize: ctx, modelNames: [name] });
  return {
    url: engine.url,
    stats: () => engine.stats(),
    close: () => engine.close(),
    settings: () => ({ model: { provider: 'ollama' }, ollama: { host: engine.url, completionModel: name } }),
  };
}

/** A running llama.cpp server, through a proxy that records each request and reads its answer's `timings`. */
export async function llamaEngine(target: string, name: string): Promise<Engine> {
  const seen: EngineRequest[] = [];
  const arrived: number[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const arrivedMs = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      const parsed = ((): Record<string, unknown> => {
        try {
          return JSON.parse(body.toString('utf8')) as Record<string, unknown>;
        } catch {
          return {};
        }
      })();
      // Our client asks /v1/completions; llama.vim asks /infill.
      const record = req.method === 'POST' && /completion|infill/.test(req.url ?? '');
      if (record) arrived.push(arrivedMs);
      void fetch(new URL(req.url ?? '/', target), {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        ...(req.method === 'POST' ? { body } : {}),
        signal: controller.signal,
      })
        .then(async (answer) => {
          const raw = await answer.text();
          const totalMs = performance.now() - arrivedMs;
          if (record) {
            // llama.cpp answers `timings` whole, or flat keys such as `timings/prompt_n` where the client asked for fields.
            const answerJson = ((): Record<string, unknown> => {
              try {
                return JSON.parse(raw) as Record<string, unknown>;
              } catch {
                return {};
              }
            })();
            const timing = (k: string): number | undefined => {
              const v = (answerJson.timings as Record<string, unknown> | undefined)?.[k] ?? answerJson[`timings/${k}`];
              return typeof v === 'number' ? v : undefined;
            };
            const evaluated = timing('prompt_n') ?? 0;
            const predicted = timing('predicted_n') ?? 0;
            const predictedMs = timing('predicted_ms') ?? 0;
            const cached = typeof answerJson.tokens_cached === 'number' ? answerJson.tokens_cached - predicted : undefined;
            const reused = timing('cache_n') ?? (cached !== undefined ? Math.max(0, cached - evaluated) : 0);
            const firstTokenAt = totalMs - predictedMs + (predicted > 0 ? predictedMs / predicted : 0);
            seen.push({
              promptTokens: evaluated + reused,
              evaluatedTokens: evaluated,
              reusedTokens: reused,
              ttftMs: firstTokenAt,
              totalMs,
              generatedTokens: predicted,
              maxTokens: Number(parsed.max_tokens ?? parsed.n_predict ?? 16),
              arrivedMs,
              endedMs: performance.now(),
              body: parsed,
            });
          }
          res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
          res.end(raw);
        })
        .catch(() => {
          if (record)
            seen.push({
              promptTokens: 0,
              evaluatedTokens: 0,
              reusedTokens: 0,
              ttftMs: NaN,
              totalMs: performance.now() - arrivedMs,
              generatedTokens: 0,
              maxTokens: Number(parsed.max_tokens ?? parsed.n_predict ?? 16),
              arrivedMs,
              endedMs: performance.now(),
              cut: true,
              body: parsed,
            });
          if (!res.headersSent) res.writeHead(502);
          res.end();
        });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    stats: () => seen,
    arrivals: () => arrived,
    inFlight: () => arrived.length - seen.length,
    close: () => new Promise<void>((r) => server.close(() => r())),
    settings: () => ({ model: { provider: 'openai', family: 'qwen2.5-coder' }, openai: { baseUrl: url, model: name } }),
  };
}

/** What LocalClient logs of each read (CODERAG_LOG=debug). */
const LOCAL_READ = /local read \((request|warm-up)\): (\d+) evaluated, (\d+) cached, (\d+) ms(, a saved place restored(?: in (\d+) ms)?)?/;

/**
 * llama.cpp in the language server (`provider: local`): each read as the server's log line tells it, timed by its arrival
 * (the read ended then); a warm-up is recorded as asking no token.
 */
function localEngine(gguf: string, threads: number, ctx: number): Engine {
  const seen: Array<EngineRequest & { restored?: boolean; loadMs?: number }> = [];
  return {
    url: '',
    stats: () => seen,
    onLog(line) {
      const m = LOCAL_READ.exec(line);
      if (!m) return;
      const now = performance.now();
      const [evaluated, cached, ms] = [Number(m[2]), Number(m[3]), Number(m[4])];
      seen.push({
        promptTokens: evaluated + cached,
        evaluatedTokens: evaluated,
        reusedTokens: cached,
        ttftMs: ms,
        totalMs: ms,
        generatedTokens: 0,
        maxTokens: m[1] === 'request' ? 16 : 0,
        arrivedMs: now - ms,
        endedMs: now,
        ...(m[5] ? { restored: true } : {}),
        ...(m[6] ? { loadMs: Number(m[6]) } : {}),
      });
    },
    close: () => Promise.resolve(),
    settings: () => ({ model: { provider: 'local' }, local: { modelPath: gguf, threads, contextTokens: ctx, idleUnloadMinutes: 0 } }),
  };
}

/** Waits until the engine has seen no new request for `quietMs`. */
export async function engineIdle(engine: Engine, quietMs: number): Promise<void> {
  for (let n = -1; n !== engine.stats().length;) {
    n = engine.stats().length;
    await new Promise((r) => setTimeout(r, quietMs));
  }
}

/** One case's moving session: the four places in turn, a pause before each. */
async function session(
  connection: MessageConnection,
  engine: Engine,
  c: LineCase,
  places: readonly Place[],
  build: string,
  maxKeys: number,
  pauseMs: number,
): Promise<MoveRecord[]> {
  const keys: Array<{ place: number; k: number; t0: number; requestMs: number; prompt: string | undefined; traceRead?: number }> = [];
  const versions = new Map<string, number>();
  const start = performance.now();
  for (const [p, place] of places.entries()) {
    const version = (versions.get(place.uri) ?? 0) + 1;
    versions.set(place.uri, version);
    if (version === 1)
      await connection.sendNotification('textDocument/didOpen', {
        textDocument: { uri: place.uri, languageId: place.lang, version, text: place.text(0) },
      });
    else
      await connection.sendNotification('textDocument/didChange', {
        textDocument: { uri: place.uri, version },
        contentChanges: [{ text: place.text(0) }],
      });
    // The cursor moved here; the user reads a moment before typing.
    if (p > 0) await new Promise((r) => setTimeout(r, pauseMs));
    const typed = maxKeys > 0 ? Math.min(maxKeys, place.typed.length) : place.typed.length;
    for (let k = 0; k < typed; k++) {
      if (k > 0) {
        const v = versions.get(place.uri)! + 1;
        versions.set(place.uri, v);
        await connection.sendNotification('textDocument/didChange', {
          textDocument: { uri: place.uri, version: v },
          contentChanges: [{ text: place.text(k) }],
        });
      }
      const t0 = performance.now();
      const answer = (await connection.sendRequest(InlineCompletionRequest.method, {
        textDocument: { uri: place.uri },
        position: { line: place.line, character: place.column + k },
        context: { triggerKind: 1 },
      })) as { items?: Array<{ traceId?: string }> } | null;
      const requestMs = performance.now() - t0;
      const explained = (await connection.sendRequest(
        ExplainRequest.method,
        answer?.items?.[0]?.traceId ? { traceId: answer.items[0].traceId } : {},
      )) as ExplainResult | null;
      const traceRead = explained?.trace.model?.read?.evaluated;
      keys.push({
        place: p + 1,
        k,
        t0,
        requestMs,
        prompt: explained?.trace.prompt?.text,
        ...(traceRead !== undefined ? { traceRead } : {}),
      });
    }
  }
  await engineIdle(engine, 1500);
  const stats = engine.stats().filter((st) => st.arrivedMs >= start);
  const defs = c.metadata.crossfile_defs ?? [];
  // Warm-ups ask for one token; the suggestion's request for more.
  const out = keys.map((key, i) => ({
    ...keyRecord(
      { build, c, key, next: keys[i + 1]?.t0, stats, isWarm: (st) => st.maxTokens <= 1, pick: 'last', withRequests: true },
      (gen) => (key.prompt !== undefined && defs.length > 0 ? defs.every((d) => promptHolds(key.prompt!, d)) : undefined),
    ),
    ...(key.traceRead !== undefined ? { traceEvaluated: key.traceRead } : {}),
    ...(restoredBetween(stats, key.t0, keys[i + 1]?.t0) ? { restored: true } : {}),
  }));
  for (const uri of versions.keys()) await connection.sendNotification('textDocument/didClose', { textDocument: { uri } });
  return out;
}

/** The requests of a key's window that carry a prompt, in arrival order, marked where they count in its `readTokens`. */
function sentRequests(mine: readonly EngineRequest[], genAt: number): { requests?: SentRequest[] } {
  const requests = [...mine]
    .sort((a, b) => a.arrivedMs - b.arrivedMs)
    .flatMap((st): SentRequest[] =>
      typeof st.body?.prompt === 'string'
        ? [
            {
              prompt: st.body.prompt,
              maxTokens: st.maxTokens,
              counted: st.arrivedMs <= genAt,
              ...(st.cut ? { cut: true } : {}),
              evaluatedTokens: st.evaluatedTokens,
            },
          ]
        : [],
    );
  return requests.length > 0 ? { requests } : {};
}

/** Whether a read from `t0` to `next` loaded a saved place (the in-process engine says so). */
function restoredBetween(stats: readonly EngineRequest[], t0: number, next: number | undefined): boolean {
  return stats.some((st) => (st as { restored?: boolean }).restored === true && st.arrivedMs >= t0 && st.arrivedMs < (next ?? Infinity));
}

/**
 * One key's record from the engine's requests between it and the next key: its completion request
 * (the first or last one that asked for tokens and was answered), how long it waited for a warm-up in
 * flight when the key came, and what warm-ups read meanwhile; `holds` says whether the definitions were
 * in what it sent (asked at the case's place only).
 */
export function keyRecord(
  k: {
    build: string;
    c: LineCase;
    key: { place: number; k: number; t0: number; requestMs?: number };
    next: number | undefined;
    stats: readonly EngineRequest[];
    isWarm: (st: EngineRequest) => boolean;
    pick: 'first' | 'last';
    /** Keep the requests' prompts in the record (`requests`: a llama.cpp server's, for scripts/replayMoving.ts). */
    withRequests?: boolean;
  },
  holds: (gen: EngineRequest | undefined) => boolean | undefined,
): MoveRecord {
  const { key, stats, isWarm } = k;
  const mine = stats.filter((st) => st.arrivedMs >= key.t0 && st.arrivedMs < (k.next ?? Infinity));
  const answered = mine.filter((st) => !isWarm(st) && !st.cut);
  const gen = k.pick === 'last' ? answered.at(-1) : answered.at(0);
  const endOf = (st: EngineRequest): number => st.endedMs ?? st.arrivedMs + st.totalMs;
  const genAt = gen ? gen.arrivedMs : key.t0 + (key.requestMs ?? 0);
  const waitedMs = Math.max(
    0,
    ...stats.filter((w) => isWarm(w) && w.arrivedMs < genAt && endOf(w) > key.t0).map((w) => Math.min(endOf(w), genAt) - key.t0),
  );
  const atCase = key.place === 1 || key.place === 4;
  const inPrompt = atCase ? holds(gen) : undefined;
  return {
    build: k.build,
    lang: k.c.metadata.lang,
    task: k.c.metadata.task_id,
    place: key.place,
    key: key.k,
    promptTokens: gen?.promptTokens ?? 0,
    evaluatedTokens: gen?.evaluatedTokens ?? 0,
    reusedTokens: gen?.reusedTokens ?? 0,
    ttftMs: gen && Number.isFinite(gen.ttftMs) ? gen.arrivedMs + gen.ttftMs - key.t0 : NaN,
    requestMs: key.requestMs ?? (gen ? endOf(gen) - key.t0 : NaN),
    waitedMs,
    warmTokens: mine.filter(isWarm).reduce((n, st) => n + st.evaluatedTokens, 0),
    readTokens: mine.filter((st) => st.arrivedMs <= genAt).reduce((n, st) => n + st.evaluatedTokens, 0),
    ...(k.withRequests ? sentRequests(mine, genAt) : {}),
    ...(inPrompt !== undefined ? { defsInPrompt: inPrompt } : {}),
  };
}

/** The moving-session table: per build and language, each place kind's first key, then the keystrokes after it. */
export function summarizeMoving(records: readonly MoveRecord[]): string {
  const f = (x: number, d = 0): string => (Number.isNaN(x) ? '-' : x.toFixed(d));
  // A place's first key counts every read it caused; a later key, its own request's.
  const read = (r: MoveRecord): number => (r.key === 0 ? (r.readTokens ?? r.evaluatedTokens) : r.evaluatedTokens);
  const share = (r: MoveRecord): number => (r.promptTokens > 0 ? read(r) / r.promptTokens : NaN);
  const finite = (xs: number[]): number[] => xs.filter((x) => Number.isFinite(x));
  const header =
    '| build | lang | requests | read share median | p90 | tokens read median | mean | TTFT median ms | mean | p90 | waited > 1 s | over 7 s | defs in prompt |';
  const rows = [header, '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'];
  const kinds: Array<[string, (r: MoveRecord) => boolean]> = [
    ['first key at the first place', (r) => r.place === 1 && r.key === 0],
    ['first key at a new place (2, 3)', (r) => (r.place === 2 || r.place === 3) && r.key === 0],
    ['first key back at the first place', (r) => r.place === 4 && r.key === 0],
    ['keystrokes after the first', (r) => r.key > 0],
  ];
  const groups = new Map<string, MoveRecord[]>();
  for (const r of records) groups.set(`${r.build}\t${r.lang}`, [...(groups.get(`${r.build}\t${r.lang}`) ?? []), r]);
  for (const [kind, pick] of kinds) {
    rows.push(`| **${kind}** |||||||||||||`);
    for (const [key, all] of groups) {
      const [build, lang] = key.split('\t');
      const rs = all.filter(pick);
      const reads = finite(rs.map(share));
      const tokens = rs.map(read);
      const ttft = finite(rs.map((r) => r.ttftMs));
      const withDefs = rs.filter((r) => r.defsInPrompt !== undefined);
      rows.push(
        `| ${build} | ${lang} | ${rs.length} | ${f(quantile(reads, 0.5), 3)} | ${f(quantile(reads, 0.9), 3)} | ${f(quantile(tokens, 0.5))} | ` +
          `${f(mean(tokens))} | ${f(quantile(ttft, 0.5))} | ${f(mean(ttft))} | ${f(quantile(ttft, 0.9))} | ` +
          `${rs.filter((r) => r.waitedMs > 1000).length} | ${rs.filter((r) => r.requestMs > 7000).length} | ` +
          `${withDefs.length === 0 ? '-' : `${withDefs.filter((r) => r.defsInPrompt).length}/${withDefs.length}`} |`,
      );
    }
  }
  return rows.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      gguf: { type: 'string' },
      model: { type: 'string' },
      'llama-url': { type: 'string' },
      local: { type: 'string' },
      'gguf-name': { type: 'string', default: 'qwen2.5-coder:1.5b-base' },
      cases: { type: 'string', multiple: true, default: [] },
      repos: { type: 'string', multiple: true, default: [] },
      'per-repo': { type: 'string', default: '1' },
      'max-keys': { type: 'string', default: '8' },
      'pause-ms': { type: 'string', default: '2000' },
      server: { type: 'string', multiple: true, default: [] },
      threads: { type: 'string', default: '1' },
      'max-new-tokens': { type: 'string', default: '16' },
      ctx: { type: 'string', default: '8192' },
      cache: { type: 'string' },
      json: { type: 'string' },
    },
  });
  if (!values.gguf && values.model && !values['llama-url']) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- as above
    const models = require(join(root, 'bench', 'engine', 'models.ts')) as {
      randomQwenGguf(size: '0.5b' | '1.5b'): Promise<string>;
    };
    values.gguf = await models.randomQwenGguf(values.model === 'qwen-1.5b' ? '1.5b' : '0.5b');
  }
  if ((!values.gguf && !values['llama-url'] && !values.local) || values.cases.length === 0 || values.cases.length !== values.repos.length)
    throw new Error(
      'usage: bench:moving (--model M | --gguf F | --llama-url URL | --local F) --cases F.jsonl --repos DIR [--server PATH ...]',
    );
  const servers = values.server.length > 0 ? values.server : [join(root, 'dist', 'server.js')];
  const cacheDir = values.cache ?? join(tmpdir(), 'coderag-bench-moving-cache');
  mkdirSync(cacheDir, { recursive: true });
  const name = values['gguf-name'];
  const engine = values.local
    ? localEngine(resolve(values.local), Number(values.threads), Number(values.ctx))
    : values['llama-url']
      ? await llamaEngine(values['llama-url'], name)
      : await ownEngine(values.gguf!, Number(values.threads), Number(values.ctx), name);
  // Default settings but the answer's length: random weights never end a line (as in bench:typing).
  const settings = { ...(engine.settings() as object), experimental: { model: { maxNewTokens: Number(values['max-new-tokens']) } } };
  const records: MoveRecord[] = [];
  // The records, and every request the engine saw (bodies left out), for reading a session again.
  const save = (): void => {
    if (!values.json) return;
    writeFileSync(values.json, JSON.stringify(records, null, 1));
    writeFileSync(`${values.json}.engine.json`, JSON.stringify(engine.stats().map(({ body: _body, ...st }) => st)));
  };
  try {
    for (let i = 0; i < values.cases.length; i++) {
      const cases = readCases(values.cases[i]!, Number(values['per-repo']));
      for (const c of cases) {
        const repoDir = join(values.repos[i]!, c.metadata.repository);
        const places = placesOf(c, repoDir);
        if (!places) {
          process.stderr.write(`${c.metadata.task_id}: no second place in its file or package; skipped\n`);
          continue;
        }
        for (const serverPath of servers) {
          const build = servers.length === 1 ? 'this' : serverPath;
          const lsp = startServer(serverPath, repoDir, settings, cacheDir, engine.onLog?.bind(engine));
          await lsp.ready;
          records.push(
            ...(await session(lsp.connection, engine, c, places, build, Number(values['max-keys']), Number(values['pause-ms']))),
          );
          await lsp.close();
          await engineIdle(engine, 1000);
          process.stderr.write(`${c.metadata.task_id} ${build}: ${records.length} requests so far\n`);
          save();
        }
      }
    }
  } finally {
    await engine.close();
  }
  console.log(summarizeMoving(records));
  if (values.local) {
    const traced = records.filter((r) => r.traceEvaluated !== undefined);
    console.log(
      `trace and log agree on the request's read: ${traced.filter((r) => r.traceEvaluated === r.evaluatedTokens).length} of ${traced.length} keys`,
    );
  }
  save();
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : String(e));
    process.exit(1);
  });
}

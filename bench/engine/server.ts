// A real inference engine for benchmarks and tests: llama.cpp (node-llama-cpp) behind the HTTP
// APIs the product's clients speak (Ollama, OpenAI-compatible completions, llama.cpp's /completion).
// One context sequence that, like llama.cpp's server, keeps the longest common prefix of the tokens
// it holds; requests are served one at a time. Never shipped (bench/engine/README.md).
//
// Programmatic: startEngineServer({ modelPath, threads?, contextSize?, modelNames?, port? }).
// CLI: node --import tsx bench/engine/server.ts --model F.gguf [--threads 1] [--ctx 4096] [--name N] [--port 0] [--no-flash-attention]
//      prints {"ready":true,"url":...} on stdout.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename } from 'node:path';

export interface RequestStat {
  endpoint: string;
  /** Tokens of the prompt (after any cut to fit the context). */
  promptTokens: number;
  /** Prompt tokens evaluated by this request (not reused from the cache). */
  evaluatedTokens: number;
  /** Prompt tokens whose cached state was reused. */
  reusedTokens: number;
  /** Request arrival to the first generated token (to the prompt evaluated when no token was asked). */
  ttftMs: number;
  totalMs: number;
  generatedTokens: number;
  /** The tokens the request asked for (1 for a warm-up through Ollama's or the OpenAI API). */
  maxTokens: number;
  /** When it arrived, on this process's performance.now() clock (a replay in the same process orders requests by it). */
  arrivedMs: number;
}

export interface EngineServerOptions {
  modelPath: string;
  /** Threads of evaluation (default 1: llama.cpp's default of 4 on a 2-core machine runs 0.3 tok/s). */
  threads?: number;
  /** Context tokens (default 4096, at most the model's training context). */
  contextSize?: number;
  /** Model names it answers to (default: the file's name without .gguf). */
  modelNames?: string[];
  /** Port on 127.0.0.1 (default 0: any free port). */
  port?: number;
  /** llama.cpp's flash attention (default true: on 1 CPU thread it cut a 1,800-token prompt's time by 30-45 %, bench/engine/README.md "Speed"). */
  flashAttention?: boolean;
}

export interface EngineServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Every request's statistics so far, oldest first. */
  stats(): RequestStat[];
  /** The model's tokens of `text` (special tokens parsed, as in prompts). */
  tokenize(text: string): number[];
  close(): Promise<void>;
}

// What this file uses of node-llama-cpp, declared here so the project typechecks without bench/engine installed.
interface NlcSequence {
  readonly contextTokens: number[];
  readonly nextTokenIndex: number;
  eraseContextTokenRanges(ranges: Array<{ start: number; end: number }>): Promise<void>;
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  evaluateWithMetadata(
    tokens: number[],
    metadata: { confidence: true; probabilities: boolean },
    options: { temperature?: number; seed?: number; grammarEvaluationState?: unknown },
  ): AsyncGenerator<{ token: number; confidence: number; probabilities?: Map<number, number> }, void, void>;
}
interface NlcModel {
  readonly trainContextSize: number;
  readonly fileInfo: { metadata: { general: { architecture?: string; name?: string } } };
  readonly size: number;
  tokenize(text: string, specialTokens?: boolean): number[];
  detokenize(tokens: readonly number[], specialTokens?: boolean): string;
  tokens: { eos: number | null };
  createContext(options: { contextSize: number; threads: { ideal: number; min: number }; sequences: 1; flashAttention: boolean }): Promise<{
    getSequence(): NlcSequence;
    dispose(): Promise<void>;
  }>;
  dispose(): Promise<void>;
}
interface NlcLlama {
  loadModel(options: { modelPath: string }): Promise<NlcModel>;
  createGrammar(options: { grammar: string }): Promise<unknown>;
  dispose(): Promise<void>;
}
interface NlcModule {
  getLlama(options: { gpu: false; build: 'never'; logLevel: string }): Promise<NlcLlama>;
  LlamaGrammarEvaluationState: new (options: { model: NlcModel; grammar: unknown }) => unknown;
}

/** node-llama-cpp from bench/engine/node_modules (ESM-only, so imported, never required). */
async function loadNodeLlamaCpp(): Promise<NlcModule> {
  const specifier = 'node-llama-cpp';
  try {
    return (await import(specifier)) as NlcModule;
  } catch (e) {
    throw new Error(
      `node-llama-cpp is not installed in bench/engine (run: npm ci --prefix bench/engine --omit=optional): ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/** Most bytes of a request body (a 32k-token prompt is ~130 KB). */
const MAX_BODY_BYTES = 4 << 20;
/** Prompt tokens evaluated per step, so a client that hangs up stops a long prompt between steps. */
const PROMPT_STEP = 512;
/** Most alternatives per token (OpenAI's limit is 5, Ollama's 20). */
const MAX_TOP_LOGPROBS = 20;
/** Requests kept in stats (the oldest dropped past it). */
const MAX_STATS = 100_000;

interface GenRequest {
  endpoint: string;
  prompt: string;
  maxTokens: number;
  temperature: number;
  stop: string[];
  /** Alternatives per token (0: the chosen token's log-probability only). */
  topLogprobs: number;
  seed?: number;
  /** false: the cache is cleared first (llama.cpp's cache_prompt: false). */
  cachePrompt: boolean;
  grammar?: string;
  arrival: number;
}

interface GenToken {
  token: string;
  logprob: number;
  top: Array<{ token: string; logprob: number }>;
}

interface GenResult {
  text: string;
  tokens: GenToken[];
  finish: 'stop' | 'length' | 'eos';
  stoppingWord: string;
  promptTokens: number;
  evaluated: number;
  reused: number;
  promptMs: number;
  evalMs: number;
  totalMs: number;
  cached: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
  }
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const stopsOf = (v: unknown): string[] =>
  (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : typeof v === 'string' ? [v] : [])
    .filter((s) => s.length > 0)
    .slice(0, 16);

/** Characters at the end of `text` that may begin a stop sequence (held back from a stream until resolved). */
function heldBack(text: string, stops: readonly string[]): number {
  let hold = 0;
  for (const s of stops)
    for (let k = Math.min(s.length - 1, text.length); k > hold; k--)
      if (text.endsWith(s.slice(0, k))) {
        hold = k;
        break;
      }
  return hold;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, { error: `request body over ${MAX_BODY_BYTES} bytes` }));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const ms = (a: number, b: number): number => Math.max(0, b - a);
const ns = (v: number): number => Math.round(v * 1e6);

export async function startEngineServer(options: EngineServerOptions): Promise<EngineServer> {
  const nlc = await loadNodeLlamaCpp();
  const threads = Math.max(1, Math.floor(options.threads ?? 1));
  const llama = await nlc.getLlama({ gpu: false, build: 'never', logLevel: 'warn' });
  const model = await llama.loadModel({ modelPath: options.modelPath });
  const contextSize = Math.max(16, Math.min(options.contextSize ?? 4096, model.trainContextSize || Infinity));
  const context = await model.createContext({
    contextSize,
    threads: { ideal: threads, min: threads },
    sequences: 1,
    flashAttention: options.flashAttention ?? true,
  });
  const sequence = context.getSequence();
  const names = options.modelNames?.length ? options.modelNames : [basename(options.modelPath).replace(/\.gguf$/i, '')];
  const arch = model.fileInfo.metadata.general.architecture ?? 'unknown';
  const eos = model.tokens.eos;
  const stats: RequestStat[] = [];
  const grammars = new Map<string, Promise<unknown>>();
  let queue: Promise<unknown> = Promise.resolve();

  const tokenize = (text: string): number[] => [...model.tokenize(text, true)];
  const tokenText = (id: number): string => model.detokenize([id], true);

  /** Serves one request on the one sequence: reuses the cached prefix, evaluates the rest, generates. */
  const generate = async (r: GenRequest, signal: AbortSignal, onText?: (text: string, tokens: GenToken[]) => void): Promise<GenResult> => {
    const start = performance.now();
    let ids = tokenize(r.prompt);
    if (ids.length === 0 && eos !== null) ids = [eos];
    const maxTokens = Math.max(0, Math.min(Math.floor(r.maxTokens), contextSize - 1));
    // Too long for the context: the start of the prompt is cut, as the embedded model and llama.cpp do.
    if (ids.length + maxTokens > contextSize) ids = ids.slice(ids.length - (contextSize - maxTokens));
    if (!r.cachePrompt && sequence.nextTokenIndex > 0) await sequence.eraseContextTokenRanges([{ start: 0, end: sequence.nextTokenIndex }]);
    const held = sequence.contextTokens;
    let common = 0;
    while (common < held.length && common < ids.length && held[common] === ids[common]) common++;
    // Generating needs the last prompt token's logits, so it is evaluated again when all of the prompt is cached.
    const reused = maxTokens > 0 ? Math.min(common, ids.length - 1) : common;
    if (reused < sequence.nextTokenIndex) await sequence.eraseContextTokenRanges([{ start: reused, end: sequence.nextTokenIndex }]);
    const rest = ids.slice(reused);
    const generated: number[] = [];
    let firstToken: number | undefined;
    try {
      return await evaluate();
    } finally {
      // Every request is counted, one its client left included (with the tokens it got).
      const end = performance.now();
      stats.push({
        endpoint: r.endpoint,
        promptTokens: ids.length,
        evaluatedTokens: rest.length,
        reusedTokens: reused,
        ttftMs: ms(r.arrival, firstToken ?? end),
        totalMs: ms(r.arrival, end),
        generatedTokens: generated.length,
        maxTokens: r.maxTokens,
        arrivedMs: r.arrival,
      });
      if (stats.length > MAX_STATS) stats.shift();
    }

    async function evaluate(): Promise<GenResult> {
      const upfront = maxTokens > 0 ? rest.slice(0, -1) : rest;
      for (let i = 0; i < upfront.length; i += PROMPT_STEP) {
        if (signal.aborted) throw new Error('aborted');
        await sequence.evaluateWithoutGeneratingNewTokens(upfront.slice(i, i + PROMPT_STEP));
      }
      const result: GenResult = {
        text: '',
        tokens: [],
        finish: 'length',
        stoppingWord: '',
        promptTokens: ids.length,
        evaluated: rest.length,
        reused,
        promptMs: 0,
        evalMs: 0,
        totalMs: 0,
        cached: 0,
      };
      let promptDone = performance.now();
      if (maxTokens > 0) {
        let grammarEvaluationState: unknown;
        if (r.grammar) {
          const text = r.grammar;
          if (!grammars.has(text)) grammars.set(text, llama.createGrammar({ grammar: text }));
          const grammar = await grammars.get(text)!.catch((e: unknown) => {
            grammars.delete(text);
            throw new HttpError(400, { error: `invalid grammar: ${e instanceof Error ? e.message : String(e)}` });
          });
          grammarEvaluationState = new nlc.LlamaGrammarEvaluationState({ model, grammar });
        }
        let sent = 0;
        let finished = false;
        // The whole vocabulary's map costs time per token: greedy decoding's top-1 alternative is the chosen token itself.
        const wantProbs = r.topLogprobs > 1 || (r.topLogprobs === 1 && r.temperature > 0);
        const it = sequence.evaluateWithMetadata(
          rest.slice(-1),
          { confidence: true, probabilities: wantProbs },
          {
            temperature: r.temperature,
            ...(r.seed !== undefined ? { seed: r.seed } : {}),
            ...(grammarEvaluationState ? { grammarEvaluationState } : {}),
          },
        );
        result.finish = 'eos';
        for await (const step of it) {
          if (generated.length === 0) firstToken = promptDone = performance.now();
          generated.push(step.token);
          const logprob = Math.log(Math.max(step.confidence, 1e-45));
          const top: GenToken['top'] = [];
          if (wantProbs && step.probabilities) {
            for (const [id, p] of step.probabilities) {
              if (top.length >= r.topLogprobs) break;
              top.push({ token: tokenText(id), logprob: Math.log(p) });
            }
          } else if (r.topLogprobs === 1) top.push({ token: tokenText(step.token), logprob });
          const full = model.detokenize(generated, false);
          // A token that ends inside a UTF-8 character is reported with the next one.
          result.tokens.push({ token: full.slice(result.text.length), logprob, top });
          result.text = full.endsWith('\uFFFD') ? result.text : full;
          if (result.text !== full) result.tokens[result.tokens.length - 1]!.token = '';
          const stopAt = r.stop.reduce((at, s) => {
            const i = result.text.indexOf(s);
            return i >= 0 && (at < 0 || i < at) ? i : at;
          }, -1);
          if (stopAt >= 0) {
            result.stoppingWord = r.stop.find((s) => result.text.indexOf(s) === stopAt) ?? '';
            result.text = result.text.slice(0, stopAt);
            result.finish = 'stop';
            finished = true;
          } else if (generated.length >= maxTokens) {
            result.finish = 'length';
            finished = true;
          }
          const emit = finished ? result.text.length : result.text.length - heldBack(result.text, r.stop);
          if (onText && emit > sent) {
            onText(result.text.slice(sent, emit), result.tokens.slice(-1));
            sent = emit;
          }
          if (finished || signal.aborted) break;
        }
        if (signal.aborted) throw new Error('aborted');
        if (onText && result.text.length > sent) onText(result.text.slice(sent), []);
        // Tokens past a stop sequence are not part of the answer.
        let offset = 0;
        result.tokens = result.tokens.filter((t) => {
          const keep = offset < result.text.length || (t.token === '' && offset === 0);
          offset += t.token.length;
          return keep;
        });
      } else promptDone = firstToken = performance.now();
      const end = performance.now();
      result.promptMs = ms(start, promptDone);
      result.evalMs = ms(firstToken ?? end, end);
      result.totalMs = ms(r.arrival, end);
      result.cached = sequence.nextTokenIndex;
      return result;
    }
  };

  /** One request at a time on the one sequence; a request whose client left while it waited is skipped. */
  const enqueue = (r: GenRequest, signal: AbortSignal, onText?: (text: string, tokens: GenToken[]) => void): Promise<GenResult> => {
    const run = queue.then(() => {
      if (signal.aborted) throw new Error('aborted');
      return generate(r, signal, onText);
    });
    queue = run.catch(() => undefined);
    return run;
  };

  const knownModel = (body: Json): boolean => typeof body.model === 'string' && names.includes(body.model);
  const created = new Date().toISOString();
  const details = { format: 'gguf', family: arch, families: [arch], parameter_size: '', quantization_level: '' };

  const handle = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> => {
    const arrival = performance.now();
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    let body: Json = {};
    if (req.method === 'POST') {
      const raw = await readBody(req);
      try {
        const parsed: unknown = raw ? JSON.parse(raw) : {};
        if (!isObject(parsed)) throw new Error('not an object');
        body = parsed;
      } catch {
        throw new HttpError(400, { error: 'invalid JSON body' });
      }
    }
    const route = `${req.method} ${path}`;
    switch (route) {
      case 'GET /':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('Ollama is running');
        return;
      case 'GET /api/version':
        sendJson(res, 200, { version: '0.13.0' });
        return;
      case 'GET /api/tags':
      case 'GET /api/ps':
        sendJson(res, 200, {
          models: names.map((name) => ({ name, model: name, modified_at: created, size: model.size, digest: '', details })),
        });
        return;
      case 'POST /api/show':
        if (!knownModel(body)) throw new HttpError(404, { error: `model '${String(body.model)}' not found` });
        sendJson(res, 200, {
          modelfile: '',
          parameters: `num_ctx                        ${contextSize}`,
          template: '{{ .Prompt }}',
          details,
          model_info: { 'general.architecture': arch, [`${arch}.context_length`]: model.trainContextSize },
          capabilities: ['completion'],
          modified_at: created,
        });
        return;
      case 'POST /api/generate':
        return ollamaGenerate(body, res, signal, arrival);
      case 'POST /api/chat':
        return ollamaChat(body, res, signal, arrival);
      case 'GET /v1/models':
        sendJson(res, 200, { object: 'list', data: names.map((id) => ({ id, object: 'model', created: 0, owned_by: 'llamacpp' })) });
        return;
      case 'POST /v1/completions':
        return openAiCompletions(body, res, signal, arrival);
      case 'POST /completion':
      case 'POST /completions':
        return llamaCompletion(body, res, signal, arrival);
      case 'GET /props':
        sendJson(res, 200, {
          default_generation_settings: { n_ctx: contextSize, model: options.modelPath, temperature: 0.8, n_predict: -1 },
          total_slots: 1,
          model_path: options.modelPath,
        });
        return;
      case 'GET /health':
        sendJson(res, 200, { status: 'ok' });
        return;
      case 'GET /stats':
        sendJson(res, 200, stats);
        return;
      default:
        throw new HttpError(404, { error: `unknown endpoint ${route}` });
    }
  };

  const ollamaGenerate = async (body: Json, res: ServerResponse, signal: AbortSignal, arrival: number): Promise<void> => {
    if (!knownModel(body)) throw new HttpError(404, { error: `model '${String(body.model)}' not found, try pulling it first` });
    const o = isObject(body.options) ? body.options : {};
    const wantLogprobs = body.logprobs === true;
    const r: GenRequest = {
      endpoint: '/api/generate',
      prompt: typeof body.prompt === 'string' ? body.prompt : '',
      maxTokens: num(o.num_predict, 128) < 0 ? contextSize : num(o.num_predict, 128),
      temperature: num(o.temperature, 0.8),
      stop: stopsOf(o.stop),
      topLogprobs: wantLogprobs ? Math.min(MAX_TOP_LOGPROBS, Math.max(0, Math.floor(num(body.top_logprobs, 0)))) : 0,
      ...(typeof o.seed === 'number' ? { seed: o.seed } : {}),
      cachePrompt: true,
      arrival,
    };
    const model = String(body.model);
    const logprobsOf = (tokens: GenToken[]): Json =>
      wantLogprobs
        ? {
            logprobs: tokens.map((t) => ({
              token: t.token,
              logprob: t.logprob,
              ...(r.topLogprobs > 0 ? { top_logprobs: t.top } : {}),
            })),
          }
        : {};
    const final = (out: GenResult, withText: boolean): Json => ({
      model,
      created_at: new Date().toISOString(),
      response: withText ? out.text : '',
      done: true,
      done_reason: out.finish === 'length' ? 'length' : 'stop',
      context: [],
      total_duration: ns(out.totalMs),
      load_duration: 0,
      prompt_eval_count: out.evaluated,
      prompt_eval_duration: ns(out.promptMs),
      eval_count: out.tokens.length,
      eval_duration: ns(out.evalMs),
      ...(withText ? logprobsOf(out.tokens) : {}),
    });
    if (body.stream === false) {
      sendJson(res, 200, final(await enqueue(r, signal), true));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const out = await enqueue(r, signal, (text, tokens) => {
      res.write(JSON.stringify({ model, created_at: new Date().toISOString(), response: text, done: false, ...logprobsOf(tokens) }) + '\n');
    });
    res.end(JSON.stringify(final(out, false)) + '\n');
  };

  /**
   * Ollama's /api/chat (the LLM reranker's call): the messages in ChatML, as Qwen's chat template
   * writes them, answered without streaming (the reranker asks for none).
   */
  const ollamaChat = async (body: Json, res: ServerResponse, signal: AbortSignal, arrival: number): Promise<void> => {
    if (!knownModel(body)) throw new HttpError(404, { error: `model '${String(body.model)}' not found, try pulling it first` });
    const o = isObject(body.options) ? body.options : {};
    const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: unknown; content?: unknown }>) : [];
    const prompt =
      messages.map((m) => `<|im_start|>${String(m.role)}\n${String(m.content)}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
    const r: GenRequest = {
      endpoint: '/api/chat',
      prompt,
      maxTokens: num(o.num_predict, 128) < 0 ? contextSize : num(o.num_predict, 128),
      temperature: num(o.temperature, 0.8),
      stop: [...stopsOf(o.stop), '<|im_end|>'],
      topLogprobs: body.logprobs === true ? Math.min(MAX_TOP_LOGPROBS, Math.max(0, Math.floor(num(body.top_logprobs, 0)))) : 0,
      cachePrompt: true,
      arrival,
    };
    const out = await enqueue(r, signal);
    sendJson(res, 200, {
      model: String(body.model),
      created_at: new Date().toISOString(),
      message: { role: 'assistant', content: out.text },
      done: true,
      done_reason: out.finish === 'length' ? 'length' : 'stop',
      total_duration: ns(out.totalMs),
      prompt_eval_count: out.evaluated,
      prompt_eval_duration: ns(out.promptMs),
      eval_count: out.tokens.length,
      eval_duration: ns(out.evalMs),
      ...(body.logprobs === true
        ? {
            logprobs: out.tokens.map((t) => ({
              token: t.token,
              logprob: t.logprob,
              ...(r.topLogprobs > 0 ? { top_logprobs: t.top } : {}),
            })),
          }
        : {}),
    });
  };

  const openAiCompletions = async (body: Json, res: ServerResponse, signal: AbortSignal, arrival: number): Promise<void> => {
    if (!knownModel(body))
      throw new HttpError(404, {
        error: { message: `The model \`${String(body.model)}\` does not exist.`, type: 'invalid_request_error', code: 'model_not_found' },
      });
    const prompt = Array.isArray(body.prompt) ? body.prompt[0] : body.prompt;
    const logprobs = typeof body.logprobs === 'number' ? Math.min(5, Math.max(0, Math.floor(body.logprobs))) : undefined;
    const r: GenRequest = {
      endpoint: '/v1/completions',
      prompt: typeof prompt === 'string' ? prompt : '',
      maxTokens: num(body.max_tokens, 16),
      temperature: num(body.temperature, 1),
      stop: stopsOf(body.stop),
      topLogprobs: logprobs ?? 0,
      ...(typeof body.seed === 'number' ? { seed: body.seed } : {}),
      cachePrompt: true,
      ...(typeof body.grammar === 'string' ? { grammar: body.grammar } : {}),
      arrival,
    };
    const model = String(body.model);
    const id = `cmpl-${Date.now().toString(36)}`;
    const now = Math.floor(Date.now() / 1000);
    const logprobsOf = (tokens: GenToken[]): Json | null => {
      if (logprobs === undefined) return null;
      let offset = 0;
      return {
        tokens: tokens.map((t) => t.token),
        token_logprobs: tokens.map((t) => t.logprob),
        top_logprobs: tokens.map((t) =>
          Object.fromEntries((t.top.length > 0 ? t.top : [t]).slice(0, Math.max(1, logprobs)).map((a) => [a.token, a.logprob])),
        ),
        text_offset: tokens.map((t) => ((offset += t.token.length), offset - t.token.length)),
      };
    };
    const usage = (out: GenResult): Json => ({
      prompt_tokens: out.promptTokens,
      completion_tokens: out.tokens.length,
      total_tokens: out.promptTokens + out.tokens.length,
    });
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const chunk = (text: string, finish: string | null, tokens: GenToken[], extra: Json = {}): string =>
        `data: ${JSON.stringify({ id, object: 'text_completion', created: now, model, choices: [{ index: 0, text, finish_reason: finish, logprobs: logprobsOf(tokens) }], ...extra })}\n\n`;
      const out = await enqueue(r, signal, (text, tokens) => res.write(chunk(text, null, tokens)));
      res.end(chunk('', out.finish === 'length' ? 'length' : 'stop', [], { usage: usage(out) }) + 'data: [DONE]\n\n');
      return;
    }
    const out = await enqueue(r, signal);
    sendJson(res, 200, {
      id,
      object: 'text_completion',
      created: now,
      model,
      choices: [{ index: 0, text: out.text, finish_reason: out.finish === 'length' ? 'length' : 'stop', logprobs: logprobsOf(out.tokens) }],
      usage: usage(out),
      timings: timingsOf(out),
    });
  };

  const timingsOf = (out: GenResult): Json => ({
    prompt_n: out.evaluated,
    prompt_ms: out.promptMs,
    prompt_per_second: out.promptMs > 0 ? (1000 * out.evaluated) / out.promptMs : 0,
    predicted_n: out.tokens.length,
    predicted_ms: out.evalMs,
    predicted_per_second: out.evalMs > 0 ? (1000 * out.tokens.length) / out.evalMs : 0,
  });

  const llamaCompletion = async (body: Json, res: ServerResponse, signal: AbortSignal, arrival: number): Promise<void> => {
    const nPredict = num(body.n_predict, -1);
    const r: GenRequest = {
      endpoint: '/completion',
      prompt: typeof body.prompt === 'string' ? body.prompt : '',
      maxTokens: nPredict < 0 ? contextSize : nPredict,
      temperature: num(body.temperature, 0.8),
      stop: stopsOf(body.stop),
      topLogprobs: 0,
      ...(typeof body.seed === 'number' ? { seed: body.seed } : {}),
      cachePrompt: body.cache_prompt !== false,
      ...(typeof body.grammar === 'string' ? { grammar: body.grammar } : {}),
      arrival,
    };
    const answer = (out: GenResult, content: string): Json => ({
      content,
      stop: true,
      stop_type: out.finish === 'length' ? 'limit' : out.finish === 'stop' ? 'word' : 'eos',
      stopping_word: out.stoppingWord,
      tokens_predicted: out.tokens.length,
      tokens_evaluated: out.promptTokens,
      tokens_cached: out.cached,
      truncated: false,
      model: names[0],
      timings: timingsOf(out),
    });
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const out = await enqueue(r, signal, (content) => res.write(`data: ${JSON.stringify({ content, stop: false })}\n\n`));
      res.end(`data: ${JSON.stringify(answer(out, ''))}\n\n`);
      return;
    }
    const out = await enqueue(r, signal);
    sendJson(res, 200, answer(out, out.text));
  };

  const pending = new Set<AbortController>();
  const server = createServer((req, res) => {
    const controller = new AbortController();
    pending.add(controller);
    // The client went away: its generation stops at the next token (or prompt step).
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      pending.delete(controller);
    });
    handle(req, res, controller.signal).catch((e: unknown) => {
      if (controller.signal.aborted) return void res.destroy();
      if (res.headersSent) return void res.destroy();
      if (e instanceof HttpError) sendJson(res, e.status, e.body);
      else sendJson(res, 500, { error: e instanceof Error ? e.message : String(e) });
    });
  });
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => stats.map((s) => ({ ...s })),
    tokenize,
    close: () =>
      (closed ??= (async () => {
        for (const c of pending) c.abort();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await queue;
        await context.dispose();
        await model.dispose();
        await llama.dispose();
      })()),
  };
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

async function cli(): Promise<void> {
  const args = process.argv.slice(2);
  const modelPath = argValue(args, '--model');
  if (!modelPath) {
    process.stderr.write(
      'usage: node --import tsx bench/engine/server.ts --model F.gguf [--threads 1] [--ctx 4096] [--name N[,N2]] [--port 0] [--no-flash-attention]\n',
    );
    process.exit(2);
  }
  const server = await startEngineServer({
    modelPath,
    threads: Number(argValue(args, '--threads') ?? 1),
    contextSize: Number(argValue(args, '--ctx') ?? 4096),
    ...(argValue(args, '--name') ? { modelNames: argValue(args, '--name')!.split(',') } : {}),
    port: Number(argValue(args, '--port') ?? 0),
    flashAttention: !args.includes('--no-flash-attention'),
  });
  process.stdout.write(JSON.stringify({ ready: true, url: server.url }) + '\n');
  const stop = (): void => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (require.main === module) {
  cli().catch((e: unknown) => {
    process.stderr.write(`engine server failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}

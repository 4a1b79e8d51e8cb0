// An Ollama-compatible HTTP server for tests (Ollama itself cannot be installed here; CONTRIBUTING.md "Tests").
// It answers /api/generate, /api/chat, /api/tags, /api/show, /api/pull and the OpenAI-compatible
// /v1/completions and /v1/chat/completions, with logprobs. Its normal answers come from the
// `generate` function the test injects (the project's embedded causal LM); fault modes simulate
// what a real server or model can do wrong.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

/** Index i drawn with probability weights[i] / sum(weights) (the last one if rounding leaves r >= 0). */
export function sampleIndex(weights: readonly number[], random: () => number): number {
  let r = random() * weights.reduce((s, w) => s + w, 0);
  for (let i = 0; i < weights.length; i++) {
    r -= weights[i]!;
    if (r < 0) return i;
  }
  return weights.length - 1;
}

export interface TopLogprob {
  token: string;
  logprob: number;
}

/** One generated token with the top alternatives at its position. */
export interface GeneratedToken extends TopLogprob {
  top: TopLogprob[];
}

export interface GenerateOptions {
  maxNewTokens: number;
  temperature: number;
  stop: string[];
  /** Alternatives wanted per token (0: none). */
  topLogprobs: number;
  seed?: number;
}

export interface GenerateResult {
  text: string;
  /** Per generated token, when the model can report them. */
  topLogprobs?: GeneratedToken[];
}

/** The model behind the server: a raw prompt in, text (and per-token logprobs) out. */
export type GenerateFn = (prompt: string, options: GenerateOptions, signal: AbortSignal) => Promise<GenerateResult>;

export type Fault =
  | { kind: 'outsideLabel'; label?: string }
  | { kind: 'garbage'; text?: string }
  | { kind: 'stall'; seconds: number }
  /** HTTP 500 with a JSON error body, or with `text` as a plain-text body (a proxy's error page). */
  | { kind: 'http500'; text?: string }
  /** HTTP 429 with this Retry-After header (none when undefined). */
  | { kind: 'http429'; retryAfter?: string }
  | { kind: 'malformedJson' }
  /** Every request answered with `status` (default 307) and `Location: <to><path>`. */
  | { kind: 'redirect'; to: string; status?: number }
  | { kind: 'notPulled' }
  /** Headers and the first part of the answer, then the connection is cut. */
  | { kind: 'cutMidAnswer' }
  /** Streamed answers (Ollama's ndjson) carry this line, which is not JSON, before their parts. */
  | { kind: 'notJsonLine'; line: string }
  /** `/api/pull` streams progress lines totalling about this many bytes before its `success`. */
  | { kind: 'longPull'; bytes: number };

export interface RequestLog {
  method: string;
  path: string;
  body: unknown;
  /** The Authorization header, when the client sent one. */
  authorization?: string;
}

export interface OllamaTestServer {
  /** http://127.0.0.1:PORT (https with the `tls` option) */
  url: string;
  port: number;
  /** Requests received, in order. */
  requests: RequestLog[];
  /** The fault every following request gets (undefined: answer normally). */
  setFault(fault: Fault | undefined): void;
  /** Models the server has "pulled"; chat/generate/show for others answer 404. */
  models: Set<string>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** ChatML, as Qwen's template renders the messages. */
export function renderChat(messages: unknown): string {
  const list = Array.isArray(messages) ? messages.filter(isObject) : [];
  return list.map((m) => `<|im_start|>${String(m.role)}\n${String(m.content)}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Streamed answers longer than this go out in parts of this many characters. */
const STREAM_PART_CHARS = 4096;

/** Write `text` in parts, waiting for the socket to drain, until done or the client hangs up. */
async function streamParts(res: ServerResponse, text: string, line: (part: string) => string, signal: AbortSignal): Promise<void> {
  for (let i = 0; i < text.length && !signal.aborted; i += STREAM_PART_CHARS) {
    if (!res.write(line(text.slice(i, i + STREAM_PART_CHARS)))) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done).on('close', done);
      });
    }
  }
}

/** Split a fault's fixed answer into tokens the way a BPE model would, with certain logprobs. */
function faultTokens(text: string): GeneratedToken[] {
  return (text.match(/<\/?answer>|\[|\]|\w+|\s+|./g) ?? []).map((token) => ({ token, logprob: 0, top: [{ token, logprob: 0 }] }));
}

function optionsOf(body: Json, api: 'ollama' | 'openai'): GenerateOptions {
  if (api === 'ollama') {
    const o = isObject(body.options) ? body.options : {};
    return {
      maxNewTokens: typeof o.num_predict === 'number' ? o.num_predict : 128,
      temperature: typeof o.temperature === 'number' ? o.temperature : 0.8,
      stop: Array.isArray(o.stop) ? o.stop.map(String) : [],
      topLogprobs: body.logprobs === true ? (typeof body.top_logprobs === 'number' ? body.top_logprobs : 0) : 0,
      ...(typeof o.seed === 'number' ? { seed: o.seed } : {}),
    };
  }
  const top = typeof body.top_logprobs === 'number' ? body.top_logprobs : typeof body.logprobs === 'number' ? body.logprobs : 0;
  return {
    maxNewTokens: typeof body.max_tokens === 'number' ? body.max_tokens : 16,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    stop: Array.isArray(body.stop) ? body.stop.map(String) : typeof body.stop === 'string' ? [body.stop] : [],
    topLogprobs: body.logprobs === false ? 0 : top,
    ...(typeof body.seed === 'number' ? { seed: body.seed } : {}),
  };
}

/** Cut at the first stop sequence (excluded, as Ollama and OpenAI servers do), tokens included. */
function applyStop(result: GenerateResult, stop: readonly string[]): GenerateResult {
  let cut = result.text.length;
  for (const s of stop) {
    const i = s ? result.text.indexOf(s) : -1;
    if (i >= 0 && i < cut) cut = i;
  }
  if (cut === result.text.length) return result;
  const tokens: GeneratedToken[] = [];
  let offset = 0;
  for (const t of result.topLogprobs ?? []) {
    if (offset >= cut) break;
    tokens.push(t);
    offset += t.token.length;
  }
  return { text: result.text.slice(0, cut), ...(result.topLogprobs ? { topLogprobs: tokens } : {}) };
}

/**
 * `readRate`: the tokens a second the server says it read a prompt at (Ollama's prompt_eval_count and
 * _duration; a token counted as 3 characters). The default is a GPU server's, which keeps prompts at
 * the model's window. `tls`: serve https with this key and certificate (chain).
 */
export async function startOllamaTestServer(
  generate: GenerateFn,
  options: { models?: string[]; readRate?: number; tls?: { key: Buffer; cert: Buffer } } = {},
): Promise<OllamaTestServer> {
  const readRate = options.readRate ?? 10_000;
  let fault: Fault | undefined;
  const requests: RequestLog[] = [];
  const models = new Set(options.models ?? ['qwen3:8b']);
  const pending = new Set<AbortController>();

  const answer = async (prompt: string, opts: GenerateOptions, signal: AbortSignal): Promise<GenerateResult> => {
    if (fault?.kind === 'outsideLabel') {
      const text = `<answer>[${fault.label ?? 'W'}]</answer>`;
      return applyStop({ text, topLogprobs: faultTokens(text) }, opts.stop);
    }
    if (fault?.kind === 'garbage') {
      const text = fault.text ?? 'I think the second snippet looks most useful here.';
      return { text, topLogprobs: faultTokens(text) };
    }
    return applyStop(await generate(prompt, opts, signal), opts.stop);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const raw = req.method === 'POST' ? await readBody(req) : '';
    let body: Json = {};
    if (raw) {
      try {
        const parsed: unknown = JSON.parse(raw);
        body = isObject(parsed) ? parsed : {};
      } catch {
        sendJson(res, 400, { error: 'invalid JSON body' });
        return;
      }
    }
    requests.push({
      method: req.method ?? 'GET',
      path,
      body,
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
    });

    if (fault?.kind === 'stall') {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, fault?.kind === 'stall' ? fault.seconds * 1000 : 0);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      if (signal.aborted) return;
    }
    if (fault?.kind === 'http500') {
      if (fault.text !== undefined) {
        res.writeHead(500, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(fault.text) });
        res.end(fault.text);
      } else sendJson(res, 500, { error: 'internal server error (test fault)' });
      return;
    }
    if (fault?.kind === 'http429') {
      res.writeHead(429, { 'content-type': 'text/plain', ...(fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {}) });
      res.end('slow down');
      return;
    }
    if (fault?.kind === 'redirect') {
      res.writeHead(fault.status ?? 307, { location: `${fault.to}${req.url ?? '/'}`, 'content-length': 0 });
      res.end();
      return;
    }
    if (fault?.kind === 'cutMidAnswer') {
      res.writeHead(200, { 'content-type': path.startsWith('/v1/') ? 'application/json' : 'application/x-ndjson' });
      res.write(
        path.startsWith('/v1/')
          ? '{"id": "cmpl-test", "choices": [{"text": "cart, '
          : JSON.stringify({ model: body.model, response: 'cart, ', done: false }) + '\n',
      );
      await new Promise((r) => setTimeout(r, 50));
      res.socket?.destroy();
      return;
    }
    if (fault?.kind === 'malformedJson') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"model": "qwen3:8b", "message": {"content": "<answer>[A]');
      return;
    }
    const model = typeof body.model === 'string' ? body.model : '';
    const needsModel = ['/api/generate', '/api/chat', '/api/show', '/v1/completions', '/v1/chat/completions'].includes(path);
    if (needsModel && (fault?.kind === 'notPulled' || !models.has(model))) {
      if (path.startsWith('/v1/'))
        sendJson(res, 404, {
          error: { message: `The model \`${model}\` does not exist.`, type: 'invalid_request_error', code: 'model_not_found' },
        });
      else sendJson(res, 404, { error: `model '${model}' not found, try pulling it first` });
      return;
    }
    const created = new Date().toISOString();
    switch (path) {
      case '/api/tags':
        sendJson(res, 200, {
          models: [...models].map((name) => ({
            name,
            model: name,
            modified_at: created,
            size: 0,
            digest: '',
            details: { format: 'onnx', family: 'test', parameter_size: '', quantization_level: '' },
          })),
        });
        return;
      case '/api/show':
        sendJson(res, 200, {
          modelfile: '',
          parameters: '',
          template: '{{ .Prompt }}',
          details: { format: 'onnx', family: 'test' },
          model_info: {},
          capabilities: ['completion'],
        });
        return;
      case '/api/pull': {
        const name = typeof body.model === 'string' ? body.model : typeof body.name === 'string' ? body.name : '';
        if (fault?.kind === 'notPulled' || !name) {
          sendJson(res, 500, { error: `pull model manifest: file does not exist` });
          return;
        }
        models.add(name);
        if (body.stream === false) sendJson(res, 200, { status: 'success' });
        else if (fault?.kind === 'longPull') {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          const total = fault.bytes;
          for (let sent = 0; sent < total && !signal.aborted;) {
            const line = JSON.stringify({ status: 'pulling 6a0746a1ec1a', digest: 'sha256:6a0746a1ec1a', total, completed: sent }) + '\n';
            sent += line.length;
            if (!res.write(line)) await new Promise((r) => res.once('drain', r));
          }
          res.end(JSON.stringify({ status: 'success' }) + '\n');
        } else {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.end(['pulling manifest', 'verifying sha256 digest', 'success'].map((status) => JSON.stringify({ status }) + '\n').join(''));
        }
        return;
      }
      case '/api/generate':
      case '/api/chat': {
        const chat = path === '/api/chat';
        const prompt = chat
          ? renderChat(body.messages)
          : renderChat([
              ...(typeof body.system === 'string' ? [{ role: 'system', content: body.system }] : []),
              { role: 'user', content: String(body.prompt ?? '') },
            ]);
        const opts = optionsOf(body, 'ollama');
        const out = await answer(prompt, opts, signal);
        if (signal.aborted) return;
        // Ollama answers `logprobs: true` with the chosen tokens' log-probabilities, alternatives only when top_logprobs asks.
        const logprobs =
          body.logprobs === true && out.topLogprobs
            ? out.topLogprobs.map((t) => ({ token: t.token, logprob: t.logprob, top_logprobs: t.top.slice(0, opts.topLogprobs) }))
            : undefined;
        const common = {
          model,
          created_at: created,
          done: true,
          done_reason: 'stop',
          total_duration: 1,
          load_duration: 0,
          prompt_eval_count: Math.ceil(prompt.length / 3),
          prompt_eval_duration: Math.round((Math.ceil(prompt.length / 3) / readRate) * 1e9),
          eval_count: out.topLogprobs?.length ?? 1,
          eval_duration: 1,
          ...(logprobs ? { logprobs } : {}),
        };
        const payload = chat
          ? { ...common, message: { role: 'assistant', content: out.text } }
          : { ...common, response: out.text, context: [] };
        if (body.stream === false) sendJson(res, 200, payload);
        else if (fault?.kind === 'notJsonLine') {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.end(`${fault.line}\n${JSON.stringify(payload)}\n`);
        } else if (!chat && out.text.length > STREAM_PART_CHARS) {
          // A long answer streams as Ollama streams it: many parts, then the final one.
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          await streamParts(
            res,
            out.text,
            (response) => JSON.stringify({ model, created_at: created, response, done: false }) + '\n',
            signal,
          );
          if (!signal.aborted) res.end(JSON.stringify({ ...payload, response: '' }) + '\n');
        } else {
          res.writeHead(200, { 'content-type': 'application/x-ndjson' });
          res.end(JSON.stringify(payload) + '\n');
        }
        return;
      }
      case '/v1/chat/completions':
      case '/v1/completions': {
        const chat = path === '/v1/chat/completions';
        const prompt = chat ? renderChat(body.messages) : String(body.prompt ?? '');
        const opts = optionsOf(body, 'openai');
        const out = await answer(prompt, opts, signal);
        if (signal.aborted) return;
        const tokens = opts.topLogprobs > 0 || body.logprobs === true ? out.topLogprobs : undefined;
        const choice = chat
          ? {
              index: 0,
              message: { role: 'assistant', content: out.text },
              finish_reason: 'stop',
              logprobs: tokens
                ? { content: tokens.map((t) => ({ token: t.token, logprob: t.logprob, top_logprobs: t.top.slice(0, opts.topLogprobs) })) }
                : null,
            }
          : {
              index: 0,
              text: out.text,
              finish_reason: 'stop',
              logprobs: tokens
                ? {
                    tokens: tokens.map((t) => t.token),
                    token_logprobs: tokens.map((t) => t.logprob),
                    top_logprobs: tokens.map((t) => Object.fromEntries(t.top.slice(0, opts.topLogprobs).map((a) => [a.token, a.logprob]))),
                  }
                : null,
            };
        sendJson(res, 200, {
          id: 'cmpl-test',
          object: chat ? 'chat.completion' : 'text_completion',
          created: Math.floor(Date.now() / 1000),
          model,
          choices: [choice],
        });
        return;
      }
      default:
        sendJson(res, 404, { error: `unknown endpoint ${path}` });
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const controller = new AbortController();
    pending.add(controller);
    // The client went away (its request was aborted): stop generating for it.
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
      pending.delete(controller);
    });
    handle(req, res, controller.signal).catch((e: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: e instanceof Error ? e.message : String(e) });
      else res.destroy();
    });
  };
  const server: Server = options.tls
    ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener)
    : createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    requests,
    models,
    setFault(next) {
      fault = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of pending) c.abort();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the server needs of the project's embedded causal LM (src/engine/models CausalLM). */
export interface EmbeddedLM {
  readonly eosId: number;
  readonly maxPositions: number;
  encode(text: string): number[];
  decode(ids: number[]): string;
  logitsNext(batch: number[][], signal?: AbortSignal): Promise<Float32Array[]>;
}

function seededUniform(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Backs the server with the embedded causal LM: token-by-token decoding (greedy at temperature 0,
 * else sampling), reporting each step's top log-probabilities as Ollama and OpenAI servers do.
 */
export function embeddedModelGenerate(lm: EmbeddedLM, defaultSeed = 0): GenerateFn {
  return async (prompt, opts, signal) => {
    const promptIds = lm.encode(prompt);
    const random = seededUniform(opts.seed ?? defaultSeed);
    const out: number[] = [];
    const tokens: GeneratedToken[] = [];
    let text = '';
    for (let step = 0; step < opts.maxNewTokens; step++) {
      if (signal.aborted) throw new Error('aborted');
      const context = [...promptIds, ...out].slice(-lm.maxPositions);
      const [logits] = await lm.logitsNext([context], signal);
      if (!logits) break;
      let max = -Infinity;
      for (const l of logits) if (l > max) max = l;
      let z = 0;
      for (const l of logits) z += Math.exp(l - max);
      const logZ = max + Math.log(z);
      let id = 0;
      if (opts.temperature > 0) {
        id = sampleIndex(
          Array.from(logits, (l) => Math.exp((l - max) / opts.temperature)),
          random,
        );
      } else {
        for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[id]!) id = i;
      }
      if (id === lm.eosId) break;
      const k = Math.max(1, opts.topLogprobs);
      const top = Array.from(logits, (l, i) => ({ i, l }))
        .sort((a, b) => b.l - a.l)
        .slice(0, k)
        .map(({ i, l }) => ({ token: lm.decode([i]), logprob: l - logZ }));
      out.push(id);
      const next = lm.decode(out);
      tokens.push({ token: next.slice(text.length), logprob: logits[id]! - logZ, top });
      text = next;
      if (opts.stop.some((s) => s !== '' && text.includes(s))) break;
    }
    return { text, topLogprobs: tokens };
  };
}

// The HTTP side shared by every model client and the LLM reranker: one OpenAI-compatible request
// helper and one Ollama instance factory, each obeying the caller's signal.
import { Ollama } from 'ollama';
import { withoutSecret } from '../util/outsideText';

/** `http://host:8000`, `http://host:8000/` or `http://host:8000/v1` -> `http://host:8000/v1`. */
export function openAiBase(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
}

/** A model server answered with a redirect: never followed, since it would re-send the prompt (and key) elsewhere. */
export class RedirectRefusedError extends Error {
  constructor(
    readonly from: string,
    readonly status: number,
    readonly location: string,
  ) {
    super(`the server at ${from} answered a redirect (HTTP ${status}) to ${location || 'another address'}; not followed`);
    this.name = 'RedirectRefusedError';
  }
}

/** The origin of a redirect's target (the path may carry data; the origin says where it would have gone). */
function originOf(location: string | null, base: string): string {
  if (!location) return '';
  try {
    return new URL(location, base).origin;
  } catch {
    return location.slice(0, 100);
  }
}

/** Most bytes read of one answer (a completion or a reranker's pick with logprobs is a few KiB). */
const MAX_ANSWER_BYTES = 256 * 1024;

/** An answer larger than MAX_ANSWER_BYTES: reading stopped and the request was closed. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the answer exceeded ${Math.round(limitBytes / 1024)} KiB; stopped reading`);
    this.name = 'AnswerTooLargeError';
  }
}

/** The server closed the connection after its answer began: not the same as a server that cannot be reached. */
export class ConnectionClosedError extends Error {
  constructor(readonly from: string) {
    super(`the server at ${from} closed the connection mid-answer`);
    this.name = 'ConnectionClosedError';
  }
}

/** Most bytes of one line of a progress stream (a model pull's lines are a few hundred bytes; the stream itself may run to megabytes). */
export const MAX_PROGRESS_LINE_BYTES = 64 * 1024;

/** How much of an answer is read: all of it up to `maxBytes`, or any amount in lines of at most `maxLineBytes` (a progress stream). */
export type BodyLimit = { maxBytes: number } | { maxLineBytes: number };

/** The response with a body that errors (and cancels the transfer) past its limit, and names a cut connection as such. */
function capBody(response: Response, limit: BodyLimit, from: string): Response {
  const body = response.body;
  if (!body) return response;
  const reader = body.getReader();
  let seen = 0;
  const capped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (e) {
        // The caller's abort stays an abort; anything else after the headers is the connection ending early.
        controller.error(e instanceof Error && e.name === 'AbortError' ? e : new ConnectionClosedError(from));
        return;
      }
      const { done, value } = chunk;
      if (done) return controller.close();
      if ('maxBytes' in limit) seen += value.byteLength;
      else {
        const nl = value.lastIndexOf(0x0a);
        seen = nl < 0 ? seen + value.byteLength : value.byteLength - nl - 1;
      }
      const max = 'maxBytes' in limit ? limit.maxBytes : limit.maxLineBytes;
      if (seen > max) {
        await reader.cancel().catch(() => undefined);
        controller.error(new AnswerTooLargeError(max));
        return;
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The wait a 429 without a (valid) Retry-After gets. */
const DEFAULT_RETRY_AFTER_MS = 2000;

/** The longest wait a server can ask for: past it CodeRAG asks again (a hostile value would silence it for good). */
const MAX_RETRY_AFTER_MS = 10 * 60 * 1000;

/** A model server asked to wait (HTTP 429, or 503 with Retry-After): nothing is sent to it before `until`. */
export class RateLimitedError extends Error {
  constructor(
    readonly from: string,
    readonly until: number,
    readonly sent: boolean,
  ) {
    const at = new Date(until).toISOString().slice(11, 19);
    const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
    const what = sent ? 'nothing more is sent' : 'not sent';
    super(`the server at ${from} asked to wait (HTTP 429 Retry-After): ${what} before ${at} UTC (in ${seconds} s)`);
    this.name = 'RateLimitedError';
  }
}

/** Per origin, when its server's last Retry-After ends (epoch ms); shared by every client and the reranker. */
const waitUntil = new Map<string, number>();

/** Retry-After as milliseconds from `now`: delta-seconds or an HTTP date, within [0, MAX_RETRY_AFTER_MS]. */
function retryAfterMs(header: string | null, now = Date.now()): number {
  const value = header?.trim() ?? '';
  let ms = /^\d+$/.test(value) ? Number(value) * 1000 : value ? Date.parse(value) - now : NaN;
  if (!Number.isFinite(ms)) ms = DEFAULT_RETRY_AFTER_MS;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/** When the server at `origin` may be asked again (epoch ms), or undefined when it may be now. */
function rateLimitedUntil(origin: string, now = Date.now()): number | undefined {
  const until = waitUntil.get(origin);
  if (until === undefined) return undefined;
  if (until > now) return until;
  waitUntil.delete(origin);
  return undefined;
}

/**
 * fetch for model servers: never follows a redirect (a 3xx answer is an error naming where it
 * pointed), reads at most `maxBytes` of the answer, and honours Retry-After: after a 429 (or a 503
 * that names a wait) nothing is sent to that server until the time passes.
 */
async function modelFetch(
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  limit: BodyLimit = { maxBytes: MAX_ANSWER_BYTES },
): Promise<Response> {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  const origin = new URL(url).origin;
  const waiting = rateLimitedUntil(origin);
  if (waiting !== undefined) throw new RateLimitedError(origin, waiting, false);
  const response = await fetch(input, { ...init, redirect: 'manual' });
  if (response.status === 429 || (response.status === 503 && response.headers.has('retry-after'))) {
    await response.body?.cancel().catch(() => undefined);
    const until = Date.now() + retryAfterMs(response.headers.get('retry-after'));
    waitUntil.set(origin, Math.max(until, waitUntil.get(origin) ?? 0));
    throw new RateLimitedError(origin, until, true);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    throw new RedirectRefusedError(new URL(url).origin, response.status, originOf(response.headers.get('location'), url));
  }
  return capBody(response, limit, new URL(url).origin);
}

interface OpenAiAnswer {
  ok: boolean;
  status: number;
  /** The body as text (the caller parses it, so a malformed answer can be quoted). */
  raw: string;
}

/** One request to an OpenAI-compatible server (`path` like `/completions`); GET without a body. */
export async function openAiRequest(
  baseUrl: string,
  path: string,
  options: { body?: unknown; apiKey?: string; signal: AbortSignal },
): Promise<OpenAiAnswer> {
  const key = options.apiKey;
  // A key that cannot be a header value is never handed to fetch (whose error would quote the header).
  if (key && /[^\x20-\x7e]/.test(key))
    throw new Error('the API key contains a line break or another character a header cannot carry; it was not sent (set it again)');
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(key ? { authorization: `Bearer ${key}` } : {}),
  };
  try {
    const response = await modelFetch(`${openAiBase(baseUrl)}${path}`, {
      method: options.body !== undefined ? 'POST' : 'GET',
      headers,
      signal: options.signal,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    return { ok: response.ok, status: response.status, raw: await response.text() };
  } catch (e) {
    // No message that carries the key leaves here.
    if (key && e instanceof Error && (e.message.includes(key) || String(e.cause).includes(key)))
      throw new Error(withoutSecret(e.message, key), { cause: { code: (e.cause as { code?: unknown } | undefined)?.code } });
    throw e;
  }
}

/**
 * An Ollama instance whose every fetch also obeys `signal` (the package aborts only its streams
 * itself) and follows no redirect; `limit`: how much of an answer is read (a pull's progress
 * stream is not an answer: its lines are capped, not its length).
 */
export function ollamaApi(host: string, signal: AbortSignal, limit?: BodyLimit): Ollama {
  const withSignal: typeof fetch = (input, init) =>
    modelFetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }, limit);
  return new Ollama({ host, fetch: withSignal });
}

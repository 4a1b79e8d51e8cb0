// The HTTP side shared by every model client and the LLM reranker: one OpenAI-compatible request
// helper and one Ollama instance factory, each obeying the caller's signal.
import { Ollama } from 'ollama';

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
export const MAX_ANSWER_BYTES = 256 * 1024;

/** An answer larger than MAX_ANSWER_BYTES: reading stopped and the request was closed. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the answer exceeded ${Math.round(limitBytes / 1024)} KiB; stopped reading`);
    this.name = 'AnswerTooLargeError';
  }
}

/** The response with a body that errors (and cancels the transfer) past `maxBytes`. */
function capBody(response: Response, maxBytes: number): Response {
  const body = response.body;
  if (!body) return response;
  const reader = body.getReader();
  let seen = 0;
  const capped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen += value.byteLength;
      if (seen > maxBytes) {
        await reader.cancel().catch(() => undefined);
        controller.error(new AnswerTooLargeError(maxBytes));
        return;
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(capped, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * fetch for model servers: never follows a redirect (a 3xx answer is an error naming where it
 * pointed) and reads at most `maxBytes` of the answer.
 */
export async function modelFetch(input: Parameters<typeof fetch>[0], init: RequestInit | undefined, maxBytes = MAX_ANSWER_BYTES): Promise<Response> {
  const response = await fetch(input, { ...init, redirect: 'manual' });
  if (response.status >= 300 && response.status < 400) {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    await response.body?.cancel().catch(() => undefined);
    throw new RedirectRefusedError(new URL(url).origin, response.status, originOf(response.headers.get('location'), url));
  }
  return capBody(response, maxBytes);
}

export interface OpenAiAnswer {
  ok: boolean;
  status: number;
  /** The body as text (the caller parses it, so a malformed answer can be quoted). */
  raw: string;
}

/** One request to an OpenAI-compatible server (`path` like `/completions`); GET without a body. */
export async function openAiRequest(baseUrl: string, path: string, options: { body?: unknown; apiKey?: string; signal: AbortSignal }): Promise<OpenAiAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) };
  const response = await modelFetch(`${openAiBase(baseUrl)}${path}`, {
    method: options.body !== undefined ? 'POST' : 'GET',
    headers,
    signal: options.signal,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  return { ok: response.ok, status: response.status, raw: await response.text() };
}

/** An Ollama instance whose every fetch also obeys `signal` (the package aborts only its streams itself) and follows no redirect. */
export function ollamaApi(host: string, signal: AbortSignal): Ollama {
  const withSignal: typeof fetch = (input, init) => modelFetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
  return new Ollama({ host, fetch: withSignal });
}

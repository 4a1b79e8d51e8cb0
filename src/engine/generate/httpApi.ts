// The HTTP side shared by every model client and the LLM reranker: one OpenAI-compatible request
// helper and one Ollama instance factory, each obeying the caller's signal.
import { Ollama } from 'ollama';

/** `http://host:8000`, `http://host:8000/` or `http://host:8000/v1` -> `http://host:8000/v1`. */
export function openAiBase(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, '');
  return /\/v1$/.test(trimmed) ? trimmed : `${trimmed}/v1`;
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
  const response = await fetch(`${openAiBase(baseUrl)}${path}`, {
    method: options.body !== undefined ? 'POST' : 'GET',
    headers,
    signal: options.signal,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  return { ok: response.ok, status: response.status, raw: await response.text() };
}

/** An Ollama instance whose every fetch also obeys `signal` (the package aborts only its streams itself). */
export function ollamaApi(host: string, signal: AbortSignal): Ollama {
  const withSignal: typeof fetch = (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal });
  return new Ollama({ host, fetch: withSignal });
}

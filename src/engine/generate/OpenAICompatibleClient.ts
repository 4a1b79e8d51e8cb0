// Completion through any OpenAI-compatible /v1/completions endpoint (vLLM, TGI, llama.cpp
// server): the way a team shares one GPU server. Raw prompt in, text out; stop sequences honoured.
import type { ModelFamily } from '../prompt/templates';
import { modelFamilyOf } from '../prompt/templates';
import { CancellationError } from '../util/errors';
import { deadline } from '../util/abort';
import { AnswerTooLargeError, openAiBase, openAiRequest, RedirectRefusedError } from './httpApi';
import { cutAtStop, isModelClientError, ModelClientError, networkErrorKind, problemOf, type GenerateRequest, type GenerateResult, type ModelClient, type ModelProblem } from './types';

export interface OpenAICompatibleOptions {
  /** Base URL, with or without `/v1` (e.g. http://gpu-box:8000). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  family?: ModelFamily;
  timeoutMs?: number;
}

/** The start-up check (the server answers, the model is served) waits at most this long. */
const CHECK_LIMIT_MS = 5000;

/** OpenAI's API accepts at most 4 stop sequences; the rest are applied client-side. */
const MAX_SERVER_STOPS = 4;

export class OpenAICompatibleClient implements ModelClient {
  readonly backend = 'openai' as const;
  readonly family: ModelFamily;

  constructor(private readonly options: OpenAICompatibleOptions) {
    this.family = options.family ?? modelFamilyOf(options.model);
  }

  get model(): string {
    return this.options.model;
  }

  get endpoint(): string {
    return openAiBase(this.options.baseUrl);
  }

  /** `limitMs`: the limit the call ran under (the start-up check has its own), so the message states it. */
  private toError(e: unknown, timedOut: boolean, signal: AbortSignal, what: string, limitMs: number): Error {
    if (timedOut) return new ModelClientError('timeout', `${what}: no answer from ${this.endpoint} within ${limitMs} ms`, this.endpoint, this.model);
    if (signal.aborted) return new CancellationError();
    if (isModelClientError(e)) return e;
    if (e instanceof RedirectRefusedError || e instanceof AnswerTooLargeError) return new ModelClientError('failed', `${what}: ${e.message}`, this.endpoint, this.model);
    if (networkErrorKind(e) === 'unreachable') return new ModelClientError('unreachable', `the completion server is not reachable at ${this.endpoint}`, this.endpoint, this.model);
    return new ModelClientError('failed', `${what}: ${e instanceof Error ? e.message : String(e)}`, this.endpoint, this.model);
  }

  private httpError(status: number, raw: string, what: string): ModelClientError {
    const body = raw.slice(0, 300);
    if (status === 404 && /model/i.test(body)) return new ModelClientError('modelMissing', `model "${this.model}" is not served by ${this.endpoint}: ${body}`, this.endpoint, this.model, 404);
    return new ModelClientError('httpStatus', `${what}: ${this.endpoint} answered HTTP ${status}${body ? `: ${body}` : ''}`, this.endpoint, this.model, status);
  }

  async generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
    const start = performance.now();
    const limitMs = this.options.timeoutMs ?? 7000;
    const limit = deadline(signal, limitMs);
    try {
      const { ok, status, raw } = await openAiRequest(this.options.baseUrl, '/completions', {
        apiKey: this.options.apiKey,
        signal: limit.signal,
        body: { model: this.model, prompt: request.prompt, max_tokens: request.maxNewTokens, temperature: request.temperature ?? 0, stop: request.stop.slice(0, MAX_SERVER_STOPS), stream: false },
      });
      if (!ok) throw this.httpError(status, raw, 'completions');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new ModelClientError('malformed', `completions: malformed JSON from ${this.endpoint}: ${raw.slice(0, 120)}`, this.endpoint, this.model);
      }
      const choice = (body as { choices?: Array<{ text?: unknown; finish_reason?: unknown }> }).choices?.[0];
      if (!choice || typeof choice.text !== 'string') throw new ModelClientError('malformed', `completions: the answer from ${this.endpoint} has no choices[0].text`, this.endpoint, this.model);
      const cut = cutAtStop(choice.text, request.stop);
      const usage = (body as { usage?: { completion_tokens?: unknown } }).usage;
      return {
        text: cut.text,
        model: this.model,
        elapsedMs: performance.now() - start,
        ...(typeof usage?.completion_tokens === 'number' ? { tokens: usage.completion_tokens } : {}),
        stoppedBy: cut.stopped || choice.finish_reason === 'stop' ? 'stop' : choice.finish_reason === 'length' ? 'length' : 'unknown',
      };
    } catch (e) {
      throw this.toError(e, limit.timedOut(), signal, 'completions', limitMs);
    }
  }

  async check(signal: AbortSignal): Promise<ModelProblem | undefined> {
    const limitMs = Math.min(this.options.timeoutMs ?? 7000, CHECK_LIMIT_MS);
    const limit = deadline(signal, limitMs);
    try {
      const { ok, raw } = await openAiRequest(this.options.baseUrl, '/models', { apiKey: this.options.apiKey, signal: limit.signal });
      // Some servers (TGI) have no /v1/models; only an answer that lists models can prove one missing.
      if (!ok) return undefined;
      const body = parseJson(raw) as { data?: Array<{ id?: unknown }> } | undefined;
      const ids = (body?.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
      if (ids.length > 0 && !ids.includes(this.model)) return { kind: 'modelMissing', message: `model "${this.model}" is not served by ${this.endpoint} (it serves: ${ids.slice(0, 5).join(', ')})`, model: this.model, endpoint: this.endpoint };
      return undefined;
    } catch (e) {
      const err = this.toError(e, limit.timedOut(), signal, 'list models', limitMs);
      if (isModelClientError(err)) return problemOf(err);
      throw err;
    }
  }
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

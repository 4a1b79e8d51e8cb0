// Completion through any OpenAI-compatible /v1/completions endpoint (vLLM, TGI, llama.cpp
// server): the way a team shares one GPU server. Raw prompt in, text out; stop sequences honoured.
import type { ModelFamily } from '../prompt/templates';
import { modelFamilyOf } from '../prompt/templates';
import { CancellationError } from '../util/errors';
import { deadline } from '../util/abort';
import { AnswerTooLargeError, ConnectionClosedError, openAiBase, openAiRequest, RedirectRefusedError, RateLimitedError } from './httpApi';
import {
  cutAtStop,
  isModelClientError,
  ModelClientError,
  networkErrorKind,
  certificateMessage,
  certificateProblem,
  problemOf,
  type GenerateRequest,
  WARM_LIMIT_MS,
  type GenerateResult,
  type ModelCapabilities,
  type ModelClient,
  type ModelProblem,
  type PromptRead,
  type TokenLogprob,
} from './types';
import { openAiTokenLogprobs } from './logprobs';
import { ReadRate } from './readRate';
import { escapeRegExp } from '../util/regex';

interface OpenAICompatibleOptions {
  /** Base URL, with or without `/v1` (e.g. http://gpu-box:8000). */
  baseUrl: string;
  model: string;
  apiKey?: string;
  family?: ModelFamily;
  timeoutMs?: number;
}

/** The start-up check (the server answers, the model is served) waits at most this long. */
const CHECK_LIMIT_MS = 5000;

/** llama.cpp's `n_cache_reuse`: the shortest moved chunk its server shifts in its cache (what llama.vim asks of it). */
const LLAMA_CACHE_REUSE = 256;

/** OpenAI's API accepts at most 4 stop sequences; the rest are applied client-side. */
const MAX_SERVER_STOPS = 4;

/** How long the one-time probe for a constraint mechanism may take. */
const PROBE_LIMIT_MS = 1500;

/** A server-side way to restrict what the model writes: vLLM's `guided_regex`, llama.cpp's `grammar` (GBNF). */
type ServerConstraintKind = 'guided_regex' | 'grammar';

function gbnfString(s: string): string {
  return `"${s.replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * The request parameter that makes the answer start by finishing one of `names` (after `partial`)
 * and then continue freely once the name has ended; undefined when no name continues `partial`.
 */
export function memberConstraintParam(
  kind: ServerConstraintKind,
  names: readonly string[],
  partial: string,
): Record<string, string> | undefined {
  const rests = [...new Set(names.filter((n) => n.startsWith(partial) && n.length > 0).map((n) => n.slice(partial.length)))].sort(
    (a, b) => b.length - a.length,
  );
  if (rests.length === 0) return undefined;
  if (kind === 'guided_regex') return { guided_regex: `(?:${rests.map(escapeRegExp).join('|')})(?:[^A-Za-z0-9_$][\\s\\S]*)?` };
  // GBNF has no empty literal: a name already complete makes the name optional.
  const nonEmpty = rests.filter((r) => r.length > 0);
  if (nonEmpty.length === 0) return undefined;
  return {
    grammar: [
      `root ::= name${nonEmpty.length < rests.length ? '?' : ''} rest`,
      `name ::= ${nonEmpty.map(gbnfString).join(' | ')}`,
      `rest ::= ([^a-zA-Z0-9_$] any*)?`,
      `any ::= [^\\x00]`,
    ].join('\n'),
  };
}

export class OpenAICompatibleClient implements ModelClient {
  private window: number | undefined;
  private readonly rate = new ReadRate();
  readonly backend = 'openai' as const;
  /** Its server may offer a constraint mechanism (guided_regex, grammar) for the member at the cursor. */
  readonly capabilities: ModelCapabilities = { memberChoice: true };
  readonly family: ModelFamily;
  /** Found once, on the first request that can use it. */
  private constraintKind: Promise<ServerConstraintKind | undefined> | undefined;

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
    if (timedOut)
      return new ModelClientError('timeout', `${what}: no answer from ${this.endpoint} within ${limitMs} ms`, this.endpoint, this.model);
    if (signal.aborted) return new CancellationError();
    if (isModelClientError(e)) return e;
    if (e instanceof RateLimitedError) return new ModelClientError('rateLimited', `${what}: ${e.message}`, this.endpoint, this.model, 429);
    if (e instanceof RedirectRefusedError || e instanceof AnswerTooLargeError)
      return new ModelClientError('failed', `${what}: ${e.message}`, this.endpoint, this.model);
    if (e instanceof ConnectionClosedError)
      return new ModelClientError('closed', `${what}: ${this.endpoint} closed the connection mid-answer`, this.endpoint, this.model);
    const certificate = certificateProblem(e);
    if (certificate)
      return new ModelClientError(
        'certificate',
        certificateMessage(`the completion server at ${this.endpoint}`, certificate),
        this.endpoint,
        this.model,
      );
    if (networkErrorKind(e) === 'unreachable')
      return new ModelClientError('unreachable', `the completion server is not reachable at ${this.endpoint}`, this.endpoint, this.model);
    return new ModelClientError('failed', `${what}: ${e instanceof Error ? e.message : String(e)}`, this.endpoint, this.model);
  }

  private httpError(status: number, raw: string, what: string): ModelClientError {
    const body = raw.slice(0, 300);
    if (status === 404 && /model/i.test(body))
      return new ModelClientError(
        'modelMissing',
        `model "${this.model}" is not served by ${this.endpoint}: ${body}`,
        this.endpoint,
        this.model,
        404,
      );
    return new ModelClientError(
      'httpStatus',
      `${what}: ${this.endpoint} answered HTTP ${status}${body ? `: ${body}` : ''}`,
      this.endpoint,
      this.model,
      status,
    );
  }

  /**
   * Which constraint mechanism the server offers: vLLM lists its models as `owned_by: "vllm"`;
   * llama.cpp's server answers `/props` with its generation settings. Anything else: none.
   */
  serverConstraint(signal: AbortSignal): Promise<ServerConstraintKind | undefined> {
    this.constraintKind ??= (async () => {
      const limit = deadline(signal, PROBE_LIMIT_MS);
      try {
        const models = await openAiRequest(this.options.baseUrl, '/models', { apiKey: this.options.apiKey, signal: limit.signal });
        const owners = ((parseJson(models.raw) as { data?: Array<{ owned_by?: unknown }> } | undefined)?.data ?? []).map((m) => m.owned_by);
        if (models.ok && owners.includes('vllm')) return 'guided_regex';
        // `/props` lives beside `/v1` (the URL parser resolves the dot segment).
        const props = await openAiRequest(this.options.baseUrl, '/../props', { apiKey: this.options.apiKey, signal: limit.signal });
        const body = parseJson(props.raw) as { default_generation_settings?: unknown } | undefined;
        if (props.ok && body && typeof body.default_generation_settings === 'object') return 'grammar';
        return undefined;
      } catch {
        if (signal.aborted && !limit.timedOut()) {
          // Cancelled by the request, not answered: ask again next time.
          this.constraintKind = undefined;
        }
        return undefined;
      }
    })();
    return this.constraintKind;
  }

  /**
   * What the server read of the prompt and how fast: llama.cpp's `timings` (tokens read, not from its
   * cache, those reused, and the reading's milliseconds), else the usage's prompt tokens less those
   * cached (vLLM) over the request's wall time; the read rate keeps it.
   */
  private recordRead(body: unknown, wallMs: number): PromptRead | undefined {
    const answer = body as
      | {
          timings?: { prompt_n?: unknown; prompt_ms?: unknown; cache_n?: unknown };
          usage?: { prompt_tokens?: unknown; prompt_tokens_details?: { cached_tokens?: unknown } };
        }
      | undefined;
    const { prompt_n: n, prompt_ms: ms, cache_n: reused } = answer?.timings ?? {};
    if (typeof n === 'number' && typeof ms === 'number') {
      this.rate.record(n, ms);
      return { evaluated: n, ms, ...(typeof reused === 'number' ? { cached: reused } : {}) };
    }
    const tokens = answer?.usage?.prompt_tokens;
    const cached = answer?.usage?.prompt_tokens_details?.cached_tokens;
    if (typeof tokens !== 'number') return undefined;
    const evaluated = tokens - (typeof cached === 'number' ? cached : 0);
    this.rate.record(evaluated, wallMs);
    return { evaluated, ...(typeof cached === 'number' ? { cached } : {}) };
  }

  /**
   * What keeps llama.cpp's server from reading again what it holds: its prompt cache on, and chunks of
   * 256 tokens or more that moved (an item left the shared block's middle) shifted in its cache instead
   * of read. Other servers get nothing they might refuse.
   */
  private async cacheParams(signal: AbortSignal): Promise<Record<string, unknown>> {
    return (await this.serverConstraint(signal)) === 'grammar' ? { cache_prompt: true, n_cache_reuse: LLAMA_CACHE_REUSE } : {};
  }

  get readRate(): number | undefined {
    return this.rate.tokensPerSecond;
  }

  /** The server's context window where it says it (check() reads it); the prompt budget stays inside it. */
  get contextTokens(): number | undefined {
    return this.window;
  }

  /** llama.cpp's `/props` (`default_generation_settings.n_ctx`); best effort. */
  private async readServerContext(signal: AbortSignal): Promise<void> {
    try {
      const props = await openAiRequest(this.options.baseUrl, '/../props', { apiKey: this.options.apiKey, signal });
      const settings = (parseJson(props.raw) as { default_generation_settings?: { n_ctx?: unknown } } | undefined)
        ?.default_generation_settings;
      const n = settings?.n_ctx;
      if (props.ok && typeof n === 'number' && n >= 256) this.window = n;
    } catch {
      // A server without /props keeps no known window.
    }
  }

  /** One token asked for, so the server reads `prompt` into its prompt cache (vLLM refuses `max_tokens: 0`). */
  async warm(prompt: string, signal: AbortSignal): Promise<void> {
    const limit = deadline(signal, WARM_LIMIT_MS);
    const start = performance.now();
    try {
      const { ok, status, raw } = await openAiRequest(this.options.baseUrl, '/completions', {
        apiKey: this.options.apiKey,
        signal: limit.signal,
        body: { model: this.model, prompt, max_tokens: 1, temperature: 0, stream: false, ...(await this.cacheParams(limit.signal)) },
      });
      if (!ok) throw this.httpError(status, raw, 'warm-up');
      this.recordRead(parseJson(raw), performance.now() - start);
    } catch (e) {
      throw this.toError(e, limit.timedOut(), signal, 'warm-up', WARM_LIMIT_MS);
    }
  }

  async generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
    const start = performance.now();
    const limitMs = this.options.timeoutMs ?? 7000;
    const limit = deadline(signal, limitMs);
    try {
      const cacheParams = await this.cacheParams(limit.signal);
      const kind = request.memberChoice ? await this.serverConstraint(limit.signal) : undefined;
      const constraint =
        kind && request.memberChoice ? memberConstraintParam(kind, request.memberChoice.names, request.memberChoice.partial) : undefined;
      const { ok, status, raw } = await openAiRequest(this.options.baseUrl, '/completions', {
        apiKey: this.options.apiKey,
        signal: limit.signal,
        body: {
          model: this.model,
          prompt: request.prompt,
          max_tokens: request.maxNewTokens,
          temperature: request.temperature ?? 0,
          stop: request.stop.slice(0, MAX_SERVER_STOPS),
          stream: false,
          // The chosen tokens' log-probabilities (the show gate's confidence; 1: no alternatives asked for).
          logprobs: 1,
          ...cacheParams,
          ...constraint,
        },
      });
      if (!ok) throw this.httpError(status, raw, 'completions');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new ModelClientError(
          'malformed',
          `completions: malformed JSON from ${this.endpoint}: ${raw.slice(0, 120)}`,
          this.endpoint,
          this.model,
        );
      }
      const choice = (body as { choices?: Array<{ text?: unknown; finish_reason?: unknown; logprobs?: unknown }> }).choices?.[0];
      if (!choice || typeof choice.text !== 'string')
        throw new ModelClientError(
          'malformed',
          `completions: the answer from ${this.endpoint} has no choices[0].text`,
          this.endpoint,
          this.model,
        );
      const cut = cutAtStop(choice.text, request.stop);
      const read = this.recordRead(body, performance.now() - start);
      const usage = (body as { usage?: { completion_tokens?: unknown } }).usage;
      return {
        text: cut.text,
        model: this.model,
        elapsedMs: performance.now() - start,
        ...(typeof usage?.completion_tokens === 'number' ? { tokens: usage.completion_tokens } : {}),
        stoppedBy: cut.stopped || choice.finish_reason === 'stop' ? 'stop' : choice.finish_reason === 'length' ? 'length' : 'unknown',
        ...(constraint && kind ? { serverConstraint: kind } : {}),
        ...withLogprobs(openAiTokenLogprobs(choice.logprobs)),
        ...(read ? { read } : {}),
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
      const body = parseJson(raw) as { data?: Array<{ id?: unknown; max_model_len?: unknown }> } | undefined;
      const ids = (body?.data ?? []).map((m) => m.id).filter((id): id is string => typeof id === 'string');
      if (ids.length > 0 && !ids.includes(this.model))
        return {
          kind: 'modelMissing',
          message: `model "${this.model}" is not served by ${this.endpoint} (it serves: ${ids.slice(0, 5).join(', ')})`,
          model: this.model,
          endpoint: this.endpoint,
        };
      // vLLM lists the model's window (`max_model_len`); llama.cpp's server gives its context in /props.
      const listed = body?.data?.find((m) => m.id === this.model)?.max_model_len;
      if (typeof listed === 'number') this.window = listed;
      else await this.readServerContext(limit.signal);
      return undefined;
    } catch (e) {
      const err = this.toError(e, limit.timedOut(), signal, 'list models', limitMs);
      if (isModelClientError(err)) return problemOf(err);
      throw err;
    }
  }
}

function withLogprobs(logprobs: TokenLogprob[] | undefined): { logprobs?: TokenLogprob[] } {
  return logprobs ? { logprobs } : {};
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

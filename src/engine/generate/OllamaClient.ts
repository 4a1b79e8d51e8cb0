// Completion through Ollama with the `ollama` package: raw FIM prompts, streaming, stop
// sequences, keep_alive and num_predict; a start-up check that the model is pulled, and pull
// with progress so the editor can offer it.
import type { Ollama } from 'ollama';
import type { ModelFamily } from '../prompt/templates';
import { modelFamilyOf } from '../prompt/templates';
import { CancellationError } from '../util/errors';
import { deadline } from '../util/abort';
import { tokenLogprobsOf } from './logprobs';
import { ReadRate } from './readRate';
import {
  AnswerTooLargeError,
  ConnectionClosedError,
  MAX_PROGRESS_LINE_BYTES,
  ollamaApi,
  RedirectRefusedError,
  RateLimitedError,
  type BodyLimit,
} from './httpApi';
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
  type TokenLogprob,
  type ModelClient,
  type ModelProblem,
} from './types';

interface OllamaClientOptions {
  /** e.g. http://127.0.0.1:11434 */
  host: string;
  model: string;
  /** Override the family guessed from the model name. */
  family?: ModelFamily;
  /** How long Ollama keeps the model loaded after a request (default '30m'; avoids reloads between keystrokes). */
  keepAlive?: string | number;
  /** Whole-request time limit in ms (default 7,000; docs/ARCHITECTURE.md "Prior art": Cody uses 5 s for Ollama). */
  timeoutMs?: number;
}

interface PullProgress {
  status: string;
  completed?: number;
  total?: number;
}

/** Ollama tags are `name:tag`; an untagged name means `:latest`. */
function sameOllamaModel(a: string, b: string): boolean {
  const norm = (s: string): string => (s.includes(':') ? s : `${s}:latest`);
  return norm(a) === norm(b);
}

/** The start-up check (the server answers, the model is pulled) waits at most this long. */
const CHECK_LIMIT_MS = 5000;

/** Most characters of streamed text kept of one answer (a line completion is a few hundred). */
const MAX_ANSWER_CHARS = 64 * 1024;

/**
 * The context window every request asks Ollama for. Its default (2,048 tokens before 0.6.4) is
 * smaller than a 2,048-token prompt plus the answer, and Ollama then drops the prompt's head, the
 * repository block first; one fixed value also keeps Ollama from reloading the model between requests.
 * 8,192 tokens leave room for the definitions a line needs (docs/BENCHMARKS.md "Prompt recall": Java
 * line prompts held them in 85% of validation cases, against 77% with 4,096).
 */
const OLLAMA_NUM_CTX = 8192;

export class OllamaClient implements ModelClient {
  readonly backend = 'ollama' as const;
  readonly family: ModelFamily;
  /** The context every request asks for: OLLAMA_NUM_CTX, or the model's own when /api/show says it is smaller. */
  private window = OLLAMA_NUM_CTX;
  private readonly rate = new ReadRate();

  constructor(private readonly options: OllamaClientOptions) {
    this.family = options.family ?? modelFamilyOf(options.model);
  }

  get model(): string {
    return this.options.model;
  }

  get endpoint(): string {
    return this.options.host;
  }

  /** An Ollama instance whose every fetch also obeys `signal` (the package only aborts streams itself). */
  private api(signal: AbortSignal, limit?: BodyLimit): Ollama {
    return ollamaApi(this.options.host, signal, limit);
  }

  /** `limitMs`: the limit the call ran under (the start-up check has its own), so the message states it. */
  private toError(e: unknown, timedOut: boolean, signal: AbortSignal, what: string, limitMs: number): Error {
    if (timedOut)
      return new ModelClientError(
        'timeout',
        `${what}: no answer from Ollama at ${this.endpoint} within ${limitMs} ms`,
        this.endpoint,
        this.model,
      );
    if (signal.aborted) return new CancellationError();
    if (isModelClientError(e)) return e;
    if (e instanceof RateLimitedError) return new ModelClientError('rateLimited', `${what}: ${e.message}`, this.endpoint, this.model, 429);
    if (e instanceof RedirectRefusedError || e instanceof AnswerTooLargeError)
      return new ModelClientError('failed', `${what}: Ollama at ${this.endpoint}: ${e.message}`, this.endpoint, this.model);
    if (e instanceof ConnectionClosedError)
      return new ModelClientError(
        'closed',
        `${what}: Ollama at ${this.endpoint} closed the connection mid-answer`,
        this.endpoint,
        this.model,
      );
    const status = (e as { status_code?: unknown }).status_code;
    const message = e instanceof Error ? e.message : String(e);
    if (typeof status === 'number') {
      if (status === 404 && /not found|pull/i.test(message))
        return new ModelClientError(
          'modelMissing',
          `model "${this.model}" is not pulled on ${this.endpoint} (run: ollama pull ${this.model})`,
          this.endpoint,
          this.model,
          status,
        );
      return new ModelClientError(
        'httpStatus',
        `${what}: Ollama answered HTTP ${status}: ${message.slice(0, 200)}`,
        this.endpoint,
        this.model,
        status,
      );
    }
    // The package reports a stream without its final part (it skips lines that are not JSON) this way.
    if (e instanceof SyntaxError || /did not receive done|invalid json/i.test(message))
      return new ModelClientError(
        'malformed',
        `${what}: malformed response from Ollama: ${message.slice(0, 200)}`,
        this.endpoint,
        this.model,
      );
    const certificate = certificateProblem(e);
    if (certificate)
      return new ModelClientError('certificate', certificateMessage(`Ollama at ${this.endpoint}`, certificate), this.endpoint, this.model);
    const kind = networkErrorKind(e);
    if (kind === 'unreachable')
      return new ModelClientError('unreachable', `Ollama is not reachable at ${this.endpoint}`, this.endpoint, this.model);
    return new ModelClientError('failed', `${what}: ${message}`, this.endpoint, this.model);
  }

  async generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
    const start = performance.now();
    const limitMs = this.options.timeoutMs ?? 7000;
    const limit = deadline(signal, limitMs);
    let text = '';
    let firstTokenMs: number | undefined;
    let tokens: number | undefined;
    let stoppedBy: GenerateResult['stoppedBy'] = 'unknown';
    let read: GenerateResult['read'];
    const logprobs: TokenLogprob[] = [];
    try {
      const stream = await this.api(limit.signal).generate({
        model: this.model,
        prompt: request.prompt,
        raw: true,
        stream: true,
        // The chosen tokens' log-probabilities (the show gate's confidence); a server too old for them sends none.
        logprobs: true,
        keep_alive: this.options.keepAlive ?? '30m',
        options: {
          // The warm-up's window: a model whose own context is smaller is not reloaded between the two.
          num_ctx: this.window,
          num_predict: request.maxNewTokens,
          temperature: request.temperature ?? 0,
          stop: [...request.stop],
        },
      });
      const onAbort = (): void => stream.abort();
      limit.signal.addEventListener('abort', onAbort, { once: true });
      let sawDone = false;
      try {
        for await (const part of stream) {
          if (typeof part.response !== 'string')
            throw new ModelClientError(
              'malformed',
              'malformed response from Ollama: a streamed part has no "response" text',
              this.endpoint,
              this.model,
            );
          if (firstTokenMs === undefined && part.response) firstTokenMs = performance.now() - start;
          text += part.response;
          if (Array.isArray(part.logprobs)) logprobs.push(...tokenLogprobsOf(part.logprobs));
          // A server that streams without end is cut here: the text so far is the answer.
          if (text.length > MAX_ANSWER_CHARS) {
            text = text.slice(0, MAX_ANSWER_CHARS);
            stoppedBy = 'length';
            stream.abort();
            break;
          }
          // Servers that ignore stop sequences are cut here, and the stream closed early.
          const cut = cutAtStop(text, request.stop);
          if (cut.stopped) {
            text = cut.text;
            stoppedBy = 'stop';
            stream.abort();
            break;
          }
          // The answer is complete for the request (a single line that has ended): closing the
          // stream stops the server generating the rest of num_predict.
          if (!part.done && request.until?.(text)) {
            stoppedBy = 'stop';
            stream.abort();
            break;
          }
          if (part.done) {
            sawDone = true;
            tokens = part.eval_count;
            read = this.recordRead(part);
            stoppedBy = part.done_reason === 'length' ? 'length' : 'stop';
          }
        }
      } catch (e) {
        // The answer's bytes passed the transport's cap: what was streamed so far is kept.
        if (!(e instanceof AnswerTooLargeError) || text === '') throw e;
        stoppedBy = 'length';
      } finally {
        limit.signal.removeEventListener('abort', onAbort);
      }
      if (limit.signal.aborted) throw new Error('aborted');
      // The package skips lines that are not JSON; a stream without its final part was malformed or cut.
      if (!sawDone && stoppedBy !== 'stop' && stoppedBy !== 'length')
        throw new ModelClientError(
          'malformed',
          'malformed response from Ollama: the stream ended without its final "done" part',
          this.endpoint,
          this.model,
        );
    } catch (e) {
      throw this.toError(e, limit.timedOut(), signal, 'generate', limitMs);
    }
    return {
      text,
      model: this.model,
      elapsedMs: performance.now() - start,
      ...(firstTokenMs !== undefined ? { firstTokenMs } : {}),
      ...(tokens !== undefined ? { tokens } : {}),
      stoppedBy,
      ...(logprobs.length > 0 ? { logprobs } : {}),
      ...(read ? { read } : {}),
    };
  }

  /** Ollama says how many prompt tokens it read (the rest came from its cache) and how long that took, in nanoseconds. */
  private recordRead(answer: unknown): GenerateResult['read'] {
    const read = answer as Partial<{ prompt_eval_count: number; prompt_eval_duration: number }>;
    if (typeof read.prompt_eval_count !== 'number' || typeof read.prompt_eval_duration !== 'number') return undefined;
    this.rate.record(read.prompt_eval_count, read.prompt_eval_duration / 1e6);
    return { evaluated: read.prompt_eval_count, ms: read.prompt_eval_duration / 1e6 };
  }

  /**
   * One token asked for, so the server reads `prompt` into its cache (Ollama takes `num_predict: 0`
   * as no limit, not as "read only"); the options match generate's, so the loaded model is reused.
   */
  async warm(prompt: string, signal: AbortSignal): Promise<void> {
    const limit = deadline(signal, WARM_LIMIT_MS);
    try {
      const answer = await this.api(limit.signal).generate({
        model: this.model,
        prompt,
        raw: true,
        stream: false,
        keep_alive: this.options.keepAlive ?? '30m',
        options: { num_ctx: this.window, num_predict: 1, temperature: 0 },
      });
      this.recordRead(answer);
    } catch (e) {
      throw this.toError(e, limit.timedOut(), signal, 'warm-up', WARM_LIMIT_MS);
    }
  }

  get readRate(): number | undefined {
    return this.rate.tokensPerSecond;
  }

  /** The models this server has pulled (/api/tags). */
  async listModels(signal: AbortSignal): Promise<string[]> {
    const limitMs = Math.min(this.options.timeoutMs ?? 7000, CHECK_LIMIT_MS);
    const limit = deadline(signal, limitMs);
    try {
      const list = await this.api(limit.signal).list();
      if (!list || !Array.isArray(list.models)) throw new SyntaxError('/api/tags has no "models" list');
      return list.models.map((m) => m.name ?? m.model).filter((n): n is string => typeof n === 'string');
    } catch (e) {
      throw this.toError(e, limit.timedOut(), signal, 'list models', limitMs);
    }
  }

  /** The prompt budget stays inside the context every request asks for. */
  get contextTokens(): number {
    return this.window;
  }

  /** The model's trained context (`model_info["<arch>.context_length"]` of /api/show), where the server says it; best effort. */
  private async readContextLength(signal: AbortSignal): Promise<void> {
    const limit = deadline(signal, Math.min(this.options.timeoutMs ?? 7000, CHECK_LIMIT_MS));
    try {
      // The package types model_info as a Map; over HTTP it is a JSON object.
      const shown = (await this.api(limit.signal).show({ model: this.model })) as unknown as { model_info?: Record<string, unknown> };
      const info = shown.model_info ?? {};
      const length = Object.entries(info).find(([k, v]) => k.endsWith('.context_length') && typeof v === 'number')?.[1] as
        number | undefined;
      if (length !== undefined && length >= 256) this.window = Math.min(OLLAMA_NUM_CTX, length);
    } catch {
      // An older server without model_info keeps the fixed window.
    }
  }

  async check(signal: AbortSignal): Promise<ModelProblem | undefined> {
    try {
      const names = await this.listModels(signal);
      if (names.some((n) => sameOllamaModel(n, this.model))) {
        await this.readContextLength(signal);
        return undefined;
      }
      return {
        kind: 'modelMissing',
        message: `model "${this.model}" is not pulled on ${this.endpoint}`,
        model: this.model,
        endpoint: this.endpoint,
      };
    } catch (e) {
      if (isModelClientError(e)) return problemOf(e);
      throw e;
    }
  }

  /** `ollama pull` with progress; resolves when the server reports success. */
  async pull(onProgress: (p: PullProgress) => void, signal: AbortSignal, model = this.model): Promise<void> {
    try {
      const stream = await this.api(signal, { maxLineBytes: MAX_PROGRESS_LINE_BYTES }).pull({ model, stream: true });
      const onAbort = (): void => stream.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        for await (const p of stream) onProgress({ status: p.status, ...(p.total ? { total: p.total, completed: p.completed } : {}) });
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
      if (signal.aborted) throw new CancellationError();
    } catch (e) {
      throw this.toError(e, false, signal, `pull ${model}`, 0);
    }
  }
}

// The LLM reranker (CodeRAG section 2.3.1): one BestFit prompt per window, temperature 0, a few
// output tokens, thinking off; the label is read strictly and scored by its probability at the
// label token when the server returns top log-probabilities. Talks to Ollama (the `ollama`
// package) or to any OpenAI-compatible server (vLLM, TGI, llama.cpp server) through its logprobs.
import type { ChatResponse, GenerateResponse, Logprob } from 'ollama';
import { labelScores, parseBestFitAnswer, type TokenLogprob } from './bestFitAnswer';
import { bestFitMessages, chatMlPrompt, type ChatMessage } from './bestFitPrompt';
import type { Reranker, RerankDoc, RerankQuery, WindowPick } from './types';
import { RerankError } from './types';
import { CancellationError, errorMessage } from '../util/errors';
import { raceDeadline } from '../util/abort';
import { ollamaApi, openAiBase, openAiRequest } from '../generate/httpApi';
import { redactForModel } from '../generate/redactBoundary';

/** What one reranker call got back from the model. */
interface LlmAnswer {
  text: string;
  /** Generated tokens with their top alternatives, when the server returns them. */
  tokens?: TokenLogprob[];
}

/** Sends the BestFit messages to a model server; throws on transport or HTTP failures. */
type LlmTransport = (messages: readonly ChatMessage[], signal: AbortSignal) => Promise<LlmAnswer>;

interface SamplingOptions {
  /** 0 for reranking; the distillation teacher samples (CodeRAG used 0.8). */
  temperature?: number;
  /** Output tokens: `<answer>[C]</answer>` is under ten. */
  maxTokens?: number;
  /** Alternatives per token (servers cap it at 20, as CodeRAG's scoring uses). */
  topLogprobs?: number;
  seed?: number;
}

interface LlmRerankerOptions extends SamplingOptions {
  model: string;
  /** Per call; a call past it keeps its window in retrieval order. */
  timeoutMs?: number;
}

const DEFAULT_RERANK_MODEL = 'qwen3:8b';
const DEFAULT_RERANK_TIMEOUT_MS = 10_000;
const STOP = ['</answer>'];

class LlmReranker implements Reranker {
  readonly kind = 'llm' as const;

  constructor(
    readonly name: string,
    private readonly transport: LlmTransport,
    private readonly timeoutMs = DEFAULT_RERANK_TIMEOUT_MS,
  ) {}

  async pick(query: RerankQuery, window: readonly RerankDoc[], signal: AbortSignal): Promise<WindowPick> {
    if (window.length === 0) throw new RangeError('an empty window has nothing to pick');
    // The query and every window leave for a model server: through the redaction boundary (a snippet seen in several windows is redacted
    // once).
    const sent = { ...query, text: (await redactForModel(query.text)).text };
    const docs = await Promise.all(window.map(async (d) => ({ ...d, text: (await redactForModel(d.text)).text })));
    const answer = await this.ask(bestFitMessages(sent, docs), signal);
    const parsed = parseBestFitAnswer(answer.text, window.length);
    if (parsed.kind === 'unparsable') throw new RerankError('unparsable', 'the answer is not <answer>[X]</answer>', answer.text);
    if (parsed.kind === 'outsideWindow')
      throw new RerankError('outsideWindow', `label [${parsed.label}] is not one of the ${window.length} offered`, answer.text);
    const scores = answer.tokens ? labelScores(answer.tokens, window.length) : undefined;
    // The generated label decides (at temperature 0 it is the argmax of the scores; a sampling
    // teacher's votes must stay samples); the scores go to the trace and the distillation data.
    return { index: parsed.index, scores, answer: answer.text };
  }

  /** The transport under this call's timeout and the caller's signal. */
  private async ask(messages: readonly ChatMessage[], signal: AbortSignal): Promise<LlmAnswer> {
    try {
      return await raceDeadline(
        (s) => this.transport(messages, s),
        this.timeoutMs,
        signal,
        () => new RerankError('timeout', `no answer within ${this.timeoutMs} ms`),
      );
    } catch (e) {
      if (signal.aborted) throw new CancellationError();
      throw classifyFailure(e);
    }
  }
}

/** Why fetch failed: the socket error code (ECONNREFUSED ...) or the cause's message. */
function causeCode(e: unknown): string | undefined {
  const cause = (e as { cause?: { code?: unknown; message?: unknown; errors?: Array<{ code?: unknown }> } } | undefined)?.cause;
  const code = cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message;
  return typeof code === 'string' && code !== '' ? code : undefined;
}

function classifyFailure(e: unknown): RerankError {
  if (e instanceof RerankError) return e;
  const status =
    (e as { status_code?: unknown; status?: unknown } | undefined)?.status_code ?? (e as { status?: unknown } | undefined)?.status;
  const message = errorMessage(e);
  if (typeof status === 'number') {
    if (status === 404 && /not found|pull/i.test(message)) return new RerankError('model', `model not available: ${message}`);
    return new RerankError('http', `HTTP ${status}: ${message}`);
  }
  if (e instanceof SyntaxError) return new RerankError('http', `malformed response: ${message}`);
  const code = causeCode(e);
  if (/^E[A-Z]+$/.test(code ?? '') || /fetch failed/i.test(message)) {
    return new RerankError('unavailable', `server unreachable${code ? ` (${code})` : ''}: ${message}`);
  }
  return new RerankError('http', message);
}

// ---- Ollama ---------------------------------------------------------------------------------

interface OllamaRerankerOptions extends Partial<LlmRerankerOptions> {
  /** e.g. http://127.0.0.1:11434 */
  host?: string;
  /** `chat` (default) sends system + user messages; `generate` sends them as system + prompt. */
  api?: 'chat' | 'generate';
}

function fromOllamaLogprobs(logprobs: Logprob[] | undefined): TokenLogprob[] | undefined {
  if (!Array.isArray(logprobs) || logprobs.length === 0) return undefined;
  return logprobs.map((l) => ({
    token: String(l.token),
    logprob: Number(l.logprob),
    top: l.top_logprobs?.map((t) => ({ token: String(t.token), logprob: Number(t.logprob) })),
  }));
}

/** An Ollama transport through the `ollama` package; the caller's signal reaches the HTTP request. */
function ollamaTransport(options: OllamaRerankerOptions = {}): LlmTransport {
  const model = options.model ?? DEFAULT_RERANK_MODEL;
  const sampling = {
    temperature: options.temperature ?? 0,
    num_predict: options.maxTokens ?? 16,
    stop: STOP,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
  };
  const topLogprobs = options.topLogprobs ?? 20;
  return async (messages, signal) => {
    // The package gives non-streaming calls no signal; the shared factory's fetch carries ours.
    const client = ollamaApi(options.host ?? 'http://127.0.0.1:11434', signal);
    if (options.api === 'generate') {
      const system = messages.find((m) => m.role === 'system')?.content;
      const prompt = messages
        .filter((m) => m.role !== 'system')
        .map((m) => m.content)
        .join('\n');
      const res: GenerateResponse = await client.generate({
        model,
        system,
        prompt,
        stream: false,
        think: false,
        logprobs: true,
        top_logprobs: topLogprobs,
        options: sampling,
      });
      if (typeof res?.response !== 'string') throw new RerankError('http', 'malformed response: no "response" text');
      return { text: res.response, tokens: fromOllamaLogprobs(res.logprobs) };
    }
    const res: ChatResponse = await client.chat({
      model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      stream: false,
      think: false,
      logprobs: true,
      top_logprobs: topLogprobs,
      options: sampling,
    });
    const text = res?.message?.content;
    if (typeof text !== 'string') throw new RerankError('http', 'malformed response: no message content');
    return { text, tokens: fromOllamaLogprobs(res.logprobs) };
  };
}

export function ollamaReranker(options: OllamaRerankerOptions = {}): LlmReranker {
  const host = options.host ?? 'http://127.0.0.1:11434';
  return new LlmReranker(
    `ollama ${options.model ?? DEFAULT_RERANK_MODEL} @ ${host}`,
    ollamaTransport({ ...options, host }),
    options.timeoutMs,
  );
}

// ---- OpenAI-compatible ----------------------------------------------------------------------

interface OpenAiRerankerOptions extends Partial<LlmRerankerOptions> {
  /** The server, with or without the trailing /v1 (e.g. http://127.0.0.1:8000). */
  baseUrl: string;
  /** `chat` uses /v1/chat/completions; `completions` sends a ChatML prompt to /v1/completions. */
  api?: 'chat' | 'completions';
  apiKey?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function chatLogprobs(choice: Json): TokenLogprob[] | undefined {
  const content = isObject(choice.logprobs) ? choice.logprobs.content : undefined;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  return content.filter(isObject).map((t) => ({
    token: String(t.token),
    logprob: Number(t.logprob),
    top: Array.isArray(t.top_logprobs)
      ? t.top_logprobs.filter(isObject).map((a) => ({ token: String(a.token), logprob: Number(a.logprob) }))
      : undefined,
  }));
}

function completionLogprobs(choice: Json): TokenLogprob[] | undefined {
  const lp = isObject(choice.logprobs) ? choice.logprobs : undefined;
  if (!lp || !Array.isArray(lp.tokens) || lp.tokens.length === 0) return undefined;
  const logprobs = Array.isArray(lp.token_logprobs) ? lp.token_logprobs : [];
  const tops = Array.isArray(lp.top_logprobs) ? lp.top_logprobs : [];
  return lp.tokens.map((token, i) => {
    const top = tops[i];
    return {
      token: String(token),
      logprob: Number(logprobs[i]),
      top: isObject(top) ? Object.entries(top).map(([t, l]) => ({ token: t, logprob: Number(l) })) : undefined,
    };
  });
}

function openAiTransport(options: OpenAiRerankerOptions): LlmTransport {
  const model = options.model ?? DEFAULT_RERANK_MODEL;
  const topLogprobs = options.topLogprobs ?? 20;
  const common: Json = { model, temperature: options.temperature ?? 0, max_tokens: options.maxTokens ?? 16, stop: STOP, stream: false };
  if (options.seed !== undefined) common.seed = options.seed;
  return async (messages, signal) => {
    const chat = options.api !== 'completions';
    const body: Json = chat
      ? {
          ...common,
          messages,
          logprobs: true,
          top_logprobs: topLogprobs,
          ...(/qwen3/i.test(model) ? { chat_template_kwargs: { enable_thinking: false } } : {}),
        }
      : { ...common, prompt: chatMlPrompt(messages), logprobs: topLogprobs };
    const res = await openAiRequest(options.baseUrl, chat ? '/chat/completions' : '/completions', { body, apiKey: options.apiKey, signal });
    const raw = res.raw;
    if (!res.ok) {
      const model404 = res.status === 404 && /model/i.test(raw);
      throw new RerankError(model404 ? 'model' : 'http', `HTTP ${res.status}: ${raw.slice(0, 200)}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new RerankError('http', `malformed response: ${raw.slice(0, 80)}`);
    }
    const choice = isObject(json) && Array.isArray(json.choices) && isObject(json.choices[0]) ? json.choices[0] : undefined;
    if (!choice) throw new RerankError('http', 'malformed response: no choices');
    if (chat) {
      const text = isObject(choice.message) ? choice.message.content : undefined;
      if (typeof text !== 'string') throw new RerankError('http', 'malformed response: no message content');
      return { text, tokens: chatLogprobs(choice) };
    }
    if (typeof choice.text !== 'string') throw new RerankError('http', 'malformed response: no text');
    return { text: choice.text, tokens: completionLogprobs(choice) };
  };
}

export function openAiReranker(options: OpenAiRerankerOptions): LlmReranker {
  return new LlmReranker(
    `openai ${options.model ?? DEFAULT_RERANK_MODEL} @ ${openAiBase(options.baseUrl)}`,
    openAiTransport(options),
    options.timeoutMs,
  );
}

// The chosen tokens' log-probabilities as model servers return them: Ollama's `logprobs` list
// ({token, logprob} per streamed part) and OpenAI-compatible completions' `logprobs` object
// (parallel `tokens` and `token_logprobs`). A server's answer is outside data: entries that are not
// a string token with a finite log-probability at most 0 are dropped, and the list is bounded.
import type { TokenLogprob } from './types';

/** More tokens than any answer CodeRAG asks for (a body's 128 new tokens, with room). */
const MAX_TOKENS = 4096;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function entry(token: unknown, logprob: unknown): TokenLogprob | undefined {
  const lp = typeof logprob === 'number' ? logprob : Number.NaN;
  if (typeof token !== 'string' || !Number.isFinite(lp) || lp > 1e-6) return undefined;
  return { token: token.slice(0, 256), logprob: Math.min(0, lp) };
}

/** Ollama's `logprobs` list (generate and chat answers, each streamed part). */
export function tokenLogprobsOf(list: readonly unknown[]): TokenLogprob[] {
  const out: TokenLogprob[] = [];
  for (const l of list.slice(0, MAX_TOKENS)) {
    const e = isObject(l) ? entry(l.token, l.logprob) : undefined;
    if (e) out.push(e);
  }
  return out;
}

/** An OpenAI-compatible completion choice's `logprobs` ({tokens, token_logprobs}); undefined when it has none. */
export function openAiTokenLogprobs(logprobs: unknown): TokenLogprob[] | undefined {
  if (!isObject(logprobs) || !Array.isArray(logprobs.tokens) || !Array.isArray(logprobs.token_logprobs)) return undefined;
  const tokens = logprobs.tokens as unknown[];
  const values = logprobs.token_logprobs as unknown[];
  const out: TokenLogprob[] = [];
  for (let i = 0; i < Math.min(tokens.length, values.length, MAX_TOKENS); i++) {
    const e = entry(tokens[i], values[i]);
    if (e) out.push(e);
  }
  return out.length > 0 ? out : undefined;
}

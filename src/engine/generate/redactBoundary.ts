// The one boundary where text leaves for a model: every completion prompt (line and body mode,
// the body's sketch), every LLM-rerank window and every hypothetical-line prompt passes through
// redactForModel here, so no caller can send a credential by forgetting to redact. The pipeline
// composition (createPipeline) wraps the completion client and the next-line model; LlmReranker
// redacts its query and windows. The embedded model's copy source (GenerateRequest.copyFrom) is
// the user's own file and never leaves the process: it is passed as it is.
import { redactSecrets, type Redacted } from '../prompt/redact';
import type { GenerateRequest, GenerateResult, ModelClient, NextLineModel, RedactedPrompt } from './types';

/** How text is redacted on its way to a model (the chosen rule set; a benchmark swaps in another). */
export type Redactor = (text: string) => Promise<Redacted>;

/** What leaves for a model: `text` with its credentials redacted. */
export function redactForModel(text: string, redactor: Redactor = redactSecrets): Promise<Redacted> {
  return redactor(text);
}

/** The prompts this boundary redacted, with the rule set that did: only those are sent without redacting them again. */
const redactedHere = new WeakMap<RedactedPrompt, Redactor>();

/** `text` redacted for a model, as a result the boundary recognises: a request that carries it is not redacted a second time. */
export async function redactPrompt(text: string, redactor: Redactor = redactSecrets): Promise<RedactedPrompt> {
  const { text: sent, count } = await redactForModel(text, redactor);
  const out: RedactedPrompt = Object.freeze({ text: sent, count });
  redactedHere.set(out, redactor);
  return out;
}

/** What leaves for `request`: its own redacted prompt where the boundary made it for this text with this rule set, else redacted now. */
async function sentText(request: GenerateRequest, redactor: Redactor): Promise<string> {
  const given = request.redacted;
  if (given && redactedHere.get(given) === redactor && given.text === request.prompt) return given.text;
  return (await redactForModel(request.prompt, redactor)).text;
}

const wrapped = new WeakMap<ModelClient, ModelClient>();

/** `client` whose every prompt is redacted before it is sent; the same wrapper for the same client. */
export function redactingClient(client: ModelClient, redactor: Redactor = redactSecrets): ModelClient {
  const known = redactor === redactSecrets ? wrapped.get(client) : undefined;
  if (known) return known;
  const out: ModelClient = {
    get backend() {
      return client.backend;
    },
    get model() {
      return client.model;
    },
    get family() {
      return client.family;
    },
    get endpoint() {
      return client.endpoint;
    },
    get contextTokens() {
      return client.contextTokens;
    },
    get readRate() {
      return client.readRate;
    },
    // What the client can use of checking (ModelClient.capabilities) passes through unchanged.
    get capabilities() {
      return client.capabilities;
    },
    async generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
      const { redacted: _redacted, ...rest } = request;
      return client.generate({ ...rest, prompt: await sentText(request, redactor) }, signal);
    },
    ...(client.warm
      ? { warm: async (prompt: string, signal: AbortSignal) => client.warm!((await redactForModel(prompt, redactor)).text, signal) }
      : {}),
    ...(client.check ? { check: (signal: AbortSignal) => client.check!(signal) } : {}),
    ...(client.countTokens ? { countTokens: (text: string) => client.countTokens!(text) } : {}),
    ...(client.prepare ? { prepare: (signal: AbortSignal) => client.prepare!(signal) } : {}),
  };
  if (redactor === redactSecrets) wrapped.set(client, out);
  return out;
}

/** The hypothetical-line model with its prompt redacted. */
export function redactingNextLine(lm: NextLineModel, redactor: Redactor = redactSecrets): NextLineModel {
  return async (prompt, maxNewTokens, signal) => lm((await redactForModel(prompt, redactor)).text, maxNewTokens, signal);
}

// Model clients (docs/ARCHITECTURE.md "Model clients"): one interface for Ollama, OpenAI-compatible servers
// and the embedded ONNX causal LM, with typed errors the server turns into a status.
import type { ModelFamily } from '../prompt/templates';
import type { CopyPriorStats } from './copyPrior';
import { MAX_ERROR_CHARS, outsideText } from '../util/outsideText';

export interface GenerateRequest {
  /** The full model input (already FIM-rendered when the family supports it). */
  prompt: string;
  /**
   * The redaction boundary's own result for `prompt` (redactBoundary.redactPrompt), where the caller redacted it first to show it: the
   * boundary sends it as it is instead of redacting the prompt a second time. Inner clients never see it.
   */
  redacted?: RedactedPrompt;
  maxNewTokens: number;
  stop: readonly string[];
  /** Default 0 (CodeRAG decodes greedily). */
  temperature?: number;
  /** Checked decoding (clients that see logits apply it; others ignore it). */
  constraint?: DecodeConstraint;
  /**
   * The prompt ends at a dereference the repository types: the answer must start by finishing one
   * of these member names (`partial` is what is typed of it). A server with a constraint mechanism
   * (vLLM's guided_regex, llama.cpp's grammar) is asked to honour it; others ignore it.
   */
  memberChoice?: { names: readonly string[]; partial: string };
  /**
   * While this says the answer so far is unfinished (a method body not yet closed), a client that
   * sees logits does not let the model end (its end token is masked); others ignore it.
   */
  holdEnd?: (generated: string) => boolean;
  /**
   * While this says the line is still blank (the cursor on an empty line), a client that sees
   * logits does not let the model end or break the line, nor begin it with a closing bracket (the
   * line's postprocess would cut that away): it writes the statement. Others ignore it.
   */
  holdLine?: (generated: string) => boolean;
  /**
   * The answer is complete: more text could not change what is kept of it (a single line that has
   * ended). The embedded model stops there, a streaming client closes the stream (stoppedBy `stop`);
   * others ignore it.
   */
  until?: (generated: string) => boolean;
  /**
   * The file above the cursor, beyond what the prompt holds: a client that sees logits may copy
   * from it as from the prompt (copyPrior.ts). Others ignore it.
   */
  copyFrom?: string;
}

/** A per-step restriction of the next token (check/dereferenceConstraint: members at a `.`). */
export interface DecodeConstraint {
  /** Set the logits of tokens that may not come next to -Infinity; `generated` is the text so far. */
  apply(tokenTexts: readonly string[], generated: string, logits: Float32Array): void;
  /**
   * Whether apply() may change anything at this step (true where unsure); false lets an engine that
   * reads the distribution only for a filter choose on its own. Absent: every step.
   */
  active?(generated: string): boolean;
}

export interface GenerateResult {
  text: string;
  model: string;
  elapsedMs: number;
  /** Time to the first streamed token, when the client streams. */
  firstTokenMs?: number;
  /** Tokens generated, when the backend reports them. */
  tokens?: number;
  /** Why generation ended: a stop sequence, the token limit, the model's end token, or not reported by the server. */
  stoppedBy?: 'stop' | 'length' | 'eos' | 'unknown';
  /** What the embedded model's copy prior did (copyPrior.ts), when it was on. */
  copyPrior?: CopyPriorStats;
  /** The server constraint the request carried (`guided_regex`, `grammar`), when it carried one. */
  serverConstraint?: string;
  /**
   * Each generated token with its log-probability (natural log) in the order written, when the
   * client sees them (the embedded model) or the server returns them; the show gate reads them.
   */
  logprobs?: TokenLogprob[];
  /** What the server read of the prompt and what it took from its cache, where it says (llama.cpp's `timings`, Ollama's counts). */
  read?: PromptRead;
}

/** A server's own account of reading a prompt. */
export interface PromptRead {
  /** Prompt tokens it evaluated. */
  evaluated: number;
  /** Prompt tokens it reused from its cache, where it says. */
  cached?: number;
  /** Milliseconds it took to read them, where it says. */
  ms?: number;
}

/** One generated token and the model's log-probability of it. */
export interface TokenLogprob {
  token: string;
  logprob: number;
}

/** `local`: a GGUF model run by llama.cpp in the language server's process. */
export type ModelBackend = 'ollama' | 'openai' | 'embedded' | 'local';

/**
 * What a client can do with checking's output (the pipeline's check stage asks for nothing else):
 * `decodeConstraint`, apply a per-token DecodeConstraint (a client that sees the logits);
 * `memberChoice`, ask its server to finish one of a set of member names (a server-side constraint
 * mechanism). A client with neither gets its finished answer checked. `wholeKnowledge`: its model
 * completes lines better from whole definitions in the prompt than from compact ones (absent: the
 * compact form, and the longer list a model server's window holds).
 */
export interface ModelCapabilities {
  readonly decodeConstraint?: boolean;
  readonly memberChoice?: boolean;
  readonly wholeKnowledge?: boolean;
}

/** A completion model. Streaming clients still resolve with the whole (stop-trimmed) text. */
export interface ModelClient {
  readonly backend: ModelBackend;
  readonly model: string;
  readonly family: ModelFamily;
  /** Where it lives, for messages (`http://127.0.0.1:11434`, `embedded`). */
  readonly endpoint: string;
  /** What it can do with checking's output; absent: nothing (its answers are checked after). */
  readonly capabilities?: ModelCapabilities;
  generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult>;
  /** Checks the server answers and the model exists; resolves with a problem or undefined. */
  check?(signal: AbortSignal): Promise<ModelProblem | undefined>;
  /** Tokenizer-exact counting where the client has the model's tokenizer. */
  countTokens?(text: string): number;
  /** The model's context window in tokens, where it is small enough to bound the prompt budget. */
  readonly contextTokens?: number;
  /** Tokens a second the server read its recent warm-ups at (readRate.ts); absent before the first or without warm-ups. */
  readonly readRate?: number;
  /** Load what the client needs before the prompt is built (the embedded model's tokenizer and context size). */
  prepare?(signal: AbortSignal): Promise<void>;
  /**
   * Has the server read `prompt` into its prompt cache, asking for at most one token, under
   * WARM_LIMIT_MS instead of the suggestion's time limit (a server that reuses the longest common
   * prefix of consecutive prompts then reads only what the next keystrokes change). Absent: the
   * client keeps no server cache worth filling.
   */
  warm?(prompt: string, signal: AbortSignal): Promise<void>;
}

/** The causal LM's greedy next line (ProCC: one non-empty line of at most 20 tokens); similar code's hypothetical perspective asks it. */
export type NextLineModel = (prompt: string, maxNewTokens: number, signal: AbortSignal) => Promise<string>;

/**
 * The longest a warm-up may take: a CPU server reads a new place's 2,000-token prompt in 10-30 s
 * with a 1.5B model (docs/BENCHMARKS.md "Typing replay"), longer than a suggestion may wait.
 */
export const WARM_LIMIT_MS = 120_000;

/**
 * `closed`: the server answered, then the connection ended before the answer did (not `unreachable`);
 * `rateLimited`: it asked to wait (HTTP 429 Retry-After), and nothing is sent until then;
 * `certificate`: an https server's TLS certificate is not trusted (self-signed, an unknown issuer, expired, another host's).
 */
export type ModelErrorKind =
  'unreachable' | 'closed' | 'timeout' | 'httpStatus' | 'rateLimited' | 'malformed' | 'modelMissing' | 'certificate' | 'failed';

/** A failed model call; `kind` tells the user what is wrong, `status` carries the HTTP status. */
export class ModelClientError extends Error {
  /**
   * The message may quote a server (an error body, a package's error): it loses escapes and control characters, and is bounded
   * (util/outsideText).
   */
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly endpoint: string,
    readonly model: string,
    readonly status?: number,
  ) {
    super(outsideText(message, MAX_ERROR_CHARS));
    this.name = 'ModelClientError';
  }
}

export function isModelClientError(e: unknown): e is ModelClientError {
  return e instanceof ModelClientError;
}

export interface ModelProblem {
  kind: ModelErrorKind;
  message: string;
  model: string;
  endpoint: string;
}

export function problemOf(e: ModelClientError): ModelProblem {
  return { kind: e.kind, message: e.message, model: e.model, endpoint: e.endpoint };
}

/** Cut `text` at the first stop sequence; says whether one was found. */
export function cutAtStop(text: string, stop: readonly string[]): { text: string; stopped: boolean } {
  let cut = -1;
  for (const s of stop) {
    if (!s) continue;
    const i = text.indexOf(s);
    if (i >= 0 && (cut < 0 || i < cut)) cut = i;
  }
  return cut < 0 ? { text, stopped: false } : { text: text.slice(0, cut), stopped: true };
}

/** OpenSSL's and Node's codes for a certificate the connection did not trust. */
const CERTIFICATE_CODES = new RegExp(
  '^(?:' +
    [
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'SELF_SIGNED_CERT_IN_CHAIN',
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'UNABLE_TO_GET_ISSUER_CERT(?:_LOCALLY)?',
      'UNABLE_TO_GET_CRL',
      'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
      'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
      'CERT_[A-Z_]+',
      'ERROR_IN_CERT_NOT_(?:BEFORE|AFTER)_FIELD',
      'INVALID_CA',
      'INVALID_PURPOSE',
      'PATH_LENGTH_EXCEEDED',
      'HOSTNAME_MISMATCH',
      'ERR_TLS_CERT_ALTNAME_INVALID',
    ].join('|') +
    ')$',
);

/**
 * The TLS certificate problem behind a fetch failure (undici wraps it in `cause`): its code and
 * Node's words for it; undefined for any other failure.
 */
export function certificateProblem(e: unknown): { code: string; reason: string } | undefined {
  for (let cause: unknown = e, depth = 0; cause && depth < 4; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string' && CERTIFICATE_CODES.test(code)) {
      const reason = cause instanceof Error ? cause.message : '';
      return { code, reason };
    }
  }
  return undefined;
}

/** The message of a certificate problem: that the certificate is not trusted, its code and reason. */
export function certificateMessage(server: string, problem: { code: string; reason: string }): string {
  return `the TLS certificate of ${server} is not trusted (${problem.code}${problem.reason ? `: ${problem.reason}` : ''})`;
}

/** Classify a fetch failure (undici wraps the socket error in `cause`). */
export function networkErrorKind(e: unknown): 'unreachable' | 'failed' {
  const code = (e as { cause?: { code?: string } } | undefined)?.cause?.code ?? (e as { code?: string } | undefined)?.code;
  if (code && /ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ECONNRESET|EAI_AGAIN|UND_ERR_SOCKET|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT/.test(code))
    return 'unreachable';
  if (e instanceof TypeError && /fetch failed/.test(e.message)) return 'unreachable';
  return 'failed';
}

/** Serialises model calls (the server allows one in flight); without one the call runs directly. */
export interface ModelSlot {
  run<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
  /** Runs `work` without letting newer requests abort it (they wait for it); only `signal` stops it. */
  runPinned?<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
}

/** A prompt as the redaction boundary redacted it: what it sends, and how many values it replaced. */
export interface RedactedPrompt {
  readonly text: string;
  readonly count: number;
}

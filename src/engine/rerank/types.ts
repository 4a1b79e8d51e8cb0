// BestFit reranking (CodeRAG section 2.3): what a reranker receives, returns and records, and the
// rerank stage's contract.
import type { UnfinishedFile } from '../query/unfinishedFile';
import type { Candidate } from '../retrieve/types';
import { MAX_ERROR_CHARS, outsideText, stripControlChars } from '../util/outsideText';

/** The rerank query: the unfinished file's path and the last lines of its code context. */
export interface RerankQuery {
  /** Repo-relative path of the unfinished file. */
  path: string;
  /** The query block as the prompt shows it (path header + the last 30 lines). */
  text: string;
  /**
   * The whole code context before the cursor. Never shown to an LLM (its prompt is `text`); a
   * pointwise scorer reads it for where and how often each name was used above.
   */
  context?: string;
}

/** One candidate as a reranker sees it. */
export interface RerankDoc {
  /** Stable id (the snippet id); never shown to the model. */
  id: string;
  /** The snippet text shown after its label. */
  text: string;
}

/** A reranker's answer for one window. */
export interface WindowPick {
  /** Index into the window of the most helpful candidate. */
  index: number;
  /** Per-window-position scores (label probabilities for the LLM, model scores for the distilled reranker). */
  scores?: number[];
  /** The raw answer text, for the trace. */
  answer?: string;
}

/** Picks the most helpful candidate of a small window (CodeRAG Fig. 4, one forward pass). */
export interface Reranker {
  /** `llm` or `distilled` (what the switch selects). */
  readonly kind: RerankerKind;
  /** Human-readable: the model name and where it runs. */
  readonly name: string;
  /**
   * Throws RerankError when the answer cannot be used (unparsable, a label outside the window,
   * a timeout, the server is down); throws CancellationError when `signal` aborts.
   */
  pick(query: RerankQuery, window: readonly RerankDoc[], signal: AbortSignal): Promise<WindowPick>;
  /**
   * Optional: called once with every candidate before the heap sort, so a pointwise scorer can
   * score them all in one batch (the windows then reuse those scores).
   */
  prepare?(query: RerankQuery, docs: readonly RerankDoc[], signal: AbortSignal): Promise<void>;
}

export type RerankerKind = 'llm' | 'distilled';

/** What a RerankerSwitch may select: a reranker, or none (keep the retrieval order). */
export type RerankerChoice = RerankerKind | 'none';

type RerankFailure = 'unparsable' | 'outsideWindow' | 'timeout' | 'unavailable' | 'http' | 'model';

/** Why a reranker call gave no usable pick. */
export class RerankError extends Error {
  readonly answer?: string;

  /** The message and the answer may quote a server: both lose escapes and control characters (util/outsideText). */
  constructor(
    readonly reason: RerankFailure,
    message: string,
    answer?: string,
  ) {
    super(outsideText(message, MAX_ERROR_CHARS));
    this.name = 'RerankError';
    if (answer !== undefined) this.answer = stripControlChars(answer);
  }
}

export function isRerankError(e: unknown): e is RerankError {
  return e instanceof RerankError;
}

/** Failures that say the reranker itself is unusable for now (later windows skip it). */
export function isTransportFailure(reason: RerankFailure): boolean {
  return reason === 'timeout' || reason === 'unavailable' || reason === 'http' || reason === 'model';
}

/** One window comparison of the heap sort, as the trace keeps it. */
export interface RerankCall {
  /** Candidate ids in the order the window showed them ([A], [B], ...). */
  window: string[];
  /** Index into `window` that won. */
  picked: number;
  /** `ok`: the reranker picked; `fallback`: its call failed, the window kept retrieval order; `skipped`: not called (it failed before). */
  status: 'ok' | 'fallback' | 'skipped';
  reason?: string;
  scores?: number[];
  answer?: string;
  elapsedMs: number;
}

export interface RerankTrace {
  reranker: string;
  /** Candidate ids in retrieval order. */
  before: string[];
  /** The top-u ids in reranked order. */
  after: string[];
  calls: RerankCall[];
  /** Calls that reached the reranker (`calls` minus the skipped ones). */
  rerankerCalls: number;
  elapsedMs: number;
  /** Set when the reranker failed at least once (the order then falls back to retrieval order where it failed). */
  degraded?: string;
}

/** One window of the rerank stage as the completion trace keeps it. */
export interface RerankDecision {
  /** Candidate ids offered in one window. */
  window: string[];
  /** The id the reranker picked, when it picked one. */
  picked?: string;
  elapsedMs: number;
  /** Why the window stayed in retrieval order (timeout, unparsable answer ...). */
  failure?: string;
}

export interface RerankInput {
  file: UnfinishedFile;
  candidates: readonly Candidate[];
  topU: number;
}

export interface RerankOutcome {
  /** Top-u, best first. */
  ranked: Candidate[];
  calls: RerankDecision[];
  notes?: string[];
  /** The heap sort's own trace (every window with its scores and answers), where a BestFit reranker ran. */
  detail?: RerankTrace;
  /** Credential-looking values redacted from the text sent to an LLM reranker. */
  redactions?: number;
}

/** The rerank stage (CodeRAG 2.3): picks the top-u of the merged candidates. */
export interface RerankStage {
  readonly name: string;
  /**
   * Its choice holds for a whole place of work (the pipeline reuses it at the next keystrokes
   * there): a reranker that asks a model server costs a request per window, too much per keystroke.
   */
  readonly perPlace?: boolean;
  rerank(input: RerankInput, signal: AbortSignal): Promise<RerankOutcome>;
}

// What a completion request carries, what it returns, the options of each stage, and the
// completion mode: the value that tells the one pipeline which kind of completion it makes.
import type { Lang } from '../kb/types';
import type { QueryStageOptions } from '../query/types';
import type { Candidate, RetrievalStageOptions, RetrievalTrace } from '../retrieve/types';
import type { RerankOutcome } from '../rerank/types';
import type { CompletionTrace } from './trace';

export interface CompletionRequest {
  /** Repo-relative path with forward slashes. */
  filePath: string;
  lang: Lang;
  /** Text before the cursor. */
  prefix: string;
  /** Text after the cursor. */
  suffix: string;
  /** Text the retrieval paths see after the prefix, never the prompt (RepoCoder's second round: the first generation). */
  retrievalSuffix?: string;
}

/** The pipeline's configuration slices (the server merges settings into them; the engine reads no settings). */
export interface PipelineOptions {
  query: QueryStageOptions;
  retrieval: RetrievalStageOptions;
  rerank: { topU: number; timeoutMs: number };
  prompt: { budgetTokens: number; suffixShare: number };
  generate: { maxNewTokens: number; temperature: number };
  postprocess: { maxLines: number; maxChars: number };
  /**
   * Checking against the repository at dereferences (check/): `constrain` masks the embedded
   * model's tokens to the receiver's members and checks remote models' answers; `repair` only
   * checks finished answers; `off`. Absent: off.
   */
  check?: { mode: CheckMode };
}

export type CheckMode = 'constrain' | 'repair' | 'off';
export const CHECK_MODES: readonly CheckMode[] = ['constrain', 'repair', 'off'];

export interface CompletionItem {
  /** Text to insert at the cursor. */
  text: string;
}

export interface CompletionResult {
  items: CompletionItem[];
  trace: CompletionTrace;
  /** The stages' own outputs, for tools that show more than the trace (the CLI, the bench). */
  retrieval?: RetrievalTrace;
  rerank?: RerankOutcome;
  /** The snippets in prompt order: the reranked top-u that entered the prompt (all of them without a model). */
  contexts: Candidate[];
}

/** What the model wrote, cut to what the mode completes. */
export interface PostprocessContext {
  lang: Lang;
  prefix: string;
  suffix: string;
}

/**
 * A completion mode: line completion (CodeRAG) today; method bodies (Rambo) and similar-code
 * retrieval (ProCC) plug in here as further values of the same composition, not new wirings.
 */
export interface CompletionMode {
  readonly name: 'line';
  /** Cut the model's raw text to what this mode inserts. */
  postprocess(raw: string, context: PostprocessContext, options: PipelineOptions['postprocess']): string;
}

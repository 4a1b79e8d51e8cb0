// The completion trace: what each stage did, how long it took and why it degraded; kept by the
// server for "Explain Last Completion" and printed by `coderag complete`.
import type { GuidedCall } from '../check/callArguments';
import type { SimilarTrace } from '../similar/types';
import { randomBytes } from 'node:crypto';
import type { Lang } from '../kb/types';
import type { Candidate, PathName, RetrievalTrace } from '../retrieve/types';
import type { RerankDecision } from '../rerank/types';
import type { ModelFamily } from '../prompt/templates';
import type { ModelErrorKind } from '../generate/types';
import type { CopyPriorStats } from '../generate/copyPrior';
import type { ConstrainedName } from '../check/dereferenceConstraint';
import type { MemberFix } from '../check/repairCompletion';
import type { GateFeatures } from '../gate/features';
import type { JunkCut } from '../generate/postprocess/junk';

export type StageName =
  | 'query'
  | 'retrieve'
  | 'rerank'
  | 'prompt'
  | 'generate'
  | 'postprocess'
  | 'detect'
  | 'signatures'
  | 'sketch'
  | 'elements'
  | 'usages'
  | 'knowledge'
  | 'similar';

/** What the body mode (Rambo) found, step by step. */
export interface BodyTrace {
  target: { name: string; className?: string; signature: string; line: number; detected: boolean };
  /** `model`, `none`, or the given sketch's source (BodyModeOptions.sketch). */
  sketchSource: string;
  sketch?: string;
  /** Where the elements came from when not the sketch. */
  elementsFrom?: string;
  /** How step a compared signatures (the search's words: `jaccard` for the product's). */
  signatureMatch?: string;
  signatureSimilar: Array<{ id: string; score: number }>;
  elements: Array<{ name: string; kind: string; matched: string; how: string; score: number; path: string; members?: number }>;
  unmapped: string[];
  usages: Array<{ id: string; path: string; score: number; via: string[] }>;
}
export type StageStatus = 'ok' | 'degraded' | 'failed' | 'skipped';

export interface StageTiming {
  stage: StageName;
  status: StageStatus;
  elapsedMs: number;
  message?: string;
}

export interface TraceCandidate {
  id: string;
  path: string;
  name: string;
  kind: string;
  paths: PathName[];
  scores: Partial<Record<PathName, number>>;
}

export interface TracePath {
  path: PathName;
  status: string;
  elapsedMs: number;
  budgetMs: number;
  message?: string;
  notes?: string[];
  results: Array<{ id: string; score: number; reason?: string }>;
}

export interface CompletionTrace {
  id: string;
  /** The completion mode that ran (line or body). */
  mode: string;
  body?: BodyTrace;
  /** ProCC's similar-code stage: the perspectives, the bandit's choice and, once known, its reward. */
  similar?: SimilarTrace;
  startedAt: string;
  filePath: string;
  lang: Lang;
  query?: {
    strategy: string;
    text: string;
    spans: Array<{ startLine: number; endLine: number }>;
    chunkScores?: Array<{ startLine: number; endLine: number; score: number }>;
    fallbackReason?: string;
  };
  retrieval?: { paths: TracePath[]; candidates: TraceCandidate[] };
  rerank?: { reranker: string; calls: RerankDecision[]; picked: string[]; notes?: string[]; redactions?: number };
  prompt?: {
    /** The prompt as sent to the model (credentials redacted). */
    text: string;
    /** Credential-looking values replaced in the prompt (engine/prompt/redact.ts). */
    redactions: number;
    tokens: number;
    budgetTokens: number;
    family: ModelFamily;
    fim: boolean;
    /** How the snippets entered: a comment block, or as the repository's files (the family's repository-level form). */
    format?: 'comment' | 'files';
    snippets: string[];
    snippetsDropped: number;
    prefixCut: boolean;
  };
  model?: {
    backend: string;
    model: string;
    endpoint: string;
    elapsedMs: number;
    firstTokenMs?: number;
    tokens?: number;
    raw: string;
    stoppedBy?: string;
    copyPrior?: CopyPriorStats;
    /** What the server read of the prompt and reused from its cache, as it says. */
    read?: { evaluated: number; cached?: number; ms?: number };
  };
  completion?: string;
  /**
   * The show gate: its score (the predicted share of the suggestion a person keeps), the threshold,
   * whether it was shown, whether the model's log-probabilities were among the features, and the features.
   */
  gate?: { shown: boolean; score: number; threshold: number; logprobs: boolean; learned: number; features: GateFeatures };
  /**
   * Why there is no suggestion although the model answered (the model wrote nothing, or which postprocessing or check step left nothing).
   */
  empty?: string;
  /** What the junk filters cut from the postprocessed text (a loop, the redaction placeholder, a repeat of the text after the cursor). */
  junk?: JunkCut[];
  /** Checking against the repository (check/): what was constrained while decoding, what was checked, repaired or cut after. */
  check?: {
    mode: string;
    /** The receiver at the cursor, when the prefix ends in a dereference the repository types. */
    atCursor?: { receiver: string; entities: string[]; names: number };
    constrained?: ConstrainedName[];
    /** Decoding steps the constraint saw, and its time in them (masking and receiver typing). */
    steps?: number;
    maskMs?: number;
    /** Of maskMs, receiver typing at dots the model wrote. */
    resolveMs?: number;
    /** Dereferences of the finished completion whose receiver resolved. */
    checked?: number;
    fixes?: MemberFix[];
    /** The model server's own constraint the request carried for the member at the cursor (`guided_regex`, `grammar`). */
    server?: string;
    /** Calls whose arguments were guided (the callable's parameters, the names in scope that fit them). */
    calls?: GuidedCall[];
    /** Why checking did not run or stopped (it never fails the completion). */
    note?: string;
  };
  stages: StageTiming[];
  /** The stage that left the request without an item, and why. */
  error?: { stage: StageName; kind: ModelErrorKind | 'error'; message: string };
  totalMs: number;
  /** Time spent making the model ready before the prompt (loading it on the first request). */
  modelPrepareMs?: number;
  /** Time spent outside the model call (the pipeline's own overhead plus retrieval). */
  nonModelMs: number;
  /** Time spent letting the host's pending messages through between stages. */
  checkpointMs?: number;
}

export function newTraceId(): string {
  return `${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

function summarizeCandidate(c: Candidate): TraceCandidate {
  return {
    id: c.snippet.id,
    path: c.snippet.path,
    name: c.snippet.qualifiedName || c.snippet.name,
    kind: c.snippet.kind,
    paths: c.paths,
    scores: c.scores,
  };
}

/** The retrieval stage's output as the trace keeps it (ids and scores, not the snippets' text). */
export function retrievalTraceOf(retrieval: RetrievalTrace): NonNullable<CompletionTrace['retrieval']> {
  return {
    paths: retrieval.paths.map((p) => ({
      path: p.path,
      status: p.status,
      elapsedMs: p.elapsedMs,
      budgetMs: p.budgetMs,
      ...(p.message ? { message: p.message } : {}),
      ...(p.notes ? { notes: p.notes } : {}),
      results: p.results.map((r) => ({ id: r.snippet.id, score: r.score, ...(r.reason ? { reason: r.reason } : {}) })),
    })),
    candidates: retrieval.candidates.map(summarizeCandidate),
  };
}

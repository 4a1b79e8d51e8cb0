// What the stages return (docs/ARCHITECTURE.md "Stage outcomes"): each stage that someone downstream
// reads hands back a typed outcome; the orchestrator passes it on (the show gate, the host's model
// health, learning and statistics) and the request's recorder (recorder.ts), the trace's one writer, keeps it for Explain.
import type { MemberFix } from '../check/repairCompletion';
import type { GuidedCall } from '../check/callArguments';
import type { ConstrainedName } from '../check/dereferenceConstraint';
import type { GateFeatures } from '../gate/features';
import type { GenerateResult, ModelClient, ModelErrorKind } from '../generate/types';
import { stripControlChars } from '../generate/postprocess/controlChars';
import type { SimilarTrace } from '../similar/types';
import type { JunkCut } from '../generate/postprocess/junk';
import type { RetrievalQuery } from '../query/types';
import type { RetrievalTrace } from '../retrieve/types';
import type { ModelFamily } from '../prompt/templates';
import type { BodyTrace, CompletionTrace, StageName, StageTiming } from './trace';

/** The check stage: what was constrained while decoding and what the finished answer's check found. */
export interface CheckOutcome {
  mode: string;
  /** Why checking did not run or stopped (it never fails the completion). */
  note?: string;
  /** The receiver at the cursor, when the prefix ends in a dereference the repository types. */
  atCursor?: { receiver: string; entities: string[]; names: number };
  constrained?: ConstrainedName[];
  /** Decoding steps the constraint saw, and its time in them (masking and receiver typing). */
  steps?: number;
  maskMs?: number;
  resolveMs?: number;
  calls?: GuidedCall[];
  /** The model server's own constraint the request carried for the member at the cursor. */
  server?: string;
  /** After the answer is checked: dereferences whose receiver resolved, and the fixes made. */
  checked?: number;
  fixes?: MemberFix[];
}

/** The generate stage: the model's answer, or why there is none (the host's model health reads it). */
export type GenerateOutcome =
  | { status: 'answered'; result: GenerateResult; backend: string; endpoint: string }
  | { status: 'failed'; kind: ModelErrorKind | 'error'; message: string };

/** The show gate: its score, the threshold (0: it did not decide), whether it showed the suggestion, and what it scored. */
export interface GateOutcome {
  shown: boolean;
  score: number;
  threshold: number;
  logprobs: boolean;
  /** The gate model's online updates so far. */
  learned: number;
  features: GateFeatures;
  /** The suggestion it scored (the result keeps it when the gate kept it from the editor; the trace has it as the completion). */
  text: string;
}

/** A stage that left the request without an item, and why. */
export interface StageFailure {
  stage: StageName;
  kind: ModelErrorKind | 'error';
  message: string;
}

/** Where the request's time went: every stage's timing, the model's loading and the yielding between stages. */
export interface RequestTimes {
  stages: readonly StageTiming[];
  modelPrepareMs?: number;
  checkpointMs?: number;
}

/** The outcomes of one request, as the pipeline hands them to its host (CompletionResult.outcomes). */
export interface StageOutcomes {
  similar?: SimilarTrace;
  check?: CheckOutcome;
  generate?: GenerateOutcome;
  gate?: GateOutcome;
  failure?: StageFailure;
  times: RequestTimes;
}

/** The prompt as the model got it: what the mode says of it, its redacted text, the budget it was fitted to and the model's family. */
export interface PromptOutcome {
  shown: Omit<NonNullable<CompletionTrace['prompt']>, 'text' | 'redactions' | 'budgetTokens' | 'family'>;
  redacted: { text: string; count: number };
  budgetTokens: number;
  family: ModelFamily;
}

/** What postprocessing, the junk filters and checking left: the text to insert ('' for none) and what the junk filters cut. */
export interface CutOutcome {
  completion: string;
  junk: JunkCut[];
}

/**
 * One stage result for the recorder. The trace-only ones (read by Explain and `coderag complete` alone) are written as they are:
 * Rambo's steps, the query, retrieval, the rerank's choice, the prompt, the cut and why nothing is suggested.
 */
export type StageOutcome =
  | { stage: 'body'; outcome: BodyTrace }
  | { stage: 'query'; outcome: RetrievalQuery }
  | { stage: 'retrieve'; outcome: RetrievalTrace }
  | { stage: 'rerank'; outcome: NonNullable<CompletionTrace['rerank']> }
  | { stage: 'prompt'; outcome: PromptOutcome }
  | { stage: 'cut'; outcome: CutOutcome }
  | { stage: 'empty'; outcome: string }
  | { stage: 'similar'; outcome: SimilarTrace }
  | { stage: 'check'; outcome: CheckOutcome }
  | { stage: 'generate'; outcome: GenerateOutcome }
  | { stage: 'gate'; outcome: GateOutcome }
  | { stage: 'failure'; outcome: StageFailure };

/** The trace's view of a check outcome, in the trace's order of fields. */
export function checkTraceOf(c: CheckOutcome): NonNullable<CompletionTrace['check']> {
  return {
    mode: c.mode,
    ...(c.note !== undefined ? { note: c.note } : {}),
    ...(c.atCursor ? { atCursor: c.atCursor } : {}),
    ...(c.constrained ? { constrained: c.constrained, steps: c.steps, maskMs: c.maskMs, resolveMs: c.resolveMs } : {}),
    ...(c.calls ? { calls: c.calls } : {}),
    ...(c.server !== undefined ? { server: c.server } : {}),
    ...(c.checked !== undefined ? { checked: c.checked, fixes: c.fixes ?? [] } : {}),
  };
}

/** The model section of the trace from an answer. */
export function modelTraceOf(o: Extract<GenerateOutcome, { status: 'answered' }>): NonNullable<CompletionTrace['model']> {
  const generated = o.result;
  return {
    backend: o.backend,
    model: generated.model,
    endpoint: o.endpoint,
    elapsedMs: generated.elapsedMs,
    // Shown in the editor's trace view and the terminal: without control characters.
    raw: stripControlChars(generated.text),
    ...(generated.firstTokenMs !== undefined ? { firstTokenMs: generated.firstTokenMs } : {}),
    ...(generated.tokens !== undefined ? { tokens: generated.tokens } : {}),
    ...(generated.stoppedBy ? { stoppedBy: generated.stoppedBy } : {}),
    ...(generated.copyPrior ? { copyPrior: generated.copyPrior } : {}),
    ...(generated.read ? { read: generated.read } : {}),
  };
}

/** The generate outcome of `model`'s answer. */
export function answered(model: Pick<ModelClient, 'backend' | 'endpoint'>, result: GenerateResult): GenerateOutcome {
  return { status: 'answered', result, backend: model.backend, endpoint: model.endpoint };
}

/** The trace's view of the prompt, as the redaction boundary (stages.model) sends it. */
export function promptTraceOf(o: PromptOutcome): NonNullable<CompletionTrace['prompt']> {
  const { format, ...shown } = o.shown;
  return {
    text: o.redacted.text,
    redactions: o.redacted.count,
    tokens: shown.tokens,
    budgetTokens: o.budgetTokens,
    family: o.family,
    fim: shown.fim,
    ...(format ? { format } : {}),
    snippets: shown.snippets,
    snippetsDropped: shown.snippetsDropped,
    prefixCut: shown.prefixCut,
  };
}

/** What each stage's time counts as: the model's answer, the repository's knowledge (and the models that rank it), or assembly. */
const STAGE_TIME: Record<StageName, 'model' | 'knowledge' | 'assembly'> = {
  generate: 'model',
  sketch: 'model',
  prompt: 'assembly',
  postprocess: 'assembly',
  query: 'knowledge',
  retrieve: 'knowledge',
  rerank: 'knowledge',
  similar: 'knowledge',
  knowledge: 'knowledge',
  detect: 'knowledge',
  signatures: 'knowledge',
  elements: 'knowledge',
  usages: 'knowledge',
};

/**
 * Model time: the completion model's calls (the answer and, in the body mode, the sketch) and its loading. The trace's
 * "outside the model" and the server's overhead both subtract it.
 */
export function modelTimeMs(times: RequestTimes): number {
  return stageTimeMs(times, 'model') + (times.modelPrepareMs ?? 0);
}

/** The time of the stages of one kind (STAGE_TIME). */
export function stageTimeMs(times: RequestTimes, kind: 'model' | 'knowledge' | 'assembly'): number {
  return times.stages.filter((s) => STAGE_TIME[s.stage] === kind).reduce((n, s) => n + s.elapsedMs, 0);
}

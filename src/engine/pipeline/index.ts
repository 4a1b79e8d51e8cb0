// The pipeline: one composition function, the stages every mode composes, its trace, the completion modes and their router.
export { createPipeline } from './createPipeline';
export { probingQueryBuilder } from './stages/query';
export { rerankerNow } from './stages/rerank';
export { similarModeFor } from './stages/similar';
export type { Pipeline, PipelineDeps } from './createPipeline';
export { complete, completeLine } from './complete';
export { MODEL_DEFAULTS, PIPELINE_DEFAULTS } from './defaults';
export { resolveOptions } from './resolveOptions';
export type { PipelineSettings } from './resolveOptions';
export { LINE_MODE } from './modes';
export { autoRouter, routerOf } from './router';
export { bodyHold, bodyMode, completeBody, cutBodyAnswer } from './bodyMode';
export type { BodyModeDeps } from './bodyMode';
export { composeInTurns, jaccardSignatures, type BodyComposer, type BodyLists, type SignatureSearch } from '../body/rambo';
export { RAMBO_LAYOUT, type BodyPromptLayout } from '../prompt/bodyPrompt';
export { formatTraceMarkdown } from './formatTrace';
export { modelTimeMs, stageTimeMs } from './outcomes';
export type { CheckOutcome, GateOutcome, GenerateOutcome, RequestTimes, StageFailure, StageOutcomes } from './outcomes';
export type { BodyTrace, CompletionTrace, StageName, StageStatus, StageTiming, TraceCandidate, TracePath } from './trace';
export { BODY_ELEMENTS, CHECK_MODES } from './types';
export type {
  BodyElements,
  CheckMode,
  CompletionItem,
  CompletionMode,
  ComposedMode,
  LinePlan,
  ModeName,
  Router,
  CompletionRequest,
  CompletionResult,
  BodyModeHooks,
  GivenSketch,
  PipelineOptions,
  PipelineParts,
  ReceiverTyping,
  RepoLease,
  RequestEnv,
  ResearchHooks,
  SketchSource,
  RequestContext,
  PostprocessContext,
} from './types';

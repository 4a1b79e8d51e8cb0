// One request's context: made once per request by the pipeline, read by every
// stage of every mode. What a stage works out of the file is kept for the next stage (memo).
import { UnfinishedAnalyses } from '../../flow/unfinished';
import { newTraceId, type CompletionTrace } from '../trace';
import { modelTimeMs, writeOutcome, type RequestTimes, type StageOutcome, type StageOutcomes } from '../outcomes';
import type { CompletionRequest, CompletionResult, PipelineOptions, PipelineStages, RequestContext } from '../types';

/** The outcomes CompletionResult.outcomes carries (StageOutcomes' fields but the times). */
const HANDED_ON: ReadonlySet<StageOutcome['stage']> = new Set(['similar', 'check', 'generate', 'gate', 'failure']);

export function requestContext(
  request: CompletionRequest,
  options: PipelineOptions,
  stages: PipelineStages,
  mode: string,
  signal: AbortSignal,
  analyses: UnfinishedAnalyses = new UnfinishedAnalyses(),
): RequestContext {
  const start = performance.now();
  const trace: CompletionTrace = {
    id: newTraceId(),
    mode,
    startedAt: new Date().toISOString(),
    filePath: request.filePath,
    lang: request.lang,
    stages: [],
    totalMs: 0,
    nonModelMs: 0,
  };
  const memos = new Map<string, unknown>();
  const outcomes: Omit<StageOutcomes, 'times'> = {};
  return {
    request,
    options,
    stages,
    trace,
    signal,
    analyses,
    memo<T>(key: string, compute: () => T): T {
      if (!memos.has(key)) memos.set(key, compute());
      return memos.get(key) as T;
    },
    record(o: StageOutcome): void {
      // The result keeps the outcomes the host reads; the trace-only ones are written alone.
      if (HANDED_ON.has(o.stage)) (outcomes as Record<string, StageOutcome['outcome']>)[o.stage] = o.outcome;
      writeOutcome(trace, o);
    },
    finish(items, { contexts, retrieval, rerank }): CompletionResult {
      trace.totalMs = performance.now() - start;
      const times: RequestTimes = {
        stages: trace.stages,
        ...(trace.modelPrepareMs !== undefined ? { modelPrepareMs: trace.modelPrepareMs } : {}),
        ...(trace.checkpointMs !== undefined ? { checkpointMs: trace.checkpointMs } : {}),
      };
      trace.nonModelMs = trace.totalMs - modelTimeMs(times);
      const { gate } = outcomes;
      return {
        items,
        trace,
        contexts,
        ...(retrieval ? { retrieval } : {}),
        ...(rerank ? { rerank } : {}),
        ...(gate ? { shown: gate.shown } : {}),
        ...(gate && !gate.shown && gate.text ? { suppressed: { text: gate.text } } : {}),
        outcomes: { ...outcomes, times },
      };
    },
  };
}

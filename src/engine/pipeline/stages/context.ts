// One request's context: made once per request by the pipeline, read by every
// stage of every mode. What a stage works out of the file is kept for the next stage (memo).
import { UnfinishedAnalyses } from '../../flow/unfinished';
import { newTraceId, type CompletionTrace } from '../trace';
import type { CompletionRequest, CompletionResult, PipelineOptions, PipelineStages, RequestContext } from '../types';

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
    finish(items, { contexts, retrieval, rerank }): CompletionResult {
      trace.totalMs = performance.now() - start;
      // Model time: the answer and, in the body mode, the sketch; loading the model is model time too.
      const modelMs = trace.stages.filter((s) => s.stage === 'generate' || s.stage === 'sketch').reduce((n, s) => n + s.elapsedMs, 0);
      trace.nonModelMs = trace.totalMs - modelMs - (trace.modelPrepareMs ?? 0);
      const gate = trace.gate;
      return {
        items,
        trace,
        contexts,
        ...(retrieval ? { retrieval } : {}),
        ...(rerank ? { rerank } : {}),
        ...(gate ? { shown: gate.shown } : {}),
        ...(gate && !gate.shown && trace.completion ? { suppressed: { text: trace.completion } } : {}),
      };
    },
  };
}

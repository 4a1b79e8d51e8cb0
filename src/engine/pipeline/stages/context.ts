// One request's context: made once per request by the pipeline, read by every stage of every mode.
// What a stage works out of the file is kept in a typed slot for the next stage; the recorder keeps
// what the stages did, and finish() hands the result back with the trace it builds.
import { UnfinishedAnalyses } from '../../flow/unfinished';
import { Recorder } from '../recorder';
import type {
  CompletionRequest,
  CompletionResult,
  PipelineOptions,
  PipelineParts,
  RepoLease,
  RequestContext,
  RequestEnv,
  RequestSlot,
  ResearchHooks,
} from '../types';

/** A slot whose value is computed once per request by `compute` (its name is for debugging). */
export function requestSlot<T>(name: string, compute: (context: RequestContext) => T): RequestSlot<T> {
  return { name, compute };
}

/** A slot of values per key (a text typed once per request, whatever asks for it). */
export function keyedSlot<T>(name: string): RequestSlot<Map<string, T>> {
  return requestSlot(name, () => new Map<string, T>());
}

/** The repository lent to the request, while its lease holds. */
export function repoNow(context: Pick<RequestContext, 'env'>): RepoLease | undefined {
  const repo = context.env.repo;
  return repo && !repo.lease?.aborted ? repo : undefined;
}

export interface RequestScope {
  env: RequestEnv;
  parts: PipelineParts;
  hooks: ResearchHooks;
  /** The mode's name until the router chooses (the router's). */
  mode: string;
  analyses?: UnfinishedAnalyses;
}

export function requestContext(
  request: CompletionRequest,
  options: PipelineOptions,
  scope: RequestScope,
  signal: AbortSignal,
): RequestContext {
  const recorder = new Recorder({ filePath: request.filePath, lang: request.lang, mode: scope.mode });
  const slots = new Map<RequestSlot<unknown>, unknown>();
  const context: RequestContext = {
    request,
    options,
    env: scope.env,
    parts: scope.parts,
    hooks: scope.hooks,
    recorder,
    signal,
    analyses: scope.analyses ?? new UnfinishedAnalyses(),
    slot<T>(slot: RequestSlot<T>): T {
      if (!slots.has(slot)) slots.set(slot, slot.compute(context));
      return slots.get(slot) as T;
    },
    async finish(items, { contexts, retrieval, rerank }): Promise<CompletionResult> {
      const { trace, outcomes } = await recorder.finish();
      return {
        items,
        trace,
        contexts,
        ...(retrieval ? { retrieval } : {}),
        ...(rerank ? { rerank } : {}),
        outcomes,
      };
    },
  };
  return context;
}

// The one composition function (docs/ARCHITECTURE.md "The pipeline"): every pipeline — the language
// server's, each CLI command's, each evaluation method's — is assembled here from the options (the
// one table of defaults in defaults.ts with the caller's overrides), the dependencies the host
// owns (retrieval paths, models, reranker switch, model slots) and a completion mode or a router.
import { buildQuery } from '../query/buildQuery';
import type { ChunkProber } from '../query/probeQuery';
import type { QueryBuilder } from '../query/types';
import { multiPathRetrieve } from '../retrieve/multiPathRetrieve';
import type { RetrievalStage, Retriever } from '../retrieve/types';
import { bestFitStage } from '../rerank/rerankStage';
import type { RerankerSwitch } from '../rerank/RerankerSwitch';
import { UnfinishedAnalyses } from '../flow/unfinished';
import { complete } from './complete';
import { redactingClient } from '../generate/redactBoundary';
import { redactSecrets } from '../prompt/redact';
import { LINE_MODE } from './modes';
import { routerOf } from './router';
import type { CompletionMode, CompletionRequest, CompletionResult, PipelineOptions, PipelineStages, Router } from './types';

/**
 * Parseable texts a pipeline keeps analysed across requests: the line being typed and a few it
 * returns to (each holds its text and its dataflow graph; a 4,000-line file's are a few MB).
 */
const KEPT_ANALYSES = 4;

/**
 * What the host owns and lends to a pipeline; each function is read per request. The model, the
 * model slots, the checkpoint, receiver typing, ProCC's perspectives and bandit and the show gate's model go to the stages as
 * they are (PipelineStages says what each does).
 */
export interface PipelineDeps extends Pick<
  PipelineStages,
  'model' | 'modelSlot' | 'probeSlot' | 'checkpoint' | 'receivers' | 'similar' | 'bandit' | 'showGateModel' | 'promptMemory' | 'warm'
> {
  /** The repository's retrieval paths ready now (a path still preparing is left out). */
  retrievers: () => readonly Retriever[];
  /** The probing model (CodeRAG Alg. 1), once loaded; until then the query falls back. */
  prober?: () => ChunkProber | undefined;
  /** Which BestFit reranker runs; absent: the retrieval order. */
  rerankers?: RerankerSwitch;
  /** The query stage's strategy; absent: CodeRAG's probing with `prober` (probingQueryBuilder), else options.query's fallback. */
  queryBuilder?: QueryBuilder;
}

export interface Pipeline {
  /** Which mode completes each request. */
  readonly router: Router;
  readonly options: PipelineOptions;
  /** One completion; rejects only with CancellationError when `signal` aborts. */
  complete(request: CompletionRequest, signal: AbortSignal): Promise<CompletionResult>;
}

/** The query stage over query/buildQuery: probing when a prober is loaded, else the fallback strategy. */
export function probingQueryBuilder(prober: () => ChunkProber | undefined): QueryBuilder {
  return {
    build: (file, options, signal) =>
      buildQuery(
        file.prefix,
        { strategy: options.strategy, fallback: options.fallback, f: options.f, g: options.g, m: options.m, maxProbes: options.maxProbes },
        prober(),
        signal,
      ),
  };
}

function multiPathStage(retrievers: () => readonly Retriever[]): RetrievalStage {
  return {
    retrieve: (request, options, signal) =>
      multiPathRetrieve(
        retrievers(),
        request,
        { budgetsMs: options.budgetsMs, ...(options.maxCandidates ? { maxCandidates: options.maxCandidates } : {}) },
        signal,
      ),
  };
}

/** A pipeline whose requests `route` sends to a mode (a mode given alone completes every request). */
export function createPipeline(options: PipelineOptions, deps: PipelineDeps, route: Router | CompletionMode = LINE_MODE): Pipeline {
  const router = routerOf(route);
  // The unfinished file's recent analyses, across this pipeline's requests (the keystrokes typed on one line parse its text once).
  const analyses = new UnfinishedAnalyses({ keep: KEPT_ANALYSES });
  const stages: PipelineStages = {
    query: deps.queryBuilder ?? probingQueryBuilder(deps.prober ?? (() => undefined)),
    retrieval: multiPathStage(deps.retrievers),
    hasRetrieval: () => deps.retrievers().length > 0,
    reranker: deps.rerankers ? bestFitStage(deps.rerankers) : () => undefined,
    ...(deps.probeSlot ? { probeSlot: deps.probeSlot } : {}),
    ...(deps.checkpoint ? { checkpoint: deps.checkpoint } : {}),
    // Every prompt of every mode leaves through the redaction boundary.
    ...(deps.model ? { model: () => redactingClient(deps.model!()) } : {}),
    ...(deps.modelSlot ? { modelSlot: deps.modelSlot } : {}),
    ...(deps.receivers ? { receivers: deps.receivers } : {}),
    ...(deps.similar ? { similar: deps.similar } : {}),
    ...(deps.bandit ? { bandit: deps.bandit } : {}),
    ...(deps.showGateModel ? { showGateModel: deps.showGateModel } : {}),
    ...(deps.promptMemory ? { promptMemory: deps.promptMemory } : {}),
    ...(deps.warm ? { warm: deps.warm } : {}),
  };
  return {
    router,
    options,
    complete: async (request, signal) => {
      const result = await complete(request, stages, options, router, signal, analyses);
      await redactTraceQueries(result.trace);
      return result;
    },
  };
}

/** The trace's queries quote the file above the cursor: Explain and --json show them redacted, as the prompt is. */
async function redactTraceQueries(trace: CompletionResult['trace']): Promise<void> {
  if (trace.query) trace.query.text = (await redactSecrets(trace.query.text)).text;
  for (const p of trace.similar?.perspectives ?? []) if (p.query) p.query = (await redactSecrets(p.query)).text;
}

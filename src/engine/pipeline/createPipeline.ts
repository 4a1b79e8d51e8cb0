// The one composition function (docs/ARCHITECTURE.md "The pipeline"): every pipeline — the language
// server's, each CLI command's, each evaluation method's — is assembled here from the options (the
// one table of defaults in defaults.ts with the caller's overrides), the dependencies the host
// owns (retrieval paths, models, reranker switch, model slots) and a completion mode or a router.
import { UnfinishedAnalyses } from '../flow/unfinished';
import { complete } from './complete';
import { redactingClient } from '../generate/redactBoundary';
import { LINE_MODE } from './modes';
import { routerOf } from './router';
import type {
  CompletionMode,
  CompletionRequest,
  CompletionResult,
  PipelineOptions,
  PipelineParts,
  RequestEnv,
  ResearchHooks,
  Router,
} from './types';

/**
 * Parseable texts a pipeline keeps analysed across requests: the line being typed and a few it
 * returns to (each holds its text and its dataflow graph; a 4,000-line file's are a few MB).
 */
const KEPT_ANALYSES = 4;

/**
 * What a host gives a pipeline: the parts it keeps across requests (PipelineParts), the environment
 * a request gets when its caller hands none (a CLI command's or a test's fixed one), and the research
 * hooks only an evaluation passes.
 */
export interface PipelineDeps extends PipelineParts {
  env?: RequestEnv;
  hooks?: ResearchHooks;
}

export interface Pipeline {
  /** Which mode completes each request. */
  readonly router: Router;
  readonly options: PipelineOptions;
  /**
   * One completion with what the host lends it (`env`, resolved at the request's start; absent: the pipeline's own); rejects only with
   * CancellationError when `signal` aborts.
   */
  complete(request: CompletionRequest, signal: AbortSignal, env?: RequestEnv): Promise<CompletionResult>;
}

/** A pipeline whose requests `route` sends to a mode (a mode given alone completes every request). */
export function createPipeline(options: PipelineOptions, deps: PipelineDeps = {}, route: Router | CompletionMode = LINE_MODE): Pipeline {
  const router = routerOf(route);
  // The unfinished file's recent analyses, across this pipeline's requests (the keystrokes typed on one line parse its text once).
  const analyses = new UnfinishedAnalyses({ keep: KEPT_ANALYSES });
  const { env: fixedEnv = {}, hooks = {}, ...parts } = deps;
  return {
    router,
    options,
    complete: (request, signal, env = fixedEnv) => {
      // Every prompt of every mode leaves through the redaction boundary.
      const lent: RequestEnv = env.model ? { ...env, model: redactingClient(env.model) } : env;
      return complete(request, options, { env: lent, parts, hooks, analyses }, router, signal);
    },
  };
}

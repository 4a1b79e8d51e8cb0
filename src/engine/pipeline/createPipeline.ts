// The one composition function (docs/ARCHITECTURE.md "The pipeline"): every pipeline — the language
// server's, each CLI command's, each evaluation method's — is assembled here from the options (the
// one table of defaults in defaults.ts with the caller's overrides), the dependencies the host
// owns (retrieval paths, models, reranker switch, model slots) and a completion mode or a router.
import type { KnowledgeBase } from '../kb/KnowledgeBase';
import type { Parsers } from '../kb/parsers';
import type { CausalLM } from '../models/types';
import type { EmbeddedLM } from '../generate/EmbeddedClient';
import type { TokenLogprob } from '../generate/types';
import { lmChunkProber } from '../query/lmChunkProber';
import type { ChunkProber } from '../query/probeQuery';
import { DataflowRetriever } from '../retrieve/dataflow/dataflowRetrieve';
import { DenseRetriever, type DenseEncoder, type DenseRetrieverOptions } from '../retrieve/dense/denseRetrieve';
import { SparseRetriever } from '../retrieve/sparse/sparseRetrieve';
import type { PathName, Retriever } from '../retrieve/types';
import { ReceiverTyper } from '../check/receiverMembers';
import { UnfinishedAnalyses } from '../flow/unfinished';
import { complete } from './complete';
import { redactingClient, redactingNextLine } from '../generate/redactBoundary';
import { LINE_MODE } from './modes';
import { routerOf } from './router';
import { SimilarRetriever, type NextLineModel, type SimilarRetrieval, type SimilarRetrieverOptions } from '../similar/perspectives';
import { CodeWindowIndex, type WindowIndexOptions } from '../similar/windowIndex';
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

// ---------------------------------------------------------------------------------------------
// The retrieval paths and the shipped causal LM's two roles, built here for every host.

export interface RetrievalPaths {
  /** Every path built, by name. */
  byName: ReadonlyMap<PathName, Retriever>;
  /** The paths ready once prepared without a model: sparse, dataflow. */
  retrievers: Retriever[];
  /**
   * The dense path, when an encoder is given: it embeds every item first, so a host may prepare it in the background and add it when ready.
   */
  dense?: DenseRetriever;
  /** Receiver typing over the same knowledge base, for checked completions (PipelineOptions.check). */
  receivers: ReceiverTyper;
  /** ProCC's code-window index, when an encoder is given for it: a host prepares it in the background. */
  windows?: CodeWindowIndex;
  /** ProCC's perspectives over those windows (not ready until the windows are prepared). */
  similar?: SimilarRetrieval;
  dispose(): void;
}

export interface RetrievalPathOptions {
  /** The paths to build (default CodeRAG's: sparse, dataflow and, with an encoder, dense); other names are the host's to build. */
  paths?: readonly PathName[];
  dense?: { encoder: DenseEncoder } & DenseRetrieverOptions;
  /** ProCC's windows and perspectives: the encoder (the dense path's), the causal LM's next line when loaded. */
  similar?: { encoder: DenseEncoder; nextLine?: () => NextLineModel | undefined } & WindowIndexOptions & SimilarRetrieverOptions;
}

/** CodeRAG's retrieval paths over one knowledge base (2.2.1). */
export function createRetrievalPaths(kb: KnowledgeBase, parsers: Parsers, options: RetrievalPathOptions = {}): RetrievalPaths {
  const wanted = new Set<PathName>(options.paths ?? ['sparse', 'dataflow', 'dense']);
  const byName = new Map<PathName, Retriever & { dispose(): void }>();
  if (wanted.has('sparse')) byName.set('sparse', new SparseRetriever(kb));
  if (wanted.has('dataflow')) byName.set('dataflow', new DataflowRetriever(kb, parsers));
  let dense: DenseRetriever | undefined;
  if (wanted.has('dense') && options.dense) {
    const { encoder, ...denseOptions } = options.dense;
    dense = new DenseRetriever(kb, encoder, denseOptions);
    byName.set('dense', dense);
  }
  const receivers = new ReceiverTyper(kb, parsers);
  let windows: CodeWindowIndex | undefined;
  let similar: SimilarRetriever | undefined;
  if (options.similar) {
    const { encoder, nextLine, queryLines, hypotheticalMatch, hypotheticalTokens, hypotheticalContextChars, ...windowOptions } =
      options.similar;
    windows = new CodeWindowIndex(kb, encoder, windowOptions);
    // The hypothetical line's prompt leaves through the redaction boundary too.
    const redactedLine = nextLine
      ? () => {
          const lm = nextLine();
          return lm ? redactingNextLine(lm) : undefined;
        }
      : undefined;
    similar = new SimilarRetriever(windows, kb, redactedLine, {
      ...(queryLines ? { queryLines } : {}),
      ...(hypotheticalMatch ? { hypotheticalMatch } : {}),
      ...(hypotheticalTokens ? { hypotheticalTokens } : {}),
      ...(hypotheticalContextChars ? { hypotheticalContextChars } : {}),
    });
  }
  return {
    byName,
    retrievers: [...byName.values()].filter((r) => r !== dense),
    ...(dense ? { dense } : {}),
    receivers,
    ...(windows && similar ? { windows, similar } : {}),
    dispose: () => {
      windows?.dispose();
      receivers.dispose();
      for (const r of byName.values()) r.dispose();
    },
  };
}

/** The shipped causal LM as the embedded completion model. */
export function embeddedLMOf(lm: CausalLM): EmbeddedLM {
  return {
    generate: async (prompt, options, signal) => {
      let stoppedBy: 'eos' | 'length' | 'stop' | undefined;
      const logprobs: TokenLogprob[] = [];
      const text = await lm.generate(
        prompt,
        {
          maxNewTokens: options.maxNewTokens,
          ...(options.stop ? { stop: [...options.stop] } : {}),
          ...(options.until ? { until: options.until } : {}),
          ...(options.logitsFilter ? { logitsFilter: options.logitsFilter } : {}),
          onStop: (r) => (stoppedBy = r),
          onToken: (token, logprob) => logprobs.push({ token, logprob }),
        },
        signal,
      );
      return { text, ...(stoppedBy ? { stoppedBy } : {}), logprobs };
    },
    encode: (text) => lm.encode(text),
    ...(lm.tokenTexts ? { tokenTexts: () => lm.tokenTexts!() } : {}),
    contextTokens: lm.maxPositions,
    eosId: lm.eosId,
  };
}

/** The shipped causal LM as the probing model (CodeRAG Alg. 1), batched and under a time budget. */
export function causalLMProber(lm: CausalLM): ChunkProber {
  return lmChunkProber(lm);
}

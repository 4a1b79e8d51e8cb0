// One benchmark case through one method (docs/BENCHMARK.md "Methods that must run in the same
// harness"; CodeRAG Tables 1, 3, 5): zero-shot, RG-1, RepoCoder, DraCo-like dataflow only, and the
// CodeRAG variants (s, d, df and their unions, + LLM or distilled BestFit reranking). Every method
// runs through the pipeline's complete() with its own stages, so the query, retrieval, rerank,
// prompt, generate and postprocess code is the product's; retrieval-only runs swap in a model
// client that generates nothing and a prompt budget that keeps every top-u snippet.
import type { BenchCase, Prediction, PredictionContext, StageTimings } from './cases';
import { caseLang } from './cases';
import type { Lang } from '../kb/types';
import { lastLinesQuery } from '../query/lastLinesQuery';
import type { ChunkProber } from '../query/probeQuery';
import type { QueryStrategy, RetrievalQuery } from '../query/types';
import type { Candidate, PathName, RetrievalTrace, Retriever } from '../retrieve/types';
import type { Reranker } from '../rerank/types';
import { BestFitRerankStage } from '../rerank/rerankStage';
import type { ModelClient } from '../generate/types';
import {
  complete,
  DEFAULT_PIPELINE_OPTIONS,
  multiPathStage,
  probingQueryBuilder,
  snippetForPrompt,
  type CompletionResult,
  type PipelineOptions,
  type PipelineStages,
  type QueryBuilder,
  type RetrievalStage,
} from '../pipeline';
import { UserError } from '../util/errors';

export type RerankMode = 'none' | 'llm' | 'distilled';

export interface MethodSpec {
  /** As given on the command line (`df+s+d+lr`, `rg1`, ...). */
  name: string;
  /** Retrieval paths, in CodeRAG's merge order; empty for zero-shot. */
  paths: PathName[];
  rerank: RerankMode;
  /** RepoCoder: retrieve again with the first generation appended, then generate again. */
  iterative: boolean;
  /** Uses the query strategy (probe / last-k): the sparse and dense paths; RG-1 always queries with the last 10 lines, dataflow reads the file. */
  usesQuery: boolean;
}

/** The methods of docs/BENCHMARK.md, in the order the comparison table lists them. */
export const STANDARD_METHODS = ['zero-shot', 'rg1', 'repocoder', 'draco', 's', 'd', 'df', 'df+s', 'df+s+d', 'df+s+d+lr', 'df+s+d+dr'] as const;

const PATH_TOKENS: Record<string, PathName> = { s: 'sparse', d: 'dense', df: 'dataflow' };
const MERGE_ORDER: readonly PathName[] = ['dataflow', 'sparse', 'dense'];

export function parseMethod(name: string): MethodSpec {
  const n = name.trim();
  if (n === 'zero-shot') return { name: n, paths: [], rerank: 'none', iterative: false, usesQuery: false };
  if (n === 'rg1') return { name: n, paths: ['rg1'], rerank: 'none', iterative: false, usesQuery: false };
  if (n === 'repocoder') return { name: n, paths: ['rg1'], rerank: 'none', iterative: true, usesQuery: false };
  if (n === 'draco') return { name: n, paths: ['dataflow'], rerank: 'none', iterative: false, usesQuery: false };
  const paths = new Set<PathName>();
  let rerank: RerankMode = 'none';
  for (const token of n.split('+')) {
    if (token === 'lr' || token === 'dr') {
      if (rerank !== 'none') throw new UserError(`method "${n}": one reranker at most`);
      rerank = token === 'lr' ? 'llm' : 'distilled';
      continue;
    }
    const path = PATH_TOKENS[token];
    if (!path) throw new UserError(`unknown method "${n}": use ${STANDARD_METHODS.join(', ')} (or another union of s, d, df with +lr / +dr)`);
    paths.add(path);
  }
  if (paths.size === 0) throw new UserError(`method "${n}" names no retrieval path`);
  // The dataflow path reads the unfinished file, not the query: a df-only method does not probe.
  return { name: n, paths: MERGE_ORDER.filter((p) => paths.has(p)), rerank, iterative: false, usesQuery: paths.has('sparse') || paths.has('dense') };
}

/** What a method needs besides the knowledge base: used to load models once per run. */
export function methodNeeds(specs: readonly MethodSpec[], query: QueryStrategy): { prober: boolean; encoder: boolean; llmReranker: boolean; distilledReranker: boolean } {
  return {
    prober: query === 'probe' && specs.some((s) => s.usesQuery),
    encoder: specs.some((s) => s.paths.includes('dense')),
    llmReranker: specs.some((s) => s.rerank === 'llm'),
    distilledReranker: specs.some((s) => s.rerank === 'distilled'),
  };
}

export interface RunOptions {
  /** Query strategy of the CodeRAG variants (CodeRAG: probe). */
  query: QueryStrategy;
  /** Results per path and family (CodeRAG j=15). */
  topJ: number;
  /** Snippets the reranker (or the retrieval order) keeps (CodeRAG u=10). */
  topU: number;
  /** Per-path time budget in ms: generous by default, an evaluation measures quality, timings are recorded. */
  pathBudgetMs: number;
  rerankTimeoutMs: number;
  /** false: retrieval only (contexts and timings, an empty prediction). */
  generate: boolean;
  /** Prompt budget in tokens (CodeRAG: 2,048; the model's context window bounds it). */
  budgetTokens: number;
  maxNewTokens: number;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = { query: 'probe', topJ: 15, topU: 10, pathBudgetMs: 10_000, rerankTimeoutMs: 60_000, generate: true, budgetTokens: 2048, maxNewTokens: 48 };

/** Everything a case needs that is shared across cases: the repository's retrievers and the models. */
export interface CaseEnvironment {
  /** The repository's prepared retriever for a path. */
  retriever(path: PathName): Retriever;
  prober?: ChunkProber;
  model?: ModelClient;
  rerankers: Partial<Record<Exclude<RerankMode, 'none'>, Reranker>>;
  /**
   * Queries by case, shared by the methods of one run: the probing query depends on a time budget,
   * so on a busy machine two runs of the same case can probe different chunks. Every method still
   * builds (and times) its query, but retrieves with the first method's, so methods differ only
   * in what they do with it.
   */
  queryMemo?: Map<string, RetrievalQuery>;
}

function sharedQuery(inner: QueryBuilder, memo: Map<string, RetrievalQuery>, key: string): QueryBuilder {
  return {
    async build(file, options, signal) {
      const built = await inner.build(file, options, signal);
      const first = memo.get(key);
      if (first) return first;
      memo.set(key, built);
      return built;
    },
  };
}

/** A model client that generates nothing: the retrieval-only runs (`--no-generate`). */
const NO_MODEL: ModelClient = {
  backend: 'embedded',
  model: 'none',
  family: 'plain',
  endpoint: 'none',
  generate: () => Promise.resolve({ text: '', model: 'none', elapsedMs: 0 }),
};

const lastTen: QueryBuilder = { build: (file) => Promise.resolve(lastLinesQuery(file.prefix, 10)) };

/** The retrieval stage, remembering the candidates so the contexts carry their text. */
function capturing(inner: RetrievalStage, seen: Map<string, Candidate>, prefixExtra = ''): RetrievalStage {
  return {
    async retrieve(request, options, signal) {
      const file = prefixExtra ? { ...request.file, prefix: request.file.prefix + prefixExtra } : request.file;
      const trace: RetrievalTrace = await inner.retrieve({ ...request, file }, options, signal);
      for (const c of trace.candidates) seen.set(c.snippet.id, c);
      return trace;
    },
  };
}

const noRetrieval: RetrievalStage = { retrieve: (request) => Promise.resolve({ query: request.query, paths: [], candidates: [], elapsedMs: 0 }) };

function pipelineOptions(spec: MethodSpec, options: RunOptions): PipelineOptions {
  const budgetsMs: Partial<Record<PathName, number>> = {};
  for (const p of spec.paths) budgetsMs[p] = options.pathBudgetMs;
  return {
    ...DEFAULT_PIPELINE_OPTIONS,
    query: { ...DEFAULT_PIPELINE_OPTIONS.query, strategy: options.query },
    retrieval: { topJ: options.topJ, budgetsMs },
    rerank: { topU: options.topU, timeoutMs: options.rerankTimeoutMs },
    // Retrieval only: every top-u snippet "enters the prompt", none is cut for a budget.
    prompt: { ...DEFAULT_PIPELINE_OPTIONS.prompt, budgetTokens: options.generate ? options.budgetTokens : 1e9 },
    generate: { ...DEFAULT_PIPELINE_OPTIONS.generate, maxNewTokens: options.maxNewTokens },
  };
}

function stages(spec: MethodSpec, env: CaseEnvironment, options: RunOptions, seen: Map<string, Candidate>, prefixExtra = '', caseKey?: string): PipelineStages {
  const reranker = spec.rerank === 'none' ? undefined : env.rerankers[spec.rerank];
  if (spec.rerank !== 'none' && !reranker) throw new UserError(`method ${spec.name}: the ${spec.rerank} reranker is not loaded`);
  const retrievers = spec.paths.map((p) => env.retriever(p));
  return {
    query: spec.usesQuery
      ? env.queryMemo && caseKey !== undefined
        ? sharedQuery(probingQueryBuilder(() => env.prober), env.queryMemo, `${options.query}\u0000${caseKey}\u0000${prefixExtra}`)
        : probingQueryBuilder(() => env.prober)
      : lastTen,
    retrieval: spec.paths.length === 0 ? noRetrieval : capturing(multiPathStage(() => retrievers), seen, prefixExtra),
    reranker: () => (reranker ? new BestFitRerankStage(reranker) : undefined),
    model: () => (options.generate ? (env.model ?? NO_MODEL) : NO_MODEL),
  };
}

/** Per-stage times of one complete() run, in BENCHMARK.md's names (per path, not the whole retrieve stage). */
function timingsOf(result: CompletionResult, generate: boolean): StageTimings {
  const t: StageTimings = {};
  let skipped = 0;
  for (const s of result.trace.stages) {
    const modelSide = s.stage === 'prompt' || s.stage === 'generate' || s.stage === 'postprocess';
    if (modelSide && !generate) skipped += s.elapsedMs;
    else t[s.stage] = s.elapsedMs;
  }
  for (const p of result.trace.retrieval?.paths ?? []) t[p.path] = p.elapsedMs;
  t.total = result.trace.totalMs - skipped;
  return t;
}

/** The contexts in prompt order: the reranked top-u that entered the prompt (all of them in retrieval-only runs). */
function contextsOf(result: CompletionResult, seen: ReadonlyMap<string, Candidate>): PredictionContext[] {
  const picked = result.trace.rerank?.picked ?? [];
  const entered = result.trace.prompt ? result.trace.prompt.snippets.length : picked.length;
  const out: PredictionContext[] = [];
  for (const id of picked.slice(0, entered)) {
    const c = seen.get(id);
    if (!c) continue;
    out.push({ path: c.snippet.path, text: snippetForPrompt(c).text, source: c.paths.join('+') });
  }
  return out;
}

/** Degradations worth counting in a report: a path that timed out or failed, a probing fallback, a failed stage. */
function problemsOf(result: CompletionResult): string[] {
  const out: string[] = [];
  for (const p of result.trace.retrieval?.paths ?? []) if (p.status !== 'ok') out.push(`${p.path} ${p.status}${p.message ? `: ${p.message}` : ''}`);
  if (result.trace.query?.fallbackReason) out.push(`query fallback: ${result.trace.query.fallbackReason}`);
  for (const s of result.trace.stages) if (s.status === 'degraded' || s.status === 'failed') out.push(`${s.stage} ${s.status}: ${s.message ?? ''}`);
  if (result.trace.error) out.push(`${result.trace.error.stage}: ${result.trace.error.message}`);
  return out;
}

export interface CaseOutcome {
  prediction: Prediction;
  /** What degraded (kept out of the predictions file, counted by the run). */
  problems: string[];
}

/**
 * Run one case: the unfinished file is the case's `prompt` (so its text after the cursor is
 * never seen); the retrievers exclude the target file's own items.
 */
export async function runCase(c: BenchCase, spec: MethodSpec, env: CaseEnvironment, options: RunOptions, signal: AbortSignal): Promise<CaseOutcome> {
  const lang: Lang | undefined = caseLang(c);
  if (!lang) throw new UserError(`${c.metadata.task_id}: language unknown (set metadata.lang)`);
  const request = { filePath: c.metadata.file, lang, prefix: c.prompt, suffix: '' };
  const opts = pipelineOptions(spec, options);
  const seen = new Map<string, Candidate>();
  const first = await complete(request, stages(spec, env, options, seen, '', c.metadata.task_id), opts, signal);
  if (!spec.iterative || !options.generate) {
    return { prediction: { task_id: c.metadata.task_id, prediction: first.items[0]?.text ?? '', contexts: contextsOf(first, seen), timings_ms: timingsOf(first, options.generate) }, problems: problemsOf(first) };
  }
  // RepoCoder: the second retrieval's query is the last lines of the code context plus the first generation.
  const generated = first.items[0]?.text ?? '';
  const secondSeen = new Map<string, Candidate>();
  const second = await complete(request, stages(spec, env, options, secondSeen, generated, c.metadata.task_id), opts, signal);
  const t1 = timingsOf(first, true);
  const t2 = timingsOf(second, true);
  const timings: StageTimings = {};
  for (const key of new Set([...Object.keys(t1), ...Object.keys(t2)])) timings[key] = (t1[key] ?? 0) + (t2[key] ?? 0);
  timings.iteration1 = t1.total ?? 0;
  return {
    prediction: { task_id: c.metadata.task_id, prediction: second.items[0]?.text ?? '', contexts: contextsOf(second, secondSeen), timings_ms: timings },
    problems: [...problemsOf(first), ...problemsOf(second)],
  };
}

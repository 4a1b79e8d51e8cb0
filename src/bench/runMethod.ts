// One benchmark case through one method (docs/BENCHMARKS.md "Methods": one harness runs them all;
// CodeRAG Tables 1, 3, 5): zero-shot, RG-1, RepoCoder, DraCo-like dataflow only, and the
// CodeRAG variants (s, d, df and their unions, + LLM or distilled BestFit reranking). Every method
// runs through the pipeline's complete() with its own stages, so the query, retrieval, rerank,
// prompt, generate and postprocess code is the product's; retrieval-only runs swap in a model
// client that generates nothing and a prompt budget that keeps every top-u snippet.
import { checkCompletion } from '../engine/check/repairCompletion';
import type { BodyElements, CheckMode, ReceiverTyping } from '../engine/pipeline';
import type { RepoMethods } from '../engine/body/RepoMethods';
import type { BenchCase, Prediction, PredictionContext, StageTimings } from './cases';
import { caseLang, isBodyCase } from './cases';
import type { Lang } from '../engine/kb/types';
import type { ChunkProber } from '../engine/query/probeQuery';
import type { QueryBuilder, QueryStrategy, RetrievalQuery } from '../engine/query/types';
import { originLabel, type Candidate, type PathName, type Retriever } from '../engine/retrieve/types';
import type { Reranker } from '../engine/rerank/types';
import { RerankerSwitch } from '../engine/rerank/RerankerSwitch';
import type { ModelClient } from '../engine/generate/types';
import type { PromptMemory } from '../engine/prompt/promptMemory';
import { snippetForPrompt } from '../engine/prompt/snippetForPrompt';
import {
  autoRouter,
  bodyMode,
  createPipeline,
  LINE_MODE,
  PIPELINE_DEFAULTS,
  probingQueryBuilder,
  resolveOptions,
  rerankerNow,
  type BodyModeDeps,
  type BodyModeHooks,
  type RequestEnv,
  type CompletionMode,
  type Router,
  type CompletionRequest,
  type CompletionResult,
  type Pipeline,
  type PipelineOptions,
} from '../engine/pipeline';
import { UserError } from '../engine/util/errors';
import type { LinUcb } from '../engine/similar/linUcb';
import type { SimilarRetrieval } from '../engine/similar/perspectives';
import type { SimilarMode } from '../engine/similar/chooseWindows';
import type { SimilarArm, SimilarTrace } from '../engine/similar/types';
import { afterFirstGeneration } from './baselines/repoCoder';
import { lineStagesBodyMode } from './baselines/lineStagesBody';
import { groundTruthSketch } from './variants/groundTruthSketch';
import { bodyComposer, type BodyComposeName } from './variants/bodyCompose';
import { encoderSignatures, type SignatureSearchName, type SignatureVectors } from './variants/encoderSignatures';
import { BLOCK_LAYOUT } from './variants/blockBodyPrompt';
import { PRODUCT_METHOD, PRODUCT_PATHS, PRODUCT_RERANK, productPipelineOptions } from './product';

export type RerankMode = 'none' | 'llm' | 'distilled';

export interface MethodSpec {
  /** As given on the command line (`df+s+d+lr`, `rg1`, ...). */
  name: string;
  /** Retrieval paths, in CodeRAG's merge order; empty for zero-shot. */
  paths: PathName[];
  rerank: RerankMode;
  /** RepoCoder: retrieve again with the first generation appended, then generate again. */
  iterative: boolean;
  /**
   * Uses the query strategy (probe / last-k): the sparse and dense paths; RG-1 always queries with the last 10 lines, dataflow reads the
   * file.
   */
  usesQuery: boolean;
  /** Rambo's methods (body mode's own retrieval): where the sketch comes from. */
  rambo?: RamboSketch;
  /** ProCC's similar-code stage: a fixed perspective, the union, or the bandit (learning online over the run's cases). */
  similar?: SimilarMode;
  /** `product`: the editor with its default settings (auto line/body mode, the right context as the editor sees it; bench/product.ts). */
  product?: boolean;
}

/** ProCC's methods (line cases): one perspective each, their union, and the bandit's choice. */
const PROCC_METHODS: Readonly<Record<string, SimilarMode>> = {
  'procc-lex': 'lexical',
  'procc-hyp': 'hypothetical',
  'procc-sum': 'summary',
  'procc-union': 'union',
  procc: 'bandit',
};

/** The methods of docs/BENCHMARKS.md, in the order the comparison table lists them. */
export const STANDARD_METHODS = [
  'zero-shot',
  'rg1',
  'repocoder',
  'draco',
  's',
  'd',
  'df',
  'df+s',
  'df+s+d',
  'df+s+d+lr',
  'df+s+d+dr',
] as const;

/** Where a Rambo method's sketch comes from: the model, none, or the ground truth (`oracle`: a ceiling, not a method). */
type RamboSketch = 'model' | 'none' | 'oracle';

/** Rambo's methods (body cases): with a model sketch, without one, and with the ground truth as the sketch (an oracle). */
const RAMBO_METHODS: Readonly<Record<string, RamboSketch>> = { rambo: 'model', 'rambo-nosketch': 'none', 'rambo-oracle': 'oracle' };

const PATH_TOKENS: Record<string, PathName> = { s: 'sparse', d: 'dense', df: 'dataflow' };
const MERGE_ORDER: readonly PathName[] = ['dataflow', 'sparse', 'dense'];

export function parseMethod(name: string): MethodSpec {
  const n = name.trim();
  if (n === PRODUCT_METHOD)
    return {
      name: n,
      paths: [...PRODUCT_PATHS],
      rerank: PRODUCT_RERANK,
      iterative: false,
      usesQuery: true,
      similar: PIPELINE_DEFAULTS.similar.mode,
      product: true,
    };
  if (n === 'zero-shot') return { name: n, paths: [], rerank: 'none', iterative: false, usesQuery: false };
  if (n === 'rg1') return { name: n, paths: ['rg1'], rerank: 'none', iterative: false, usesQuery: false };
  if (n === 'repocoder') return { name: n, paths: ['rg1'], rerank: 'none', iterative: true, usesQuery: false };
  const rambo = RAMBO_METHODS[n];
  if (rambo) return { name: n, paths: [], rerank: 'none', iterative: false, usesQuery: false, rambo };
  // `rambo+df+s+d+dr`: Rambo with CodeRAG's knowledge items (that method's reranked top-u) joining its prompt.
  const plus = /^(rambo(?:-nosketch|-oracle)?)\+(.+)$/.exec(n);
  if (plus && RAMBO_METHODS[plus[1]!]) return { ...parseMethod(plus[2]!), name: n, iterative: false, rambo: RAMBO_METHODS[plus[1]!] };
  const procc = PROCC_METHODS[n];
  if (procc) return { name: n, paths: [], rerank: 'none', iterative: false, usesQuery: false, similar: procc };
  // `df+s+d+dr+pc`: a CodeRAG method with ProCC's bandit-chosen window added to its prompt;
  // `+pc-lex`, `+pc-hyp`, `+pc-sum`: with one perspective's window (each arm's reward, to fit the bandit offline).
  const pc = /^(.+)\+pc(?:-(lex|hyp|sum))?$/.exec(n);
  if (pc) return { ...parseMethod(pc[1]!), name: n, similar: pc[2] ? PROCC_METHODS[`procc-${pc[2]}`]! : 'bandit' };
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
    if (!path)
      throw new UserError(`unknown method "${n}": use ${STANDARD_METHODS.join(', ')} (or another union of s, d, df with +lr / +dr)`);
    paths.add(path);
  }
  if (paths.size === 0) throw new UserError(`method "${n}" names no retrieval path`);
  // The dataflow path reads the unfinished file, not the query: a df-only method does not probe.
  return {
    name: n,
    paths: MERGE_ORDER.filter((p) => paths.has(p)),
    rerank,
    iterative: false,
    usesQuery: paths.has('sparse') || paths.has('dense'),
  };
}

/** What a method needs besides the knowledge base: used to load models once per run. */
export function methodNeeds(
  specs: readonly MethodSpec[],
  query: QueryStrategy,
  options?: Pick<RunOptions, 'bodySignatures'>,
): { prober: boolean; encoder: boolean; llmReranker: boolean; distilledReranker: boolean; similar: boolean } {
  return {
    prober: query === 'probe' && specs.some((s) => s.usesQuery),
    encoder: specs.some(
      (s) =>
        s.paths.includes('dense') ||
        (s.similar !== undefined && s.similar !== 'off') ||
        (s.rambo !== undefined && options?.bodySignatures === 'encoder'),
    ),
    similar: specs.some((s) => s.similar !== undefined && s.similar !== 'off'),
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
  /** Tokens a body may have (body cases, every generating method). */
  bodyMaxNewTokens: number;
  /** The body mode's prompt layout (Rambo's commented fragments, or the line mode's block). */
  bodyPromptForm: 'rambo' | 'block';
  /** Rambo step a: signatures by token Jaccard (the product's) or the code encoder's cosine (variants/encoderSignatures). */
  bodySignatures?: SignatureSearchName;
  /** Rambo step e: the order of its lists and CodeRAG's items (default: turns). */
  bodyCompose?: BodyComposeName;
  bodyElements?: BodyElements;
  /** Checking against the repository at dereferences (PipelineOptions.check); absent: the defaults table's, as in the product. */
  check?: CheckMode;
  /** The member prior's weight under `constrain` (PipelineOptions.check.prior); absent: the product's default. */
  checkPrior?: number;
  /** Share of the prompt ProCC's window may take beside CodeRAG's knowledge (PipelineOptions.similar.promptShare). */
  similarShare?: number;
  /** Share of the prompt the code before the cursor keeps at least (PipelineOptions.prompt.contextShare). */
  contextShare?: number;
  /** The model server's read speed the product's prompts are laid out for (ResearchHooks.readRate). */
  readRate?: number;
  /**
   * Each repository's cases as the places of one editor session, in order: one prompt memory per
   * repository and method (the shared block), and a pause at each place before the next, in which
   * what it waited for joins the block. `first`: each case's prompt is the first at its place;
   * `paused`: the one after the pause there. Absent: every case is a session's first place.
   */
  session?: 'first' | 'paused';
  /** Share of the body prompt the code before the cursor keeps at least (PipelineOptions.body.contextShare). */
  bodyContextShare?: number;
  /** CodeRAG's g: the probing query's best chunks beside the target chunk (PipelineOptions.query.g). */
  probeTop?: number;
  /** The show gate (PipelineOptions.gate): `off`, or on at a threshold; absent: the product's default. */
  gate?: { mode: 'on' | 'off'; threshold?: number };
}

/** `product` with its similar-code mode set (the `--similar` option); other methods as they are. */
export function withSimilarMode(spec: MethodSpec, mode: SimilarMode | undefined): MethodSpec {
  return spec.product && mode ? { ...spec, similar: mode } : spec;
}

export const DEFAULT_RUN_OPTIONS: RunOptions = {
  query: PIPELINE_DEFAULTS.query.strategy,
  topJ: 15,
  topU: 10,
  pathBudgetMs: 10_000,
  rerankTimeoutMs: 60_000,
  generate: true,
  budgetTokens: 2048,
  maxNewTokens: 48,
  bodyMaxNewTokens: 128,
  bodyPromptForm: 'rambo',
};

/** Everything a case needs that is shared across cases: the repository's retrievers and the models. */
export interface CaseEnvironment {
  /** The repository's prepared retriever for a path. */
  retriever(path: PathName): Retriever;
  /** Receiver typing over the repository (for `check`). */
  receivers?: ReceiverTyping;
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
  /** The body mode's grammars and tokenizer, and the repository's methods (Rambo's methods and body cases). */
  body?: BodyModeDeps & { methods?: RepoMethods };
  /** The code encoder's vectors of the repository's signatures (Rambo step a's `encoder` variant), when the encoder is loaded. */
  signatureVectors?: SignatureVectors;
  /** ProCC's perspectives over the repository's code windows. */
  similar?: SimilarRetrieval;
  /** Each bandit method's LinUCB, kept across the run's repositories (the harness rewards it after each case). */
  bandits?: ReadonlyMap<string, LinUcb<SimilarArm>>;
  /** The session's prompt memory (RunOptions.session). */
  promptMemory?: PromptMemory;
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

/** A method's pipeline options: the product's, or the method's own choices resolved over the defaults table. */
function methodOptions(spec: MethodSpec, options: RunOptions, body: boolean): PipelineOptions {
  if (spec.product) return productPipelineOptions({ ...options, ...(spec.similar ? { similarMode: spec.similar } : {}) });
  const budgetsMs: Partial<Record<PathName, number>> = {};
  for (const p of spec.paths) budgetsMs[p] = options.pathBudgetMs;
  return resolveOptions({
    // Methods that do not use the query (RG-1, dataflow only) retrieve with the last ten lines: no probing.
    query: { strategy: spec.usesQuery ? options.query : 'last10', ...(options.probeTop !== undefined ? { g: options.probeTop } : {}) },
    retrieval: { topJ: options.topJ, budgetsMs },
    rerank: { topU: options.topU, timeoutMs: options.rerankTimeoutMs },
    prompt: { budgetTokens: options.budgetTokens, ...(options.contextShare !== undefined ? { contextShare: options.contextShare } : {}) },
    generate: { maxNewTokens: body ? options.bodyMaxNewTokens : options.maxNewTokens },
    // Rambo's methods measure Rambo's lists (`rambo`) or name the CodeRAG method that joins them (`rambo+df+s+d+dr`), never the product's
    // implicit join.
    body: {
      maxNewTokens: options.bodyMaxNewTokens,
      ...(options.bodyElements ? { elements: options.bodyElements } : {}),
      ...(spec.rambo ? { knowledge: false } : {}),
      ...(options.bodyContextShare !== undefined ? { contextShare: options.bodyContextShare } : {}),
    },
    check: { mode: options.check, prior: options.checkPrior },
    ...(options.gate ? { gate: options.gate } : {}),
    similar: {
      mode: spec.similar ?? 'off',
      budgetsMs: { lexical: options.pathBudgetMs, hypothetical: options.pathBudgetMs, summary: options.pathBudgetMs },
      ...(options.similarShare !== undefined ? { promptShare: options.similarShare } : {}),
    },
  });
}

/**
 * The mode a case runs in (or the router that picks it), with the body mode's research hooks: a body case in the body mode for every
 * method (Rambo's stages for Rambo's methods; the method's own retrieval with the body's length and cut for the others).
 */
function modeOf(
  spec: MethodSpec,
  c: BenchCase,
  env: CaseEnvironment,
  options: RunOptions,
  knowledge?: (request: CompletionRequest, signal: AbortSignal) => Promise<Candidate[]>,
): { route: Router | CompletionMode; body?: BodyModeHooks } {
  const body = isBodyCase(c);
  // Step e's order where the run names one (the body mode's composer), else the product's.
  const compose: BodyModeHooks = options.bodyCompose ? { compose: bodyComposer(options.bodyCompose) } : {};
  // The editor's choice: body mode in an empty method body, line mode elsewhere (server/CompletionFeature.ts).
  if (spec.product) return env.body ? { route: autoRouter(env.body), body: compose } : { route: LINE_MODE };
  // The baselines' body: their own retrieval through the line stages, cut as the product cuts a body.
  if (!spec.rambo) return { route: body && env.body ? lineStagesBodyMode(env.body.parsers, PIPELINE_DEFAULTS.body.maxLines) : LINE_MODE };
  if (!env.body) throw new UserError(`method ${spec.name}: the body mode's repository view was not prepared`);
  // Rambo's variants of step a and of the prompt's layout.
  const rambo: BodyModeHooks = {
    ...compose,
    ...(options.bodySignatures === 'encoder' ? { signatures: encoderSignatures(env.signatureVectors, env.body.tokenize) } : {}),
    ...(options.bodyPromptForm === 'block' ? { promptLayout: BLOCK_LAYOUT } : {}),
  };
  // Retrieval only: the pipeline has no model, the sketch still comes from it (Rambo's sketch is part of its retrieval).
  const sketchModel = !options.generate && spec.rambo === 'model' && env.model ? env.model : undefined;
  return body
    ? {
        route: bodyMode(env.body),
        body: {
          sketch: spec.rambo === 'oracle' ? groundTruthSketch(c.groundtruth) : spec.rambo,
          ...(sketchModel ? { sketchModel } : {}),
          ...(knowledge ? { knowledge } : {}),
          ...rambo,
        },
      }
    : { route: autoRouter(env.body), body: rambo };
}

/** The method's pipeline, built by the product's one composition function. */
function pipelineOf(spec: MethodSpec, env: CaseEnvironment, options: RunOptions, c: BenchCase, round: string): Pipeline {
  const caseKey = c.metadata.task_id;
  const reranker = spec.rerank === 'none' ? undefined : env.rerankers[spec.rerank];
  if (spec.rerank !== 'none' && !reranker) throw new UserError(`method ${spec.name}: the ${spec.rerank} reranker is not loaded`);
  // RepoCoder's second round (`round`: the first generation) retrieves with that generation after the code.
  const retrievers = spec.paths.map((p) => afterFirstGeneration(env.retriever(p), round));
  const probing = probingQueryBuilder(env.prober);
  const query =
    spec.usesQuery && env.queryMemo ? sharedQuery(probing, env.queryMemo, `${options.query}\u0000${caseKey}\u0000${round}`) : probing;
  const rerankerStage = reranker ? rerankerNow(new RerankerSwitch(spec.rerank, { [reranker.kind]: reranker })) : undefined;
  const repo = {
    retrievers,
    ...(env.receivers ? { receivers: env.receivers } : {}),
    ...(spec.similar && spec.similar !== 'off' && env.similar ? { similar: env.similar } : {}),
    ...(env.body?.methods ? { methods: env.body.methods } : {}),
  };
  const retrievalEnv: RequestEnv = { repo: { retrievers }, ...(rerankerStage ? { reranker: rerankerStage } : {}) };
  // Rambo joined by a CodeRAG method: that method's retrieval and rerank, without a model, give the knowledge items.
  const knowledgePipeline =
    spec.rambo && spec.paths.length > 0
      ? createPipeline(methodOptions({ ...spec, rambo: undefined }, options, false), { env: retrievalEnv, hooks: { query } }, LINE_MODE)
      : undefined;
  const knowledge = knowledgePipeline
    ? (request: CompletionRequest, signal: AbortSignal) => knowledgePipeline.complete(request, signal).then((r) => r.contexts)
    : undefined;
  const bandit = spec.similar && spec.similar !== 'off' ? env.bandits?.get(spec.name) : undefined;
  const mode = modeOf(spec, c, env, options, knowledge);
  return createPipeline(
    methodOptions(spec, options, isBodyCase(c)),
    {
      env: {
        repo,
        ...(rerankerStage ? { reranker: rerankerStage } : {}),
        // Retrieval only: no model, so every top-u snippet is a context and nothing is generated (Rambo's sketch: modeOf).
        ...(options.generate && env.model ? { model: env.model } : {}),
        ...(bandit ? { bandit } : {}),
      },
      hooks: {
        query,
        ...(mode.body ? { body: mode.body } : {}),
        ...(spec.product && options.readRate !== undefined ? { readRate: options.readRate } : {}),
      },
      ...(env.promptMemory ? { promptMemory: env.promptMemory } : {}),
      ...(spec.similar && spec.similar !== 'off' ? { offersSimilar: true } : {}),
    },
    mode.route,
  );
}

/** Per-stage times of one complete() run, in docs/BENCHMARKS.md's names (per path, not the whole retrieve stage). */
function timingsOf(result: CompletionResult, generate: boolean): StageTimings {
  const t: StageTimings = {};
  let skipped = 0;
  for (const s of result.trace.stages) {
    const modelSide = s.stage === 'prompt' || s.stage === 'generate' || s.stage === 'postprocess';
    if (modelSide && !generate) skipped += s.elapsedMs;
    else t[s.stage] = s.elapsedMs;
  }
  for (const p of result.trace.retrieval?.paths ?? []) t[p.path] = p.elapsedMs;
  for (const p of result.trace.similar?.perspectives ?? []) if (p.status !== 'skipped') t[`sim-${p.name}`] = p.elapsedMs;
  t.total = result.trace.totalMs - skipped;
  // Retrieval (its paths run concurrently) plus rerank: what the latency ratio compares with RG-1's
  // (docs/BENCHMARKS.md "Recall by kind, the query, and latency").
  if (t.retrieve !== undefined) t['retrieve+rerank'] = t.retrieve + (t.rerank ?? 0);
  return t;
}

/** The contexts in prompt order: the reranked top-u that entered the prompt (all of them in retrieval-only runs). */
function contextsOf(result: CompletionResult): PredictionContext[] {
  return result.contexts.map((c) => ({
    path: c.snippet.path,
    text: snippetForPrompt(c).text,
    source: originLabel(c) ?? c.paths.join('+'),
  }));
}

/** Degradations worth counting in a report: a path that timed out or failed, a probing fallback, a failed stage. */
function problemsOf(result: CompletionResult): string[] {
  const out: string[] = [];
  for (const p of result.trace.retrieval?.paths ?? [])
    if (p.status !== 'ok') out.push(`${p.path} ${p.status}${p.message ? `: ${p.message}` : ''}`);
  for (const p of result.trace.similar?.perspectives ?? [])
    if (p.status !== 'ok') out.push(`similar ${p.name} ${p.status}${p.message ? `: ${p.message}` : ''}`);
  if (result.trace.query?.fallbackReason) out.push(`query fallback: ${result.trace.query.fallbackReason}`);
  for (const s of result.trace.stages)
    if (s.status === 'degraded' || s.status === 'failed') out.push(`${s.stage} ${s.status}: ${s.message ?? ''}`);
  if (result.trace.error) out.push(`${result.trace.error.stage}: ${result.trace.error.message}`);
  return out;
}

/** What a prediction keeps of ProCC's stage: the arm, how it was chosen, the context and the scores. */
function similarOf(t: SimilarTrace): NonNullable<Prediction['similar']> {
  return {
    arm: t.arm,
    chosen_by: t.chosenBy,
    features: t.features,
    ...(t.scores ? { scores: t.scores } : {}),
    tops: Object.fromEntries(t.perspectives.flatMap((p) => (p.top ? [[p.name, p.top.id]] : []))),
  };
}

/** Whether the prediction names a member its repository-typed receiver lacks (eval score's unknown member rate). */
function unknownMember(
  request: { filePath: string; lang: Lang; prefix: string },
  text: string,
  env: CaseEnvironment,
  options: RunOptions,
  signal: AbortSignal,
): { unknown_member?: boolean } {
  const typer = env.receivers;
  if (!typer || !options.generate) return {};
  const checked = checkCompletion(
    request.prefix,
    text,
    (t) => typer.membersAt({ path: request.filePath, lang: request.lang, prefix: t }, signal),
    {
      lang: request.lang,
    },
  );
  return { unknown_member: checked.fixes.length > 0 };
}

/** The show gate's decision, score and features of a prediction (when it ran; otherwise the prediction is shown). */
function gateOf(result: CompletionResult): Pick<Prediction, 'shown' | 'gate'> {
  const g = result.outcomes.gate;
  if (!g) return {};
  return { shown: g.shown, gate: { score: g.score, threshold: g.threshold, logprobs: g.logprobs, features: g.features } };
}

interface CaseOutcome {
  prediction: Prediction;
  /** ProCC's stage as it ran (the harness rewards a bandit's arm from it). */
  similar?: SimilarTrace;
  /** What degraded (kept out of the predictions file, counted by the run). */
  problems: string[];
}

/**
 * Run one case: the unfinished file is the case's `prompt` (so its text after the cursor is
 * never seen); the retrievers exclude the target file's own items.
 */
export async function runCase(
  c: BenchCase,
  spec: MethodSpec,
  env: CaseEnvironment,
  options: RunOptions,
  signal: AbortSignal,
): Promise<CaseOutcome> {
  const lang: Lang | undefined = caseLang(c);
  if (!lang) throw new UserError(`${c.metadata.task_id}: language unknown (set metadata.lang)`);
  // A body case shows the method's right context (Java: from its `}` on), as Rambo's prompt does. The product sees the rest of the file
  // as the editor does: the cursor's line is empty once the ground truth is taken out
  // (mine.ts: prompt + groundtruth + "\n" + right_context).
  const request = {
    filePath: c.metadata.file,
    lang,
    prefix: c.prompt,
    suffix: isBodyCase(c) ? (c.right_context ?? '') : spec.product ? `\n${c.right_context ?? ''}` : '',
    repoName: c.metadata.repository,
  };
  const first = await pipelineOf(spec, env, options, c, '').complete(request, signal);
  if (!spec.iterative || !options.generate) {
    // A suggestion the gate kept from the editor is still the prediction, marked `shown: false`.
    const text = first.items[0]?.text ?? first.outcomes.gate?.text ?? '';
    const similar = first.outcomes.similar;
    return {
      prediction: {
        task_id: c.metadata.task_id,
        prediction: text,
        contexts: contextsOf(first),
        timings_ms: timingsOf(first, options.generate),
        ...unknownMember(request, text, env, options, signal),
        ...(similar ? { similar: similarOf(similar) } : {}),
        shown: true,
        ...gateOf(first),
      },
      problems: problemsOf(first),
      ...(similar ? { similar } : {}),
    };
  }
  // RepoCoder: the second retrieval's query is the last lines of the code context plus the first generation.
  const generated = first.items[0]?.text ?? '';
  const second = await pipelineOf(spec, env, options, c, generated).complete(request, signal);
  const t1 = timingsOf(first, true);
  const t2 = timingsOf(second, true);
  const timings: StageTimings = {};
  for (const key of new Set([...Object.keys(t1), ...Object.keys(t2)])) timings[key] = (t1[key] ?? 0) + (t2[key] ?? 0);
  timings.iteration1 = t1.total ?? 0;
  return {
    prediction: {
      task_id: c.metadata.task_id,
      prediction: second.items[0]?.text ?? '',
      contexts: contextsOf(second),
      timings_ms: timings,
      ...unknownMember(request, second.items[0]?.text ?? '', env, options, signal),
    },
    problems: [...problemsOf(first), ...problemsOf(second)],
  };
}

// The one orchestration point (ARCHITECTURE.md "One completion, as data flowing through"):
// query (CodeRAG Alg. 1) -> multi-path retrieval (2.2.1) -> BestFit rerank (2.3) -> prompt (2.4)
// -> generate -> postprocess. Every stage is timed and recorded in the trace; a stage that fails
// degrades the answer (STYLE.md rule 8); only cancellation ends a request.
import type { Lang } from './kb/types';
import { formatRunsOn, type ModelRunsOn } from './models/device';
import type { QueryStrategy, RetrievalQuery } from './query/types';
import { lastLinesQuery } from './query/lastLinesQuery';
import { buildQuery } from './query/buildQuery';
import type { ChunkProber } from './query/probeQuery';
import { multiPathRetrieve } from './retrieve/multiPathRetrieve';
import type { Retriever } from './retrieve/types';
import { BestFitRerankStage } from './rerank/rerankStage';
import type { RerankerSwitch } from './rerank/RerankerSwitch';
import type { CausalLM } from './models/types';
import type { EmbeddedLM } from './generate/EmbeddedClient';
import type { KnowledgeBase } from './kb/KnowledgeBase';
import type { Parsers } from './kb/parsers';
import { SparseRetriever } from './retrieve/sparse/sparseRetrieve';
import { DataflowRetriever } from './retrieve/dataflow/dataflowRetrieve';
import { DenseRetriever, type DenseEncoder, type DenseRetrieverOptions } from './retrieve/dense/denseRetrieve';
import { lmChunkProber } from './query/lmChunkProber';
import type { UnfinishedFile } from './query/unfinishedFile';
import type { Candidate, PathName, RetrievalRequest, RetrievalTrace } from './retrieve/types';
import { fitPromptBudget, type FittedPrompt, type PromptSnippet } from './prompt/fitPromptBudget';
import type { ModelFamily } from './prompt/templates';
import { postprocessCompletion } from './generate/postprocess/postprocess';
import { isModelClientError, type GenerateResult, type ModelClient, type ModelErrorKind } from './generate/types';
import { CancellationError, errorMessage, isCancellationError, throwIfAborted } from './util/errors';
import { getLogger } from './util/logger';

const log = getLogger('pipeline');

// ---------------------------------------------------------------------------------------------
// Request, options, result

export interface CompletionRequest {
  /** Repo-relative path with forward slashes. */
  filePath: string;
  lang: Lang;
  /** Text before the cursor. */
  prefix: string;
  /** Text after the cursor. */
  suffix: string;
}

/** The pipeline's configuration slice (the server merges settings into it; the engine reads no settings). */
export interface PipelineOptions {
  query: { strategy: QueryStrategy; fallback: 'last3' | 'last10' | 'jaccard'; f: number; g: number; m: number; maxProbes: number };
  retrieval: { topJ: number; budgetsMs: Partial<Record<PathName, number>>; maxCandidates?: number };
  rerank: { topU: number; timeoutMs: number };
  prompt: { budgetTokens: number; suffixShare: number };
  generate: { maxNewTokens: number; temperature: number };
  postprocess: { maxLines: number };
}

export const DEFAULT_PIPELINE_OPTIONS: PipelineOptions = {
  // CodeRAG defaults: f=3, g=1, m=5, j=15, u=10; a 2,048-token prompt, 48 new tokens.
  query: { strategy: 'probe', fallback: 'jaccard', f: 3, g: 1, m: 5, maxProbes: 32 },
  retrieval: { topJ: 15, budgetsMs: {} },
  rerank: { topU: 10, timeoutMs: 1500 },
  prompt: { budgetTokens: 2048, suffixShare: 0.15 },
  generate: { maxNewTokens: 48, temperature: 0 },
  postprocess: { maxLines: 12 },
};

export interface CompletionItem {
  /** Text to insert at the cursor. */
  text: string;
}

export interface CompletionResult {
  items: CompletionItem[];
  trace: CompletionTrace;
}

// ---------------------------------------------------------------------------------------------
// Stages behind interfaces (the implementations live in query/, retrieve/, rerank/, generate/)

/** Builds the retrieval query from the unfinished file (probing, or a model-free strategy). */
export interface QueryBuilder {
  build(file: UnfinishedFile, options: PipelineOptions['query'], signal: AbortSignal): Promise<RetrievalQuery>;
}

/** Runs the retrieval paths and merges their results (retrieve/multiPathRetrieve). */
export interface RetrievalStage {
  retrieve(request: RetrievalRequest, options: PipelineOptions['retrieval'], signal: AbortSignal): Promise<RetrievalTrace>;
}

export interface RerankCall {
  /** Candidate ids offered in one window. */
  window: string[];
  /** The id the reranker picked, when it picked one. */
  picked?: string;
  elapsedMs: number;
  /** Why the window stayed in retrieval order (timeout, unparsable answer ...). */
  failure?: string;
}

export interface RerankOutcome {
  /** Top-u, best first. */
  ranked: Candidate[];
  calls: RerankCall[];
  notes?: string[];
}

export interface RerankInput {
  file: UnfinishedFile;
  candidates: readonly Candidate[];
  topU: number;
}

/** BestFit reranking (rerank/): picks the top-u of the candidates. */
export interface RerankStage {
  readonly name: string;
  rerank(input: RerankInput, signal: AbortSignal): Promise<RerankOutcome>;
}

/** Serialises model calls (the server allows one in flight); the default runs the call directly. */
export interface ModelGate {
  run<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
}

export interface PipelineStages {
  query: QueryBuilder;
  retrieval: RetrievalStage;
  /** Read per request, so a reranker switch applies to the next request. */
  reranker: () => RerankStage | undefined;
  model: () => ModelClient;
  /** One model-server request in flight (the generate stage). */
  gate?: ModelGate;
  /** One in-process probing run at a time (the query stage), so superseded requests queue nothing. */
  probeGate?: ModelGate;
  /**
   * Called before each stage: the host lets its pending messages through (a newer request may be
   * waiting to supersede this one) and throws CancellationError when the signal has fired.
   */
  checkpoint?: (signal: AbortSignal) => Promise<void>;
}

/** The query stage over query/buildQuery: probing when a prober is loaded, else the fallback strategy. */
export function probingQueryBuilder(prober: () => ChunkProber | undefined): QueryBuilder {
  return {
    build: (file, options, signal) => buildQuery(file.prefix, { strategy: options.strategy, fallback: options.fallback, f: options.f, g: options.g, m: options.m, maxProbes: options.maxProbes }, prober(), signal),
  };
}

/** The retrieval stage over retrieve/multiPathRetrieve: every available path, each under its budget. */
export function multiPathStage(retrievers: () => readonly Retriever[]): RetrievalStage {
  return {
    retrieve: (request, options, signal) => multiPathRetrieve(retrievers(), request, { budgetsMs: options.budgetsMs, ...(options.maxCandidates ? { maxCandidates: options.maxCandidates } : {}) }, signal),
  };
}

/**
 * The rerank stage (CodeRAG 2.3) with the reranker the switch selects now; a chosen reranker that
 * is not available (its model not loaded, no server configured) keeps the retrieval order and
 * says so in the trace.
 */
export function bestFitStage(switcher: RerankerSwitch): () => RerankStage | undefined {
  return () => {
    const { reranker, choice, missing } = switcher.resolve();
    if (reranker) return new BestFitRerankStage(reranker);
    if (!missing) return undefined;
    return { name: `${choice} (unavailable)`, rerank: (input) => Promise.resolve({ ranked: input.candidates.slice(0, input.topU), calls: [], notes: [missing] }) };
  };
}

export interface RetrievalPaths {
  /** Ready once prepared: sparse TF-IDF and dataflow. */
  retrievers: Retriever[];
  /** The dense path, when an encoder is given: it embeds every item first, so the host prepares it in the background and adds it when ready. */
  dense?: DenseRetriever;
  dispose(): void;
}

/** CodeRAG's retrieval paths over one knowledge base (2.2.1): sparse, dataflow and, with an encoder, dense. */
export function codeRagRetrievers(kb: KnowledgeBase, parsers: Parsers, dense?: { encoder: DenseEncoder } & DenseRetrieverOptions): RetrievalPaths {
  const sparse = new SparseRetriever(kb);
  const dataflow = new DataflowRetriever(kb, parsers);
  const { encoder, ...denseOptions } = dense ?? {};
  const denseRetriever = encoder ? new DenseRetriever(kb, encoder, denseOptions) : undefined;
  return {
    retrievers: [sparse, dataflow],
    ...(denseRetriever ? { dense: denseRetriever } : {}),
    dispose: () => {
      sparse.dispose();
      dataflow.dispose();
      denseRetriever?.dispose();
    },
  };
}

/** The shipped causal LM as the embedded completion model. */
export function embeddedLMOf(lm: CausalLM): EmbeddedLM {
  return {
    generate: (prompt, options, signal) => lm.generate(prompt, { maxNewTokens: options.maxNewTokens, ...(options.stop ? { stop: [...options.stop] } : {}) }, signal),
    encode: (text) => lm.encode(text),
    contextTokens: lm.maxPositions,
  };
}

/** The shipped causal LM as the probing model (CodeRAG Alg. 1), batched and under a time budget (query/lmChunkProber). */
export function causalLMProber(lm: CausalLM): ChunkProber {
  return lmChunkProber(lm);
}

// ---------------------------------------------------------------------------------------------
// The trace

export type StageName = 'query' | 'retrieve' | 'rerank' | 'prompt' | 'generate' | 'postprocess';
export type StageStatus = 'ok' | 'degraded' | 'failed' | 'skipped';

export interface StageTiming {
  stage: StageName;
  status: StageStatus;
  elapsedMs: number;
  message?: string;
}

export interface TraceCandidate {
  id: string;
  path: string;
  name: string;
  kind: string;
  paths: PathName[];
  scores: Partial<Record<PathName, number>>;
}

export interface TracePath {
  path: PathName;
  status: string;
  elapsedMs: number;
  budgetMs: number;
  message?: string;
  notes?: string[];
  results: Array<{ id: string; score: number; reason?: string }>;
}

export interface CompletionTrace {
  id: string;
  startedAt: string;
  filePath: string;
  lang: Lang;
  query?: {
    strategy: string;
    text: string;
    spans: Array<{ startLine: number; endLine: number }>;
    chunkScores?: Array<{ startLine: number; endLine: number; score: number }>;
    fallbackReason?: string;
  };
  retrieval?: { paths: TracePath[]; candidates: TraceCandidate[] };
  rerank?: { reranker: string; calls: RerankCall[]; picked: string[]; notes?: string[] };
  prompt?: {
    text: string;
    tokens: number;
    budgetTokens: number;
    family: ModelFamily;
    fim: boolean;
    snippets: string[];
    snippetsDropped: number;
    prefixCut: boolean;
  };
  model?: { backend: string; model: string; endpoint: string; elapsedMs: number; firstTokenMs?: number; tokens?: number; raw: string; stoppedBy?: string };
  completion?: string;
  stages: StageTiming[];
  /** The stage that left the request without an item, and why. */
  error?: { stage: StageName; kind: ModelErrorKind | 'error'; message: string };
  totalMs: number;
  /** Time spent making the model ready before the prompt (loading it on the first request). */
  modelPrepareMs?: number;
  /** Time spent outside the model call (the pipeline's own overhead plus retrieval). */
  nonModelMs: number;
  /** The execution provider each local ONNX model ran on (set by whoever owns the models). */
  models?: ModelRunsOn[];
}

let traceCounter = 0;
function newTraceId(): string {
  traceCounter = (traceCounter + 1) % 1e9;
  return `${Date.now().toString(36)}-${traceCounter.toString(36)}`;
}

function summarizeCandidate(c: Candidate): TraceCandidate {
  return { id: c.snippet.id, path: c.snippet.path, name: c.snippet.qualifiedName || c.snippet.name, kind: c.snippet.kind, paths: c.paths, scores: c.scores };
}

/** Knowledge-base stubs start with their own `# path` line; the prompt heads each snippet itself. */
export function snippetForPrompt(c: Candidate): PromptSnippet {
  const text = c.snippet.text;
  const first = text.slice(0, text.indexOf('\n') + 1);
  const isHeader = /^\s*(#|\/\/)\s*\S+\s*$/.test(first) && first.includes(c.snippet.path);
  return { path: c.snippet.path, text: isHeader ? text.slice(first.length) : text };
}

// ---------------------------------------------------------------------------------------------
// complete()

async function timed<T>(
  trace: CompletionTrace,
  stage: StageName,
  signal: AbortSignal,
  work: () => Promise<T>,
  onFailure: (e: unknown) => { value: T; status: StageStatus; message: string },
  checkpoint?: (signal: AbortSignal) => Promise<void>,
): Promise<T> {
  if (checkpoint) await checkpoint(signal);
  const start = performance.now();
  try {
    throwIfAborted(signal);
    const value = await work();
    throwIfAborted(signal);
    trace.stages.push({ stage, status: 'ok', elapsedMs: performance.now() - start });
    return value;
  } catch (e) {
    if (isCancellationError(e) || signal.aborted) throw new CancellationError();
    const { value, status, message } = onFailure(e);
    trace.stages.push({ stage, status, elapsedMs: performance.now() - start, message });
    if (status === 'degraded') log.warn(`${stage} degraded: ${message}`);
    return value;
  }
}

/**
 * One completion. Resolves with no items when a stage leaves nothing to show (the trace says
 * which and why); rejects only with CancellationError when `signal` aborts.
 */
export async function complete(request: CompletionRequest, stages: PipelineStages, options: PipelineOptions, signal: AbortSignal): Promise<CompletionResult> {
  const start = performance.now();
  const trace: CompletionTrace = { id: newTraceId(), startedAt: new Date().toISOString(), filePath: request.filePath, lang: request.lang, stages: [], totalMs: 0, nonModelMs: 0 };
  const file: UnfinishedFile = { path: request.filePath, lang: request.lang, prefix: request.prefix };
  const finish = (items: CompletionItem[]): CompletionResult => {
    trace.totalMs = performance.now() - start;
    trace.nonModelMs = trace.totalMs - (trace.stages.find((s) => s.stage === 'generate')?.elapsedMs ?? 0) - (trace.modelPrepareMs ?? 0);
    return { items, trace };
  };

  // a. query
  const query = await timed(
    trace,
    'query',
    signal,
    () => (stages.probeGate ? stages.probeGate.run((s) => stages.query.build(file, options.query, s), signal) : stages.query.build(file, options.query, signal)),
    (e) => ({ value: { ...lastLinesQuery(request.prefix, 10), fallbackReason: `query failed: ${errorMessage(e)}` }, status: 'degraded', message: errorMessage(e) }),
    stages.checkpoint,
  );
  trace.query = { strategy: query.strategy, text: query.text, spans: query.spans, ...(query.chunkScores ? { chunkScores: query.chunkScores } : {}), ...(query.fallbackReason ? { fallbackReason: query.fallbackReason } : {}) };

  // b. retrieve
  const retrieval = await timed<RetrievalTrace | undefined>(
    trace,
    'retrieve',
    signal,
    () => stages.retrieval.retrieve({ file, query, topJ: options.retrieval.topJ }, options.retrieval, signal),
    (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
    stages.checkpoint,
  );
  const candidates = retrieval?.candidates ?? [];
  if (retrieval) {
    trace.retrieval = {
      paths: retrieval.paths.map((p) => ({
        path: p.path,
        status: p.status,
        elapsedMs: p.elapsedMs,
        budgetMs: p.budgetMs,
        ...(p.message ? { message: p.message } : {}),
        ...(p.notes ? { notes: p.notes } : {}),
        results: p.results.map((r) => ({ id: r.snippet.id, score: r.score, ...(r.reason ? { reason: r.reason } : {}) })),
      })),
      candidates: candidates.map(summarizeCandidate),
    };
  }

  // c. rerank (without a reranker, or when it fails, the candidates stay in retrieval order)
  const reranker = stages.reranker();
  const inOrder = candidates.slice(0, options.rerank.topU);
  let ranked: Candidate[] = inOrder;
  if (!reranker || candidates.length <= 1) {
    trace.stages.push({ stage: 'rerank', status: 'skipped', elapsedMs: 0, message: reranker ? 'fewer than two candidates' : 'no reranker; retrieval order' });
    trace.rerank = { reranker: reranker?.name ?? 'none', calls: [], picked: inOrder.map((c) => c.snippet.id) };
  } else {
    const outcome = await timed<RerankOutcome>(
      trace,
      'rerank',
      signal,
      () => withTimeout((s) => reranker.rerank({ file, candidates, topU: options.rerank.topU }, s), options.rerank.timeoutMs, signal, `rerank exceeded ${options.rerank.timeoutMs} ms`),
      (e) => ({ value: { ranked: inOrder, calls: [], notes: [`failed: ${errorMessage(e)}`] }, status: 'degraded', message: errorMessage(e) }),
      stages.checkpoint,
    );
    ranked = outcome.ranked;
    trace.rerank = { reranker: reranker.name, calls: outcome.calls, picked: ranked.map((c) => c.snippet.id), ...(outcome.notes ? { notes: outcome.notes } : {}) };
  }

  // d. prompt (the model's context window bounds the budget; its tokenizer counts where it has one)
  const model = stages.model();
  // Loading the model (first request only) is model time, not prompt assembly; a model that
  // cannot load leaves the generate stage to report it.
  const prepareStart = performance.now();
  await model.prepare?.(signal).catch((e: unknown) => {
    if (isCancellationError(e)) throw e;
  });
  throwIfAborted(signal);
  trace.modelPrepareMs = performance.now() - prepareStart;
  const budgetTokens = Math.max(64, Math.min(options.prompt.budgetTokens, (model.contextTokens ?? Infinity) - options.generate.maxNewTokens));
  // No token is longer than this many characters in practice; text beyond it can never fit, so it is not counted.
  const maxChars = budgetTokens * 12;
  const prompt = await timed<FittedPrompt | undefined>(
    trace,
    'prompt',
    signal,
    async () => {
      return fitPromptBudget({
          lang: request.lang,
          filePath: request.filePath,
          prefix: request.prefix.length > maxChars ? request.prefix.slice(request.prefix.indexOf('\n', request.prefix.length - maxChars) + 1) : request.prefix,
          suffix: request.suffix.length > maxChars ? request.suffix.slice(0, maxChars) : request.suffix,
          snippets: ranked.map(snippetForPrompt),
          family: model.family,
          budgetTokens,
          suffixShare: options.prompt.suffixShare,
          ...(model.countTokens ? { countTokens: model.countTokens } : {}),
        });
    },
    (e) => ({ value: undefined, status: 'failed', message: errorMessage(e) }),
  );
  if (!prompt) {
    trace.error = { stage: 'prompt', kind: 'error', message: trace.stages.at(-1)?.message ?? 'prompt failed' };
    return finish([]);
  }
  trace.prompt = {
    text: prompt.prompt,
    tokens: prompt.tokens,
    budgetTokens,
    family: model.family,
    fim: prompt.fim,
    snippets: prompt.snippetsUsed.map((s) => s.path),
    snippetsDropped: prompt.snippetsDropped,
    prefixCut: prompt.prefixCut,
  };

  // e. generate (one model request in flight per server, through the gate)
  const generated = await timed<GenerateResult | undefined>(
    trace,
    'generate',
    signal,
    () => {
      const work = (s: AbortSignal): Promise<GenerateResult> => model.generate({ prompt: prompt.prompt, maxNewTokens: options.generate.maxNewTokens, stop: prompt.stop, temperature: options.generate.temperature }, s);
      return stages.gate ? stages.gate.run(work, signal) : work(signal);
    },
    (e) => {
      trace.error = { stage: 'generate', kind: isModelClientError(e) ? e.kind : 'error', message: errorMessage(e) };
      return { value: undefined, status: 'failed', message: errorMessage(e) };
    },
    stages.checkpoint,
  );
  if (!generated) return finish([]);
  trace.model = {
    backend: model.backend,
    model: generated.model,
    endpoint: model.endpoint,
    elapsedMs: generated.elapsedMs,
    raw: generated.text,
    ...(generated.firstTokenMs !== undefined ? { firstTokenMs: generated.firstTokenMs } : {}),
    ...(generated.tokens !== undefined ? { tokens: generated.tokens } : {}),
    ...(generated.stoppedBy ? { stoppedBy: generated.stoppedBy } : {}),
  };

  // f. postprocess
  const text = await timed(
    trace,
    'postprocess',
    signal,
    () => Promise.resolve(postprocessCompletion(generated.text, { lang: request.lang, prefix: request.prefix, suffix: request.suffix }, { maxLines: options.postprocess.maxLines })),
    (e) => ({ value: '', status: 'failed', message: errorMessage(e) }),
  );
  trace.completion = text;
  return finish(text ? [{ text }] : []);
}

/** Run `work` under a time limit; the limit aborts work's signal and rejects with `message`. */
export async function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, timeoutMs: number, signal: AbortSignal, message: string): Promise<T> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(message));
      }, timeoutMs);
    });
    const running = work(controller.signal);
    running.catch(() => undefined);
    return await Promise.race([running, deadline]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

// ---------------------------------------------------------------------------------------------
// Trace as readable text ("Explain Last Completion", `coderag complete`)

function ms(n: number | undefined): string {
  return n === undefined ? '-' : `${n.toFixed(1)} ms`;
}

function fence(text: string, lang = ''): string {
  const ticks = text.includes('```') ? '````' : '```';
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

/** Markdown view of a trace: stages and timings, the query, candidates per path, rerank picks, the prompt, the model's answer. */
export function formatTraceMarkdown(trace: CompletionTrace, options: { includePrompt?: boolean } = {}): string {
  const out: string[] = [];
  out.push(`# CodeRAG completion ${trace.id}`, '', `File \`${trace.filePath}\` (${trace.lang}), ${trace.startedAt}, total ${ms(trace.totalMs)} (outside the model ${ms(trace.nonModelMs)})`, '');
  if (trace.error) out.push(`**No completion: ${trace.error.stage} ${trace.error.kind}** — ${trace.error.message}`, '');
  if (trace.completion !== undefined) out.push('## Completion', '', trace.completion ? fence(trace.completion, trace.lang) : '_(empty after postprocessing)_', '');
  out.push('## Stages', '', '| stage | status | time | note |', '|---|---|---|---|');
  for (const s of trace.stages) out.push(`| ${s.stage} | ${s.status} | ${ms(s.elapsedMs)} | ${(s.message ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
  out.push('');
  if (trace.query) {
    const q = trace.query;
    out.push('## Query', '', `Strategy **${q.strategy}**${q.fallbackReason ? ` (fallback: ${q.fallbackReason})` : ''}; lines ${q.spans.map((s) => `${s.startLine + 1}-${s.endLine + 1}`).join(', ') || '-'}`, '');
    if (q.chunkScores && q.chunkScores.length > 0) {
      out.push('Chunks probed (score = sum of max log-probs):', '');
      for (const c of q.chunkScores) out.push(`- lines ${c.startLine + 1}-${c.endLine + 1}: ${c.score.toFixed(3)}`);
      out.push('');
    }
    out.push(fence(q.text, trace.lang), '');
  }
  if (trace.retrieval) {
    out.push('## Retrieval', '');
    for (const p of trace.retrieval.paths) {
      out.push(`### ${p.path}: ${p.status}, ${ms(p.elapsedMs)} of ${p.budgetMs} ms${p.message ? ` — ${p.message}` : ''}`, '');
      for (const n of p.notes ?? []) out.push(`_${n}_`);
      for (const r of p.results.slice(0, 15)) out.push(`- ${r.score.toFixed(3)} \`${r.id}\`${r.reason ? ` (${r.reason})` : ''}`);
      out.push('');
    }
    out.push(`Merged candidates: ${trace.retrieval.candidates.length}`, '');
  }
  if (trace.rerank) {
    const r = trace.rerank;
    out.push('## Rerank', '', `Reranker **${r.reranker}**, ${r.calls.length} calls${r.notes ? `; ${r.notes.join('; ')}` : ''}`, '');
    for (const c of r.calls) out.push(`- window [${c.window.map((w) => `\`${w}\``).join(', ')}] -> ${c.picked ? `\`${c.picked}\`` : `kept order (${c.failure ?? 'no pick'})`} in ${ms(c.elapsedMs)}`);
    out.push('', 'Top snippets in prompt order:', '', ...r.picked.map((id, i) => `${i + 1}. \`${id}\``), '');
  }
  if (trace.model) {
    const m = trace.model;
    out.push('## Model', '', `${m.backend} \`${m.model}\` at ${m.endpoint}: ${ms(m.elapsedMs)}${m.firstTokenMs !== undefined ? `, first token ${ms(m.firstTokenMs)}` : ''}${m.tokens !== undefined ? `, ${m.tokens} tokens` : ''}${m.stoppedBy ? `, stopped by ${m.stoppedBy}` : ''}`, '', 'Raw output:', '', fence(m.raw), '');
  }
  if (trace.models?.length) out.push('## Local models', '', ...trace.models.map((m) => `- ${formatRunsOn(m)}`), '');
  if (trace.prompt) {
    const p = trace.prompt;
    out.push('## Prompt', '', `${p.tokens} of ${p.budgetTokens} tokens, family ${p.family}${p.fim ? ' (FIM)' : ''}; snippets from ${p.snippets.map((s) => `\`${s}\``).join(', ') || 'none'}${p.snippetsDropped ? `, ${p.snippetsDropped} dropped for the budget` : ''}${p.prefixCut ? '; code context cut from the left' : ''}`, '');
    if (options.includePrompt !== false) out.push(fence(p.text), '');
  }
  return out.join('\n');
}

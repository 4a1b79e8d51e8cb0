// The one orchestration point (ARCHITECTURE.md "One completion, as data flowing through"):
// query (CodeRAG Alg. 1) -> multi-path retrieval (2.2.1) -> BestFit rerank (2.3) -> prompt (2.4)
// -> generate -> postprocess (the mode's). Every stage is timed and recorded in the trace; a stage
// that fails degrades the answer (STYLE.md rule 8); only cancellation ends a request.
import { lastLinesQuery } from '../query/lastLinesQuery';
import type { QueryBuilder } from '../query/types';
import type { UnfinishedFile } from '../query/unfinishedFile';
import type { Candidate, RetrievalStage, RetrievalTrace } from '../retrieve/types';
import type { RerankOutcome, RerankStage } from '../rerank/types';
import { fitPromptBudget, type FittedPrompt } from '../prompt/fitPromptBudget';
import { snippetForPrompt } from '../prompt/snippetForPrompt';
import { redactSecrets } from '../prompt/redact';
import { DereferenceConstraint } from '../check/dereferenceConstraint';
import { CallArgumentGuide, type CallSignature } from '../check/callArguments';
import type { ReceiverMembers } from '../check/receiverMembers';
import { checkCompletion } from '../check/repairCompletion';
import { stripControlChars } from '../generate/postprocess/controlChars';
import { placeholderNote } from '../generate/postprocess/postprocess';
import { isModelClientError, type DecodeConstraint, type GenerateResult, type ModelClient, type ModelGate } from '../generate/types';
import { raceDeadline } from '../util/abort';
import { CancellationError, errorMessage, isCancellationError, throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import type { LinUcb } from '../similar/linUcb';
import type { SimilarRetrieval } from '../similar/perspectives';
import { similarStage, type SimilarOutcome } from '../similar/similarStage';
import type { SimilarArm } from '../similar/types';
import type { CodeWindow } from '../similar/windowIndex';
import type { PromptSnippet } from '../prompt/fitPromptBudget';
import { newTraceId, retrievalTraceOf, type CompletionTrace, type StageName, type StageStatus } from './trace';
import type { CompletionItem, CompletionMode, CompletionRequest, CompletionResult, ModelStages, PipelineOptions } from './types';

const log = getLogger('pipeline');

/** The stages one request runs through, as createPipeline assembles them. */
export interface PipelineStages extends ModelStages {
  query: QueryBuilder;
  retrieval: RetrievalStage;
  /** Read per request, so a reranker switch applies to the next request. */
  reranker: () => RerankStage | undefined;
  /** One in-process probing run at a time (the query stage), so superseded requests queue nothing. */
  probeGate?: ModelGate;
  /** Receiver typing for checked completions (check/receiverMembers); absent: no checking. */
  receivers?: () => ReceiverTyping | undefined;
  /** ProCC's perspectives over the repository's code windows, ready or not (absent: no similar-code stage). */
  similar?: () => SimilarRetrieval | undefined;
  /** The host's LinUCB; the pipeline only chooses with it (the host rewards later). */
  bandit?: () => LinUcb<SimilarArm> | undefined;
}

/** A similar-code window as a candidate: it enters the contexts and the prompt under ProCC's heading. */
export function windowCandidate(w: CodeWindow, arm: string): Candidate {
  return {
    snippet: { id: w.id, kind: 'window', path: w.path, name: (w.text.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 60), qualifiedName: `${w.path}:${w.startLine + 1}-${w.endLine + 1}`, range: { startLine: w.startLine, endLine: w.endLine }, text: w.text },
    paths: [],
    scores: {},
    ranks: {},
    source: `similar:${arm}`,
  };
}

/** A candidate as the prompt shows it; ProCC's window gets its heading and, with a share, is budgeted first up to it. */
function promptSnippetOf(c: Candidate, similarCap: number | undefined): PromptSnippet {
  if (!c.source?.startsWith('similar:')) return snippetForPrompt(c);
  const heading = `Compare this snippet from ${c.snippet.path}:`;
  if (similarCap === 0) return { path: c.snippet.path, text: c.snippet.text, heading };
  return { path: c.snippet.path, text: c.snippet.text, heading, pinned: true, ...(similarCap !== undefined ? { maxTokens: similarCap } : {}) };
}

/** What checking needs of check/receiverMembers' ReceiverTyper. */
export interface ReceiverTyping {
  membersAt(file: { path: string; lang: CompletionRequest['lang']; prefix: string }, signal: AbortSignal): ReceiverMembers | undefined;
  /** The repository callable of the call the text ends inside, with the names in scope that fit its parameters. */
  callAt?(file: { path: string; lang: CompletionRequest['lang']; prefix: string }, signal: AbortSignal): CallSignature | undefined;
}

/** Run one stage: timed, recorded in the trace, degraded (never failed) by `onFailure` unless cancelled. */
export async function timed<T>(
  trace: CompletionTrace,
  stage: StageName,
  signal: AbortSignal,
  work: () => Promise<T>,
  onFailure: (e: unknown) => { value: T; status: StageStatus; message: string },
  checkpoint?: (signal: AbortSignal) => Promise<void>,
): Promise<T> {
  if (checkpoint) {
    const c0 = performance.now();
    try {
      await checkpoint(signal);
    } finally {
      trace.checkpointMs = (trace.checkpointMs ?? 0) + performance.now() - c0;
    }
  }
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
export async function complete(given: CompletionRequest, stages: PipelineStages, options: PipelineOptions, mode: CompletionMode, signal: AbortSignal): Promise<CompletionResult> {
  const start = performance.now();
  const lead = mode.prime?.(given) ?? '';
  const request = lead ? { ...given, prefix: given.prefix + lead } : given;
  const trace: CompletionTrace = { id: newTraceId(), mode: mode.name, startedAt: new Date().toISOString(), filePath: request.filePath, lang: request.lang, stages: [], totalMs: 0, nonModelMs: 0 };
  const file: UnfinishedFile = { path: request.filePath, lang: request.lang, prefix: request.prefix };
  let retrieval: RetrievalTrace | undefined;
  let rerank: RerankOutcome | undefined;
  let contexts: Candidate[] = [];
  const finish = (items: CompletionItem[]): CompletionResult => {
    trace.totalMs = performance.now() - start;
    trace.nonModelMs = trace.totalMs - (trace.stages.find((s) => s.stage === 'generate')?.elapsedMs ?? 0) - (trace.modelPrepareMs ?? 0);
    return { items, trace, contexts, ...(retrieval ? { retrieval } : {}), ...(rerank ? { rerank } : {}) };
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
  const retrievalFile = request.retrievalSuffix ? { ...file, prefix: request.prefix + request.retrievalSuffix } : file;
  retrieval = await timed<RetrievalTrace | undefined>(
    trace,
    'retrieve',
    signal,
    () => stages.retrieval.retrieve({ file: retrievalFile, query, topJ: options.retrieval.topJ }, options.retrieval, signal),
    (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
    stages.checkpoint,
  );
  const candidates = retrieval?.candidates ?? [];
  if (retrieval) trace.retrieval = retrievalTraceOf(retrieval);

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
      () => raceDeadline((s) => reranker.rerank({ file, candidates, topU: options.rerank.topU }, s), options.rerank.timeoutMs, signal, () => new Error(`rerank exceeded ${options.rerank.timeoutMs} ms`)),
      (e) => ({ value: { ranked: inOrder, calls: [], notes: [`failed: ${errorMessage(e)}`] }, status: 'degraded', message: errorMessage(e) }),
      stages.checkpoint,
    );
    ranked = outcome.ranked;
    rerank = outcome;
    trace.rerank = { reranker: reranker.name, calls: outcome.calls, picked: ranked.map((c) => c.snippet.id), ...(outcome.notes ? { notes: outcome.notes } : {}), ...(outcome.redactions !== undefined ? { redactions: outcome.redactions } : {}) };
  }

  // c'. similar code (ProCC): the chosen top-1 window joins the reranked knowledge
  const similarOptions = options.similar;
  let similarWindows: Candidate[] = [];
  if (similarOptions && similarOptions.mode !== 'off' && stages.similar) {
    const similar = stages.similar();
    const outcome = await timed<SimilarOutcome | undefined>(
      trace,
      'similar',
      signal,
      () => similarStage({ filePath: request.filePath, lang: request.lang, prefix: request.prefix, suffix: request.suffix }, similar, stages.bandit?.(), similarOptions, signal),
      (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
      stages.checkpoint,
    );
    if (outcome) {
      trace.similar = outcome.trace;
      similarWindows = outcome.windows.map((w) => windowCandidate(w, outcome.trace.arm));
    }
  }
  ranked = [...ranked, ...similarWindows];

  contexts = ranked;
  // Retrieval only: every top-u snippet is a context; nothing is prompted or generated.
  if (!stages.model) return finish([]);

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
  // ProCC's window beside CodeRAG's knowledge: it is budgeted first, up to its share of the prompt.
  const share = options.similar?.promptShare;
  const similarCap = similarWindows.length > 0 && ranked.length > similarWindows.length && share !== undefined ? Math.floor(budgetTokens * share) : undefined;
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
          snippets: ranked.map((c) => promptSnippetOf(c, similarCap)),
          family: model.family,
          budgetTokens,
          suffixShare: options.prompt.suffixShare,
          contextShare: options.prompt.contextShare,
          ...(options.prompt.repoFormat ? { repoFormat: options.prompt.repoFormat } : {}),
          ...(request.repoName !== undefined ? { repoName: request.repoName } : {}),
          ...(model.countTokens ? { countTokens: model.countTokens } : {}),
        });
    },
    (e) => ({ value: undefined, status: 'failed', message: errorMessage(e) }),
  );
  if (!prompt) {
    contexts = [];
    trace.error = { stage: 'prompt', kind: 'error', message: trace.stages.at(-1)?.message ?? 'prompt failed' };
    return finish([]);
  }
  contexts = prompt.usedIndices.map((i) => ranked[i]!);
  // The trace shows the prompt as the redaction boundary (stages.model) sends it.
  const redacted = await redactSecrets(prompt.prompt);
  trace.prompt = {
    text: redacted.text,
    redactions: redacted.count,
    tokens: prompt.tokens,
    budgetTokens,
    family: model.family,
    fim: prompt.fim,
    format: prompt.format,
    snippets: prompt.snippetsUsed.map((s) => s.path),
    snippetsDropped: prompt.snippetsDropped,
    prefixCut: prompt.prefixCut,
  };

  // Checking against the repository: the receiver typing, guarded so it never fails the completion.
  const checkMode = options.check?.mode ?? 'off';
  const typer = checkMode === 'off' ? undefined : stages.receivers?.();
  let membersAt: ((text: string) => ReceiverMembers | undefined) | undefined;
  if (checkMode !== 'off') {
    trace.check = { mode: checkMode, ...(typer ? {} : { note: 'no receiver typing in this host' }) };
    if (typer) {
      membersAt = (text) => {
        try {
          return typer.membersAt({ path: request.filePath, lang: request.lang, prefix: text }, signal);
        } catch (e) {
          if (isCancellationError(e)) throw e;
          trace.check!.note = `receiver typing failed: ${errorMessage(e)}`;
          return undefined;
        }
      };
    }
  }
  // The receiver at the cursor, for the models that can be constrained: the embedded one (its
  // tokens) and an OpenAI-compatible server (its own constraint mechanism, when it has one).
  const constrains = checkMode === 'constrain' && (model.backend === 'embedded' || model.backend === 'openai');
  const atCursor = constrains ? membersAt?.(request.prefix) : undefined;
  if (atCursor) trace.check!.atCursor = { receiver: atCursor.receiver, entities: atCursor.entities, names: atCursor.names.size };
  let constraint: DereferenceConstraint | undefined;
  let guide: CallArgumentGuide | undefined;
  if (membersAt && constrains && model.backend === 'embedded') {
    constraint = new DereferenceConstraint(request.prefix, membersAt, atCursor, options.check?.prior ?? 0);
    if (typer?.callAt) {
      const callAt = (text: string): CallSignature | undefined => {
        try {
          return typer.callAt!({ path: request.filePath, lang: request.lang, prefix: text }, signal);
        } catch (e) {
          if (isCancellationError(e)) throw e;
          trace.check!.note = `call typing failed: ${errorMessage(e)}`;
          return undefined;
        }
      };
      guide = new CallArgumentGuide(request.prefix, request.lang, callAt, callAt(request.prefix));
    }
  }
  // A model server that offers a constraint mechanism is asked to finish a member of the receiver at the cursor.
  const memberChoice = atCursor && model.backend === 'openai' ? { names: [...atCursor.names], partial: atCursor.partial } : undefined;
  // Both constraints see every step: the call guide first, the member mask after it (it has the last word at a dot).
  const decodeConstraint: DecodeConstraint | undefined = constraint && guide ? {
          apply: (texts, generated, logits) => {
            guide.apply(texts, generated, logits);
            constraint.apply(texts, generated, logits);
          },
        } : constraint;

  // What the model may not do yet (line mode on an empty line: end or break the line before it writes something).
  const hold = mode.hold?.(request) ?? {};
  const until = mode.until?.(request);

  // e. generate (one model request in flight per server, through the gate)
  const generated = await timed<GenerateResult | undefined>(
    trace,
    'generate',
    signal,
    () => {
      const work = (s: AbortSignal): Promise<GenerateResult> => model.generate({ prompt: redacted.text, maxNewTokens: options.generate.maxNewTokens, stop: prompt.stop, temperature: options.generate.temperature, ...(decodeConstraint ? { constraint: decodeConstraint } : {}), ...(memberChoice ? { memberChoice } : {}), ...hold, ...(until ? { until } : {}), copyFrom: fileToCopyFrom(request.prefix) }, s);
      return stages.gate ? stages.gate.run(work, signal) : work(signal);
    },
    (e) => {
      trace.error = { stage: 'generate', kind: isModelClientError(e) ? e.kind : 'error', message: errorMessage(e) };
      return { value: undefined, status: 'failed', message: errorMessage(e) };
    },
    stages.checkpoint,
  );
  if (constraint && trace.check) Object.assign(trace.check, { constrained: constraint.events, steps: constraint.calls, maskMs: constraint.maskMs + (guide?.ms ?? 0), resolveMs: constraint.resolveMs, ...(guide && guide.events.length > 0 ? { calls: guide.events } : {}) });
  if (!generated) return finish([]);
  if (generated.serverConstraint && trace.check) trace.check.server = generated.serverConstraint;
  trace.model = {
    backend: model.backend,
    model: generated.model,
    endpoint: model.endpoint,
    elapsedMs: generated.elapsedMs,
    // Shown in the editor's trace view and the terminal: without control characters.
    raw: stripControlChars(generated.text),
    ...(generated.firstTokenMs !== undefined ? { firstTokenMs: generated.firstTokenMs } : {}),
    ...(generated.tokens !== undefined ? { tokens: generated.tokens } : {}),
    ...(generated.stoppedBy ? { stoppedBy: generated.stoppedBy } : {}),
    ...(generated.copyPrior ? { copyPrior: generated.copyPrior } : {}),
  };

  // f. postprocess
  const text = await timed(
    trace,
    'postprocess',
    signal,
    // A prompt primed with the line's indentation ends in whitespace, where a byte-level BPE model
    // usually puts the last space into the next word's token (" if"): its answer then starts with
    // that space, which the indentation already holds.
    () => Promise.resolve(mode.postprocess(lead ? generated.text.replace(/^[ \t]+/, '') : generated.text, { lang: request.lang, prefix: request.prefix, suffix: request.suffix, ...(generated.stoppedBy ? { stoppedBy: generated.stoppedBy } : {}) }, options.postprocess)),
    (e) => ({ value: '', status: 'failed', message: errorMessage(e) }),
  );
  const placeholder = placeholderNote(generated.text);
  const post = trace.stages.at(-1);
  if (placeholder && post?.stage === 'postprocess') post.message = placeholder;
  // A model whose decoding was not constrained: check its finished answer (repair or cut).
  let checkedText = text;
  if (membersAt && text && (checkMode === 'repair' || !constraint)) {
    const checked = checkCompletion(request.prefix, text, membersAt);
    checkedText = checked.text;
    Object.assign(trace.check!, { checked: checked.checked, fixes: checked.fixes });
  }
  const inserted = checkedText ? lead + checkedText : '';
  trace.completion = inserted;
  if (!inserted) {
    const stopped = generated.stoppedBy && generated.stoppedBy !== 'unknown' ? ` (stopped by ${generated.stoppedBy === 'eos' ? 'its end token' : generated.stoppedBy === 'length' ? 'the token limit' : 'a stop sequence'})` : '';
    const context = { lang: request.lang, prefix: request.prefix, suffix: request.suffix };
    trace.empty = text
      ? 'checking cut the whole suggestion (it names a member its receiver lacks)'
      : `${mode.whyEmpty?.(generated.text, context, options.postprocess) ?? 'postprocessing left nothing'}${stopped}`;
  }
  return finish(inserted ? [{ text: inserted }] : []);
}

/** Most characters of the file above the cursor a model may copy from beyond its prompt (GenerateRequest.copyFrom). */
const COPY_FROM_CHARS = 32_000;

/** The file above the cursor, its last COPY_FROM_CHARS characters, for GenerateRequest.copyFrom. */
export function fileToCopyFrom(prefix: string): string {
  return prefix.length > COPY_FROM_CHARS ? prefix.slice(prefix.length - COPY_FROM_CHARS) : prefix;
}

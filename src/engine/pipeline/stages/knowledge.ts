// CodeRAG's knowledge stage (query, Alg. 1 -> multi-path retrieval, 2.2.1 -> BestFit rerank, 2.3)
// and ProCC's similar-code stage: what every mode asks for the code the prompt shows. The line
// mode's prompt is built from them; the body mode adds the knowledge items to Rambo's lists.
import { cursorLine } from '../../prompt/promptMemory';
import { lastLinesQuery } from '../../query/lastLinesQuery';
import type { UnfinishedFile } from '../../query/unfinishedFile';
import type { Candidate, RetrievalTrace } from '../../retrieve/types';
import type { RerankOutcome } from '../../rerank/types';
import { raceDeadline } from '../../util/abort';
import { errorMessage } from '../../util/errors';
import { similarModeFor, similarStage, type SimilarOutcome } from '../../similar/similarStage';
import type { CodeWindow } from '../../similar/windowIndex';
import type { CompletionTrace } from '../trace';
import { writeOutcome, type StageOutcome } from '../outcomes';
import type { CompletionRequest, RequestContext } from '../types';
import { timed } from './timed';

export interface Knowledge {
  /** The reranked top-u (retrieval order without a reranker). */
  ranked: Candidate[];
  retrieval?: RetrievalTrace;
  rerank?: RerankOutcome;
}

/**
 * The knowledge items for `request` (the request as the mode primed it), each step timed into
 * `trace` (the request's own, or a scratch one where the mode records the stage as a whole).
 */
export async function knowledgeStage(
  context: RequestContext,
  request: CompletionRequest,
  trace: CompletionTrace = context.trace,
  listU = context.options.rerank.topU,
): Promise<Knowledge> {
  const { stages, options, signal } = context;
  // A longer list than top-u: the distilled reranker orders it all (its cost is a few more comparisons);
  // a per-place (LLM) reranker's top-u is followed by the rest in retrieval order (each comparison is a model call).
  const topU = Math.max(options.rerank.topU, listU);
  const file: UnfinishedFile = { path: request.filePath, lang: request.lang, prefix: request.prefix };
  // The request's trace keeps the outcomes with the request's; a scratch trace only records them.
  const record = (o: StageOutcome): void => (trace === context.trace ? context.record(o) : writeOutcome(trace, o));

  // a. query
  const query = await timed(
    trace,
    'query',
    signal,
    () =>
      stages.probeSlot
        ? stages.probeSlot.run((s) => stages.query.build(file, options.query, s), signal)
        : stages.query.build(file, options.query, signal),
    (e) => ({
      value: { ...lastLinesQuery(request.prefix, 10), fallbackReason: `query failed: ${errorMessage(e)}` },
      status: 'degraded',
      message: errorMessage(e),
    }),
    stages.checkpoint,
  );
  record({ stage: 'query', outcome: query });

  // b. retrieve
  const retrieval = await timed<RetrievalTrace | undefined>(
    trace,
    'retrieve',
    signal,
    () => stages.retrieval.retrieve({ file, query, topJ: options.retrieval.topJ, analyses: context.analyses }, options.retrieval, signal),
    (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
    stages.checkpoint,
  );
  const candidates = retrieval?.candidates ?? [];
  // The list `first` leads: the candidates it does not hold follow in retrieval order, up to topU.
  const thenTheRest = (first: readonly Candidate[]): Candidate[] => {
    const kept = new Set(first.map((c) => c.snippet.id));
    return [...first, ...candidates.filter((c) => !kept.has(c.snippet.id))].slice(0, topU);
  };
  if (retrieval) record({ stage: 'retrieve', outcome: retrieval });

  // c. rerank (without a reranker, or when it fails, the candidates stay in retrieval order)
  const reranker = stages.reranker();
  const inOrder = candidates.slice(0, topU);
  if (!reranker || candidates.length <= 1) {
    trace.stages.push({
      stage: 'rerank',
      status: 'skipped',
      elapsedMs: 0,
      message: reranker ? 'fewer than two candidates' : 'no reranker; retrieval order',
    });
    record({ stage: 'rerank', outcome: { reranker: reranker?.name ?? 'none', calls: [], picked: inOrder.map((c) => c.snippet.id) } });
    return { ranked: inOrder, ...(retrieval ? { retrieval } : {}) };
  }
  // A per-place reranker's choice at this place stands: what it chose first, then what retrieval found since.
  const place = reranker.perPlace ? stages.promptMemory?.placeAt(request.filePath, cursorLine(request.prefix)) : undefined;
  const chosen = place?.fresh === false ? place.layout.ranked : undefined;
  if (place && chosen) {
    const byId = new Map(candidates.map((c) => [c.snippet.id, c]));
    const ranked = thenTheRest(chosen.flatMap((id) => byId.get(id) ?? []));
    trace.stages.push({
      stage: 'rerank',
      status: 'ok',
      elapsedMs: 0,
      message: `${reranker.name}: its choice at this place (it runs once per place)`,
    });
    record({
      stage: 'rerank',
      outcome: { reranker: reranker.name, calls: [], picked: ranked.map((c) => c.snippet.id), notes: ['reused at this place'] },
    });
    return { ranked, ...(retrieval ? { retrieval } : {}) };
  }
  const rerank = await timed<RerankOutcome>(
    trace,
    'rerank',
    signal,
    () =>
      raceDeadline(
        (s) => reranker.rerank({ file, candidates, topU: reranker.perPlace ? options.rerank.topU : topU }, s),
        options.rerank.timeoutMs,
        signal,
        () => new Error(`rerank exceeded ${options.rerank.timeoutMs} ms`),
      ),
    (e) => ({ value: { ranked: inOrder, calls: [], notes: [`failed: ${errorMessage(e)}`] }, status: 'degraded', message: errorMessage(e) }),
    stages.checkpoint,
  );
  record({
    stage: 'rerank',
    outcome: {
      reranker: reranker.name,
      calls: rerank.calls,
      picked: rerank.ranked.map((c) => c.snippet.id),
      ...(rerank.notes ? { notes: rerank.notes } : {}),
      ...(rerank.redactions !== undefined ? { redactions: rerank.redactions } : {}),
    },
  });
  const ranked = rerank.ranked.length >= topU ? rerank.ranked : thenTheRest(rerank.ranked);
  if (place && rerank.calls.length > 0) place.layout.ranked = ranked.map((c) => c.snippet.id);
  return { ranked, ...(retrieval ? { retrieval } : {}), rerank };
}

/** A similar-code window as a candidate: it enters the contexts and the prompt under ProCC's heading. */
export function windowCandidate(w: CodeWindow, arm: string): Candidate {
  return {
    snippet: {
      id: w.id,
      kind: 'window',
      path: w.path,
      name: (w.text.split('\n').find((l) => l.trim() !== '') ?? '').trim().slice(0, 60),
      qualifiedName: `${w.path}:${w.startLine + 1}-${w.endLine + 1}`,
      range: { startLine: w.startLine, endLine: w.endLine },
      text: w.text,
    },
    paths: [],
    scores: {},
    ranks: {},
    origin: { kind: 'similar', arm },
  };
}

/** ProCC's similar code: the chosen top-1 window(s) as candidates; none when the stage is off or the host lends no code windows. */
export async function similarCodeStage(context: RequestContext, request: CompletionRequest): Promise<Candidate[]> {
  const { stages, options, signal, trace } = context;
  // `auto` asks which model writes the answer: a request without one (retrieval only) gets none.
  const mode = similarModeFor(options.similar.mode, request.lang, options.similar.mode === 'auto' ? stages.model?.().backend : undefined);
  if (mode === 'off' || !stages.similar) return [];
  const similarOptions = { ...options.similar, mode };
  const similar = stages.similar();
  const outcome = await timed<SimilarOutcome | undefined>(
    trace,
    'similar',
    signal,
    () =>
      similarStage(
        { filePath: request.filePath, lang: request.lang, prefix: request.prefix, suffix: request.suffix },
        similar,
        stages.bandit?.(),
        similarOptions,
        signal,
      ),
    (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
    stages.checkpoint,
  );
  if (!outcome) return [];
  context.record({ stage: 'similar', outcome: outcome.trace });
  return outcome.windows.map((w) => windowCandidate(w, outcome.trace.arm));
}

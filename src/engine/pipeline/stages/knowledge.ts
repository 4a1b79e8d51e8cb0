// CodeRAG's knowledge stage (query, Alg. 1 -> multi-path retrieval, 2.2.1 -> BestFit rerank, 2.3):
// what every mode asks for the repository's code the prompt shows. The line mode's prompt is built
// from it; the body mode adds the knowledge items to Rambo's lists.
import { cursorLine, placeKey } from '../../prompt/promptMemory';
import { lastLinesQuery } from '../../query/lastLinesQuery';
import type { UnfinishedFile } from '../../query/unfinishedFile';
import type { Candidate, RetrievalTrace } from '../../retrieve/types';
import type { RerankOutcome } from '../../rerank/types';
import { raceDeadline } from '../../util/abort';
import { errorMessage } from '../../util/errors';
import { multiPathRetrieve } from '../../retrieve/multiPathRetrieve';
import type { Recorder } from '../recorder';
import type { CompletionRequest, RequestContext } from '../types';
import { repoNow } from './context';
import { probingQueryBuilder } from './query';
import { timed } from './timed';

/** The snippet ids a per-place reranker (RerankStage.perPlace) chose at a place, best first: this stage's alone. */
const RERANK_CHOICE = placeKey<string[]>('rerank.choice');

export interface Knowledge {
  /** The reranked top-u (retrieval order without a reranker). */
  ranked: Candidate[];
  retrieval?: RetrievalTrace;
  rerank?: RerankOutcome;
}

/**
 * The knowledge items for `request` (the request as the mode primed it), each step recorded by
 * `recorder` (the request's own, or a child where the mode records the stage as a whole).
 */
export async function knowledgeStage(
  context: RequestContext,
  request: CompletionRequest,
  recorder: Recorder = context.recorder,
  listU = context.options.rerank.topU,
): Promise<Knowledge> {
  const { env, parts, hooks, options, signal } = context;
  // A longer list than top-u: the distilled reranker orders it all (its cost is a few more comparisons);
  // a per-place (LLM) reranker's top-u is followed by the rest in retrieval order (each comparison is a model call).
  const topU = Math.max(options.rerank.topU, listU);
  const file: UnfinishedFile = { path: request.filePath, lang: request.lang, prefix: request.prefix };
  const record = recorder.record.bind(recorder);
  const query = hooks.query ?? probingQueryBuilder(env.prober);

  // a. query
  const built = await timed(
    recorder,
    'query',
    signal,
    () =>
      parts.probeSlot ? parts.probeSlot.run((s) => query.build(file, options.query, s), signal) : query.build(file, options.query, signal),
    (e) => ({
      value: { ...lastLinesQuery(request.prefix, 10), fallbackReason: `query failed: ${errorMessage(e)}` },
      status: 'degraded',
      message: errorMessage(e),
    }),
    parts.yieldTurn,
  );
  record({ stage: 'query', outcome: built });

  // b. retrieve
  const { budgetsMs, maxCandidates } = options.retrieval;
  const retrieval = await timed<RetrievalTrace | undefined>(
    recorder,
    'retrieve',
    signal,
    () =>
      multiPathRetrieve(
        repoNow(context)?.retrievers ?? [],
        { file, query: built, topJ: options.retrieval.topJ, analyses: context.analyses },
        { budgetsMs, ...(maxCandidates ? { maxCandidates } : {}) },
        signal,
      ),
    (e) => ({ value: undefined, status: 'degraded', message: errorMessage(e) }),
    parts.yieldTurn,
  );
  const candidates = retrieval?.candidates ?? [];
  // The list `first` leads: the candidates it does not hold follow in retrieval order, up to topU.
  const thenTheRest = (first: readonly Candidate[]): Candidate[] => {
    const kept = new Set(first.map((c) => c.snippet.id));
    return [...first, ...candidates.filter((c) => !kept.has(c.snippet.id))].slice(0, topU);
  };
  if (retrieval) record({ stage: 'retrieve', outcome: retrieval });

  // c. rerank (without a reranker, or when it fails, the candidates stay in retrieval order)
  const reranker = env.reranker;
  const inOrder = candidates.slice(0, topU);
  if (!reranker || candidates.length <= 1) {
    recorder.stage({
      stage: 'rerank',
      status: 'skipped',
      elapsedMs: 0,
      message: reranker ? 'fewer than two candidates' : 'no reranker; retrieval order',
    });
    record({ stage: 'rerank', outcome: { reranker: reranker?.name ?? 'none', calls: [], picked: inOrder.map((c) => c.snippet.id) } });
    return { ranked: inOrder, ...(retrieval ? { retrieval } : {}) };
  }
  // A per-place reranker's choice at this place stands: what it chose first, then what retrieval found since.
  const place = reranker.perPlace ? parts.promptMemory?.placeAt(request.filePath, cursorLine(request.prefix)) : undefined;
  const choice = place?.own(RERANK_CHOICE);
  const chosen = place?.fresh === false ? choice?.value : undefined;
  if (place && chosen) {
    const byId = new Map(candidates.map((c) => [c.snippet.id, c]));
    const ranked = thenTheRest(chosen.flatMap((id) => byId.get(id) ?? []));
    recorder.stage({
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
    recorder,
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
    parts.yieldTurn,
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
  if (choice && rerank.calls.length > 0) choice.value = ranked.map((c) => c.snippet.id);
  return { ranked, ...(retrieval ? { retrieval } : {}), rerank };
}

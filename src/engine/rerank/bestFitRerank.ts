// The rerank stage (CodeRAG section 2.3): BestFit heap sort with a reranker as the comparator.
// A failed call keeps its window in retrieval order and is recorded; after a transport failure
// (timeout, server down, HTTP error) the remaining windows skip the reranker. Cancellation propagates.
import { bestFitHeapSort, DEFAULT_ARITY, DEFAULT_TOP_U } from './bestFitHeapSort';
import type { RerankCall, RerankDoc, Reranker, RerankQuery, RerankTrace } from './types';
import { isRerankError, isTransportFailure } from './types';
import { errorMessage, isCancellationError, throwIfAborted } from '../util/errors';

interface RerankOptions {
  topU?: number;
  arity?: number;
  /** Milliseconds on a clock (injected for tests). */
  now?: () => number;
}

interface RerankResult<T extends RerankDoc> {
  /** The top-u, best first. */
  top: T[];
  /** The others, in retrieval order. */
  rest: T[];
  trace: RerankTrace;
}

/** Rerank `docs` (in retrieval order) with `reranker`; `undefined` keeps the retrieval order. */
export async function bestFitRerank<T extends RerankDoc>(
  query: RerankQuery,
  docs: readonly T[],
  reranker: Reranker | undefined,
  options: RerankOptions,
  signal: AbortSignal,
): Promise<RerankResult<T>> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const topU = options.topU ?? DEFAULT_TOP_U;
  const calls: RerankCall[] = [];
  let broken: string | undefined;

  if (!reranker) {
    throwIfAborted(signal);
    const top = docs.slice(0, topU);
    return {
      top,
      rest: docs.slice(topU),
      trace: {
        reranker: 'none',
        before: docs.map((d) => d.id),
        after: top.map((d) => d.id),
        calls,
        rerankerCalls: 0,
        elapsedMs: now() - started,
      },
    };
  }

  const compare = async (window: readonly T[], callSignal: AbortSignal): Promise<number> => {
    const ids = window.map((d) => d.id);
    if (broken !== undefined) {
      calls.push({ window: ids, picked: 0, status: 'skipped', reason: broken, elapsedMs: 0 });
      return 0;
    }
    const t0 = now();
    try {
      const pick = await reranker.pick(query, window, callSignal);
      calls.push({ window: ids, picked: pick.index, status: 'ok', scores: pick.scores, answer: pick.answer, elapsedMs: now() - t0 });
      return pick.index;
    } catch (e) {
      if (isCancellationError(e) || callSignal.aborted) throw e;
      const reason = isRerankError(e) ? `${e.reason}: ${e.message}` : `error: ${errorMessage(e)}`;
      if (isRerankError(e) && isTransportFailure(e.reason)) broken = reason;
      calls.push({
        window: ids,
        picked: 0,
        status: 'fallback',
        reason,
        answer: isRerankError(e) ? e.answer : undefined,
        elapsedMs: now() - t0,
      });
      return 0;
    }
  };

  if (reranker.prepare && docs.length > 1) {
    try {
      await reranker.prepare(query, docs, signal);
    } catch (e) {
      // The windows will ask again (and fall back one by one if that fails too).
      if (isCancellationError(e) || signal.aborted) throw e;
    }
  }
  const sorted = await bestFitHeapSort(docs, compare, { topU, arity: options.arity ?? DEFAULT_ARITY }, signal);
  const failed = calls.filter((c) => c.status !== 'ok').length;
  const trace: RerankTrace = {
    reranker: reranker.name,
    before: docs.map((d) => d.id),
    after: sorted.top.map((d) => d.id),
    calls,
    rerankerCalls: calls.filter((c) => c.status !== 'skipped').length,
    elapsedMs: now() - started,
  };
  if (failed > 0)
    trace.degraded =
      `${failed} of ${calls.length} windows kept retrieval order ` + `(${broken ?? calls.find((c) => c.status !== 'ok')?.reason ?? ''})`;
  return { top: sorted.top, rest: sorted.rest, trace };
}

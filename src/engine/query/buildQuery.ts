// Retrieval query construction (CodeRAG section 2.2): probing when a prober is given, else the
// selectable model-free strategies (last-3, last-10, Jaccard-closest chunk).
import { jaccardChunkQuery } from './jaccardChunkQuery';
import { lastLinesQuery } from './lastLinesQuery';
import { probeQuery, type ChunkProber, type ProbeQueryOptions } from './probeQuery';
import type { QueryStrategy, RetrievalQuery } from './types';
import { errorMessage, isCancellationError } from '../util/errors';
import { getLogger } from '../util/logger';

const log = getLogger('query');

type FallbackStrategy = Exclude<QueryStrategy, 'probe' | 'lastK'>;

interface QueryOptions extends ProbeQueryOptions {
  strategy: QueryStrategy;
  /** k for 'lastK'. */
  k?: number;
  /** Used when probing is asked for but the prober is missing or fails (default 'jaccard'). */
  fallback?: FallbackStrategy;
}

class ModelUnavailableError extends Error {
  constructor(what: string) {
    super(`${what}: model not available yet`);
    this.name = 'ModelUnavailableError';
  }
}

function modelFree(prefix: string, strategy: FallbackStrategy | 'lastK', options: QueryOptions): RetrievalQuery {
  switch (strategy) {
    case 'last3':
      return lastLinesQuery(prefix, 3);
    case 'last10':
      return lastLinesQuery(prefix, 10);
    case 'lastK':
      return lastLinesQuery(prefix, options.k ?? 10);
    case 'jaccard':
      return jaccardChunkQuery(prefix, options);
  }
}

/** Build the query; probing degrades to `fallback` (recorded in fallbackReason), cancellation propagates. */
export async function buildQuery(
  prefix: string,
  options: QueryOptions,
  prober: ChunkProber | undefined,
  signal: AbortSignal,
): Promise<RetrievalQuery> {
  const start = performance.now();
  let query: RetrievalQuery;
  if (options.strategy !== 'probe') {
    query = modelFree(prefix, options.strategy, options);
  } else if (!prober) {
    query = { ...modelFree(prefix, options.fallback ?? 'jaccard', options), fallbackReason: new ModelUnavailableError('probing').message };
  } else {
    try {
      query = await probeQuery(prefix, prober, options, signal);
    } catch (e) {
      if (isCancellationError(e)) throw e;
      log.warn(`probing failed, using ${options.fallback ?? 'jaccard'}: ${errorMessage(e)}`);
      query = { ...modelFree(prefix, options.fallback ?? 'jaccard', options), fallbackReason: `probing failed: ${errorMessage(e)}` };
    }
  }
  return { ...query, elapsedMs: performance.now() - start };
}

// The query stage's strategy (CodeRAG Alg. 1): probing with the lent prober, else the fallback
// strategy of the options; an evaluation may swap in its own builder (ResearchHooks.query).
import { buildQuery } from '../../query/buildQuery';
import type { ChunkProber } from '../../query/probeQuery';
import type { QueryBuilder } from '../../query/types';

/** The query stage over query/buildQuery: probing when a prober is lent, else the fallback strategy. */
export function probingQueryBuilder(prober: ChunkProber | undefined): QueryBuilder {
  return {
    build: (file, options, signal) =>
      buildQuery(
        file.prefix,
        { strategy: options.strategy, fallback: options.fallback, f: options.f, g: options.g, m: options.m, maxProbes: options.maxProbes },
        prober,
        signal,
      ),
  };
}

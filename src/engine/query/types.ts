// The retrieval query (CodeRAG section 2.2) as the retrieval paths receive it, and the query
// stage's contract.
import type { UnfinishedFile } from './unfinishedFile';

export type QueryStrategy = 'probe' | 'last3' | 'last10' | 'lastK' | 'jaccard';

export interface RetrievalQuery {
  strategy: QueryStrategy;
  /** The query text: selected chunk(s) then the target chunk, in file order. */
  text: string;
  /** 0-based inclusive line spans of the prefix the query was taken from, in file order. */
  spans: Array<{ startLine: number; endLine: number }>;
  /** Per-chunk scores when a chunk was chosen (probing log-probs or Jaccard). */
  chunkScores?: Array<{ startLine: number; endLine: number; score: number }>;
  /** Why the requested strategy was not used (e.g. the probing model is missing). */
  fallbackReason?: string;
  elapsedMs?: number;
}

/** The query stage's slice of the pipeline options (CodeRAG defaults f=3, g=1, m=5). */
export interface QueryStageOptions {
  strategy: QueryStrategy;
  fallback: 'last3' | 'last10' | 'jaccard';
  f: number;
  g: number;
  m: number;
  maxProbes: number;
}

/** The query stage: builds the retrieval query from the unfinished file (probing, or a model-free strategy). */
export interface QueryBuilder {
  build(file: UnfinishedFile, options: QueryStageOptions, signal: AbortSignal): Promise<RetrievalQuery>;
}

// Last-k-lines retrieval query: the baseline CodeRAG's probing improves on (section 2.2, Table 5)
// and the fallback when the probing model is unavailable.
import { contentLines } from './chunkLines';
import type { RetrievalQuery } from './types';

export function lastLinesQuery(prefix: string, k: number): RetrievalQuery {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got ${k}`);
  const lines = contentLines(prefix);
  const start = Math.max(0, lines.length - k);
  const text = lines.slice(start).join('\n');
  return {
    strategy: k === 3 ? 'last3' : k === 10 ? 'last10' : 'lastK',
    text,
    spans: lines.length > 0 ? [{ startLine: start, endLine: lines.length - 1 }] : [],
  };
}

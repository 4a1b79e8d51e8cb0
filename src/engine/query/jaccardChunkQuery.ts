// Jaccard-closest chunk query: CodeRAG Alg. 1 with the LM's confidence replaced by the
// bag-of-words Jaccard similarity of each chunk to the target chunk (the model-free fallback).
import { wordSet, jaccard } from './bagOfWords';
import { chunkLines, queryFromScoredChunks } from './chunkLines';
import type { RetrievalQuery } from './types';

interface ChunkQueryOptions {
  /** Chunk length in lines (CodeRAG f=3). */
  f?: number;
  /** Chunks chosen besides the target chunk (CodeRAG g=1). */
  g?: number;
}

/** With <= 2 chunks the whole prefix is the query (as CodeRAG does); ties go to the chunk nearest the cursor. */
export function jaccardChunkQuery(prefix: string, options: ChunkQueryOptions = {}): RetrievalQuery {
  const f = options.f ?? 3;
  const g = options.g ?? 1;
  const { chunks, target } = chunkLines(prefix, f);
  if (!target) return { strategy: 'jaccard', text: '', spans: [] };
  if (chunks.length <= g + 1) {
    return {
      strategy: 'jaccard',
      text: chunks.map((c) => c.text).join('\n'),
      spans: [{ startLine: chunks[0]?.startLine ?? 0, endLine: target.endLine }],
    };
  }
  const targetWords = wordSet(target.text);
  const scored = chunks.slice(0, -1).map((c, index) => ({ chunk: c, index, score: jaccard(wordSet(c.text), targetWords) }));
  return queryFromScoredChunks('jaccard', scored, target, g);
}

// Fine-grained chunks of the unfinished file (CodeRAG Alg. 1, line 1: f-line chunks).
import { prefixLines } from './unfinishedFile';

interface LineChunk {
  /** 0-based index of the chunk's first and last line in the prefix. */
  startLine: number;
  endLine: number;
  text: string;
}

interface ChunkedPrefix {
  /** Chunks in file order; the last one is the target chunk (the one holding the cursor). */
  chunks: LineChunk[];
  target: LineChunk | undefined;
}

/**
 * The prefix's content lines: a trailing blank unfinished line (the cursor at the start of an
 * empty line, as in CCEval line cases) carries nothing and is dropped.
 */
export function contentLines(prefix: string): string[] {
  const lines = prefixLines(prefix);
  if (lines.length > 0 && (lines[lines.length - 1] ?? '').trim() === '') lines.pop();
  return lines;
}

/**
 * Split the prefix into f-line chunks aligned at the cursor, so that the target chunk always
 * holds the f lines ending at the cursor (aligning at the file start could leave the target
 * chunk a single, often empty, line).
 */
export function chunkLines(prefix: string, f = 3): ChunkedPrefix {
  if (!Number.isInteger(f) || f < 1) throw new RangeError(`chunk length must be a positive integer, got ${f}`);
  const lines = contentLines(prefix);
  const chunks: LineChunk[] = [];
  for (let end = lines.length - 1; end >= 0; end -= f) {
    const start = Math.max(0, end - f + 1);
    chunks.push({ startLine: start, endLine: end, text: lines.slice(start, end + 1).join('\n') });
  }
  chunks.reverse();
  return { chunks, target: chunks[chunks.length - 1] };
}

/**
 * CodeRAG Alg. 1's last step, shared by every chunk scorer: the g best-scoring chunks (ties to the
 * chunk nearest the cursor), in file order, then the target chunk.
 */
export function queryFromScoredChunks<S extends string>(
  strategy: S,
  scored: readonly { chunk: LineChunk; index: number; score: number }[],
  target: LineChunk,
  g: number,
): {
  strategy: S;
  text: string;
  spans: { startLine: number; endLine: number }[];
  chunkScores: { startLine: number; endLine: number; score: number }[];
} {
  const chosen = [...scored]
    .sort((a, b) => b.score - a.score || b.index - a.index)
    .slice(0, g)
    .sort((a, b) => a.index - b.index);
  const parts = [...chosen.map((s) => s.chunk), target];
  return {
    strategy,
    text: parts.map((c) => c.text).join('\n'),
    spans: parts.map((c) => ({ startLine: c.startLine, endLine: c.endLine })),
    chunkScores: scored.map((s) => ({ startLine: s.chunk.startLine, endLine: s.chunk.endLine, score: s.score })),
  };
}

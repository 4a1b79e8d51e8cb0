// Log-probability guided probing (CodeRAG Alg. 1): each non-target chunk + the target chunk is
// fed to a causal code LM; score = sum over m greedy steps of the highest log-probability; the
// query is the top-g chunks (file order) + the target chunk. The LM sits behind ChunkProber.
import { chunkLines, queryFromScoredChunks } from './chunkLines';
import type { RetrievalQuery } from './types';
import { throwIfAborted } from '../util/errors';

/** The causal LM side of probing (implemented over the models in src/engine/models). */
export interface ChunkProber {
  /**
   * For each probe text, greedily generate m tokens and return the sum of the highest
   * log-probability at each step (one score per probe, same order).
   */
  scoreProbes(probes: readonly string[], m: number, signal: AbortSignal): Promise<number[]>;
}

export interface ProbeQueryOptions {
  f?: number;
  g?: number;
  m?: number;
  /** Probe at most this many chunks, nearest the cursor first (keeps a 5,000-line file cheap). */
  maxProbes?: number;
}

export async function probeQuery(
  prefix: string,
  prober: ChunkProber,
  options: ProbeQueryOptions = {},
  signal: AbortSignal,
): Promise<RetrievalQuery> {
  const f = options.f ?? 3;
  const g = options.g ?? 1;
  const m = options.m ?? 5;
  const { chunks, target } = chunkLines(prefix, f);
  if (!target) return { strategy: 'probe', text: '', spans: [] };
  if (chunks.length <= g + 1) {
    return {
      strategy: 'probe',
      text: chunks.map((c) => c.text).join('\n'),
      spans: [{ startLine: chunks[0]?.startLine ?? 0, endLine: target.endLine }],
    };
  }
  const others = chunks.slice(0, -1);
  const probed = others.slice(Math.max(0, others.length - (options.maxProbes ?? others.length)));
  throwIfAborted(signal);
  // CodeRAG concatenates chunk and target chunk with a newline.
  const scores = await prober.scoreProbes(
    probed.map((c) => `${c.text}\n${target.text}`),
    m,
    signal,
  );
  throwIfAborted(signal);
  const scored = probed.map((chunk, index) => ({ chunk, index, score: scores[index] ?? -Infinity }));
  return queryFromScoredChunks('probe', scored, target, g);
}

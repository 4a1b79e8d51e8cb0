// Distillation data construction (CodeRAG Alg. 2): for each training query, random subsets of the
// retrieval list of sizes 2..7, three of each size, each sent 5 times to a sampling teacher; a
// subset is kept only when one label wins at least 4 of the 5 votes. The teacher is any reranker
// client (an LLM sampling at temperature 0.8) or, where no LLM can run, the ground-truth oracle.
import { labelOf } from '../engine/rerank/bestFitPrompt';
import type { Reranker, RerankDoc, RerankQuery } from '../engine/rerank/types';
import { isRerankError } from '../engine/rerank/types';
import type { CrossfileDef } from './metrics';
import { containsIdentifier } from './metrics';
import { throwIfAborted } from '../engine/util/errors';

/** One vote: the index of the window's most helpful candidate, or undefined when the teacher gave no usable answer. */
export type Teacher = (query: RerankQuery, window: readonly RerankDoc[], signal: AbortSignal) => Promise<number | undefined>;

export interface DistillOptions {
  /** Subset sizes (CodeRAG: N = {2..7}). */
  sizes?: readonly number[];
  /** Subsets drawn per size (3). */
  perSize?: number;
  /** Teacher calls per subset (5). */
  samples?: number;
  /** Votes one label needs for the subset to be kept (4). */
  minAgree?: number;
  /** Uniform [0, 1) source; seeded for reproducible data. */
  random?: () => number;
}

/** One JSONL line of distillation data. */
interface DistillSample {
  query: RerankQuery;
  /** The subset, in retrieval order, as the prompt shows it ([A], [B], ...). */
  candidates: RerankDoc[];
  /** Index of the consensus pick. */
  choice: number;
  /** The expected answer text: `<answer>[X]</answer>`. */
  expected: string;
  /** How many of the samples voted for `choice`. */
  votes: number;
}

interface DistillStats {
  subsets: number;
  kept: number;
  teacherCalls: number;
  /** Calls where the teacher gave no usable answer. */
  failedCalls: number;
}

/** k distinct positions of 0..n-1, sorted (the subset keeps retrieval order). */
function pickPositions(n: number, k: number, random: () => number): number[] {
  const positions = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(random() * (n - i));
    [positions[i], positions[j]] = [positions[j]!, positions[i]!];
  }
  return positions.slice(0, k).sort((a, b) => a - b);
}

/** Alg. 2 for one query and its retrieval list. */
export async function constructDistillationData(
  query: RerankQuery,
  list: readonly RerankDoc[],
  teacher: Teacher,
  options: DistillOptions,
  signal: AbortSignal,
): Promise<{ samples: DistillSample[]; stats: DistillStats }> {
  const sizes = options.sizes ?? [2, 3, 4, 5, 6, 7];
  const perSize = options.perSize ?? 3;
  const sampleCount = options.samples ?? 5;
  const minAgree = options.minAgree ?? 4;
  const random = options.random ?? Math.random;
  const samples: DistillSample[] = [];
  const stats: DistillStats = { subsets: 0, kept: 0, teacherCalls: 0, failedCalls: 0 };
  for (const size of sizes) {
    if (size < 2 || size > list.length) continue;
    for (let j = 0; j < perSize; j++) {
      const candidates = pickPositions(list.length, size, random).map((p) => list[p]!);
      stats.subsets++;
      const votes = new Array<number>(size).fill(0);
      for (let z = 0; z < sampleCount; z++) {
        throwIfAborted(signal);
        stats.teacherCalls++;
        const vote = await teacher(query, candidates, signal);
        if (vote === undefined || !Number.isInteger(vote) || vote < 0 || vote >= size) stats.failedCalls++;
        else votes[vote] = (votes[vote] ?? 0) + 1;
      }
      let choice = 0;
      for (let i = 1; i < size; i++) if ((votes[i] ?? 0) > (votes[choice] ?? 0)) choice = i;
      const agree = votes[choice] ?? 0;
      if (agree >= minAgree) {
        stats.kept++;
        samples.push({ query, candidates, choice, expected: `<answer>[${labelOf(choice)}]</answer>`, votes: agree });
      }
    }
  }
  return { samples, stats };
}

/** One JSONL line per sample ({query, candidates, choice, expected, votes}). */
export function toJsonl(samples: readonly DistillSample[]): string {
  return samples.map((s) => JSON.stringify(s) + '\n').join('');
}

/** Any reranker as a teacher: a failed call (bad label, timeout, server down) is a missing vote. */
export function rerankerTeacher(reranker: Reranker): Teacher {
  return async (query, window, signal) => {
    try {
      return (await reranker.pick(query, window, signal)).index;
    } catch (e) {
      if (isRerankError(e)) return undefined;
      throw e;
    }
  };
}

/** A candidate as the oracle sees it: its file and, when known, its retrieval score. */
export interface OracleDoc extends RerankDoc {
  path: string;
  score?: number;
}

/** Cross-file definitions a candidate contains: same file, and the name occurs as an identifier. */
export function definitionsCovered(doc: OracleDoc, defs: readonly CrossfileDef[]): number {
  let hits = 0;
  for (const def of defs) if (def.file === doc.path && containsIdentifier(doc.text, def.name)) hits++;
  return hits;
}

/**
 * The ground-truth oracle for benchmark cases: the candidate containing the most of the case's
 * cross-file definitions, ties broken by retrieval score (then retrieval order). Abstains when no
 * candidate contains any, so such windows are not kept as training data.
 */
export function oracleTeacher(defsFor: (query: RerankQuery) => readonly CrossfileDef[] | undefined): Teacher {
  return (query, window) => {
    const defs = defsFor(query) ?? [];
    let best: number | undefined;
    let bestHits = 0;
    let bestScore = -Infinity;
    window.forEach((doc, i) => {
      const oracleDoc = doc as OracleDoc;
      const hits = typeof oracleDoc.path === 'string' ? definitionsCovered(oracleDoc, defs) : 0;
      const score = oracleDoc.score ?? -Infinity;
      if (hits > bestHits || (hits === bestHits && hits > 0 && score > bestScore)) {
        best = i;
        bestHits = hits;
        bestScore = score;
      }
    });
    return Promise.resolve(best);
  };
}

/** Agreement of a reranker with the teacher's consensus picks (the model card's held-out figure). */
export async function teacherAgreement(
  reranker: Reranker,
  samples: readonly DistillSample[],
  signal: AbortSignal,
): Promise<{ agree: number; total: number; failed: number; rate: number }> {
  let agree = 0;
  let failed = 0;
  for (const s of samples) {
    throwIfAborted(signal);
    try {
      if ((await reranker.pick(s.query, s.candidates, signal)).index === s.choice) agree++;
    } catch (e) {
      if (!isRerankError(e)) throw e;
      failed++;
    }
  }
  return { agree, total: samples.length, failed, rate: samples.length === 0 ? 0 : agree / samples.length };
}

/**
 * Split samples into training and held-out sets by query (every sample of one query lands on the
 * same side, so held-out windows never share a query with training windows).
 */
export function splitByQuery(
  samples: readonly DistillSample[],
  heldOutFraction: number,
  random: () => number,
): { train: DistillSample[]; heldOut: DistillSample[] } {
  const side = new Map<string, boolean>();
  const train: DistillSample[] = [];
  const heldOut: DistillSample[] = [];
  for (const s of samples) {
    const key = `${s.query.path}\u0000${s.query.text}`;
    let held = side.get(key);
    if (held === undefined) {
      held = random() < heldOutFraction;
      side.set(key, held);
    }
    (held ? heldOut : train).push(s);
  }
  return { train, heldOut };
}

// Distillation data for the distilled reranker from benchmark cases (CodeRAG Alg. 2 with the
// ground-truth oracle as teacher): for every case, the merged retrieval candidates the pipeline
// produces (the same query, paths and merge as a completion request), each candidate's feature
// vector, how many of the case's cross-file definitions it contains, and the kept BestFit windows
// with the teacher's consensus pick. One JSONL line per case; models/training reads it.
import type { BenchCase } from './cases';
import { constructDistillationData, definitionsCovered, oracleTeacher, type DistillOptions, type OracleDoc } from './distillData';
import { seededRandom } from './random';
import { FEATURE_COUNT, FEATURE_NAMES, featureMatrix, type FeatureDoc } from '../engine/rerank/features';
import { retrievalScore } from '../engine/rerank/rerankCandidates';
import type { Reranker, RerankDoc, RerankQuery, WindowPick } from '../engine/rerank/types';

/**
 * A reranker that only records what the rerank stage hands it (the query and every candidate in
 * retrieval order) and keeps retrieval order: plugged into an evaluation run, it captures the
 * candidate lists exactly as a completion request sees them.
 */
export class RecordingReranker implements Reranker {
  readonly kind = 'distilled' as const;
  readonly name = 'recorder (keeps retrieval order)';
  last: { query: RerankQuery; docs: FeatureDoc[] } | undefined;

  prepare(query: RerankQuery, docs: readonly RerankDoc[]): Promise<void> {
    this.last = { query, docs: [...docs] };
    return Promise.resolve();
  }

  pick(): Promise<WindowPick> {
    return Promise.resolve({ index: 0 });
  }

  /** The recorded list, cleared (each case takes its own). */
  take(): { query: RerankQuery; docs: FeatureDoc[] } | undefined {
    const out = this.last;
    this.last = undefined;
    return out;
  }
}

/** One JSONL line of distillation data. */
interface DistillCaseRecord {
  task_id: string;
  repository: string;
  lang: string;
  feature_names: readonly string[];
  /** Candidate ids in retrieval order. */
  ids: string[];
  /** [candidates][FEATURE_COUNT], rounded to 5 decimals. */
  features: number[][];
  /** Cross-file definitions of the case each candidate contains (the oracle's criterion). */
  hits: number[];
  /** Kept windows: candidate positions (retrieval order) and the position of the teacher's pick within the window. */
  windows: Array<{ members: number[]; choice: number; votes: number }>;
}

export interface DistillCaseStats {
  cases: number;
  withCandidates: number;
  /** Cases where some candidate contains a cross-file definition (the oracle can teach). */
  teachable: number;
  windows: number;
  subsets: number;
}

/** Alg. 2 over one case's recorded candidate list, with the oracle teacher. */
export async function distillCase(
  c: BenchCase,
  recorded: { query: RerankQuery; docs: FeatureDoc[] },
  options: DistillOptions & { seed: number },
  signal: AbortSignal,
): Promise<{ record: DistillCaseRecord; subsets: number }> {
  const defs = c.metadata.crossfile_defs ?? [];
  const docs: Array<OracleDoc & FeatureDoc> = recorded.docs.map((d) => ({
    ...d,
    path: d.candidate?.snippet.path ?? d.path ?? '',
    score: d.candidate ? retrievalScore(d.candidate) : 0,
  }));
  const matrix = featureMatrix(recorded.query, docs);
  const features = docs.map((_, r) =>
    Array.from(matrix.subarray(r * FEATURE_COUNT, (r + 1) * FEATURE_COUNT), (v) => Math.round(v * 1e5) / 1e5),
  );
  const hits = docs.map((d) => definitionsCovered(d, defs));
  const position = new Map(docs.map((d, i) => [d.id, i]));
  const { samples, stats } = await constructDistillationData(
    recorded.query,
    docs,
    oracleTeacher(() => defs),
    { ...options, random: options.random ?? seededRandom(options.seed) },
    signal,
  );
  return {
    record: {
      task_id: c.metadata.task_id,
      repository: c.metadata.repository,
      lang: c.metadata.lang ?? (c.metadata.file.endsWith('.java') ? 'java' : 'python'),
      feature_names: FEATURE_NAMES,
      ids: docs.map((d) => d.id),
      features,
      hits,
      windows: samples.map((s) => ({ members: s.candidates.map((d) => position.get(d.id)!), choice: s.choice, votes: s.votes })),
    },
    subsets: stats.subsets,
  };
}

/** A stable 32-bit seed from a task id (each case draws its own subsets reproducibly). */
export function seedOf(taskId: string): number {
  let h = 2166136261;
  for (let i = 0; i < taskId.length; i++) h = Math.imul(h ^ taskId.charCodeAt(i), 16777619);
  return h >>> 0;
}

// Benchmark files (docs/BENCHMARKS.md): CCEval line-format cases in, predictions out, one JSON
// object per line. The reader accepts files written by other tools, where only prompt,
// groundtruth, metadata.task_id, metadata.repository and metadata.file are required.
import { createReadStream, promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Lang } from '../engine/kb/types';
import { langOfPath } from '../engine/kb/parsers';
import type { CrossfileDef, RetrievedContext } from './metrics';
import { UserError } from '../engine/util/errors';
import { throwIfAborted } from '../engine/util/errors';

interface CaseMetadata {
  task_id: string;
  repository: string;
  file: string;
  groundtruth_start_lineno?: number;
  /** Dot cases: the 0-based column of the cursor on that line (right after the `.`); absent: column 0. */
  groundtruth_start_col?: number;
  lang?: Lang;
  crossfile_defs?: CrossfileDef[];
  /** `body` for method-body cases (Rambo style); line cases leave it out. */
  task?: 'line' | 'body';
  /** Method-body cases (Rambo style). */
  function_name?: string;
  class_name?: string;
  /** Fields written by other tools are kept as they are. */
  [key: string]: unknown;
}

export interface BenchCase {
  prompt: string;
  groundtruth: string;
  /** Absent in some other tools' files; treated as ''. */
  right_context?: string;
  metadata: CaseMetadata;
}

type ContextSource = 'sparse' | 'dense' | 'dataflow' | (string & {});

export interface PredictionContext extends RetrievedContext {
  source: ContextSource;
}

/** Per-stage wall times in milliseconds (query, sparse, dense, dataflow, rerank, prompt, generate, total, ...). */
export type StageTimings = Record<string, number>;

export interface Prediction {
  task_id: string;
  prediction: string;
  /** The top-u pieces of knowledge in the order they entered the prompt. */
  contexts: PredictionContext[];
  timings_ms: StageTimings;
  /**
   * Whether the prediction dereferences a name its receiver (typed by the repository) does not
   * have (check/repairCompletion); absent when the run could not tell (no generation).
   */
  unknown_member?: boolean;
  /**
   * ProCC's stage (methods with similar code): the arm, how it was chosen, the bandit's context, its scores, each perspective's top-1
   * window and, for a bandit, the reward it was given.
   */
  similar?: {
    arm: string;
    chosen_by: string;
    features: number[];
    scores?: Record<string, number | undefined>;
    tops?: Record<string, string>;
    reward?: number;
  };
  /** Whether the show gate let the prediction through (absent: the gate did not run, or there was nothing to show). */
  shown?: boolean;
  /** The show gate's score, threshold and features (scripts/fitGate.ts fits on them). */
  gate?: { score: number; threshold: number; logprobs: boolean; features: Record<string, number> };
}

/** A malformed line of a benchmark file; the message names the file and the 1-based line. */
class BenchFileError extends UserError {
  constructor(
    readonly file: string,
    readonly lineNumber: number,
    detail: string,
  ) {
    super(`${file}:${lineNumber}: ${detail}`);
    this.name = 'BenchFileError';
  }
}

export function isBenchFileError(e: unknown): e is BenchFileError {
  return e instanceof BenchFileError;
}

/** The language of a case: metadata.lang, else the file's extension. */
/** A method-body case: `metadata.task` = body (files of other tools: a function name and a multi-line ground truth). */
export function isBodyCase(c: BenchCase): boolean {
  if (c.metadata.task !== undefined) return c.metadata.task === 'body';
  return typeof c.metadata.function_name === 'string' && c.groundtruth.includes('\n');
}

export function caseLang(c: BenchCase): Lang | undefined {
  const lang = c.metadata.lang;
  if (lang === 'python' || lang === 'java') return lang;
  return langOfPath(c.metadata.file);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validate one parsed case; returns the reason it is malformed, or the case. */
export function validateCase(value: unknown): BenchCase | string {
  if (!isObject(value)) return 'expected a JSON object';
  if (typeof value.prompt !== 'string') return '"prompt" must be a string';
  if (typeof value.groundtruth !== 'string') return '"groundtruth" must be a string';
  if (value.right_context !== undefined && typeof value.right_context !== 'string') return '"right_context" must be a string when present';
  const m = value.metadata;
  if (!isObject(m)) return '"metadata" must be an object';
  for (const key of ['task_id', 'repository', 'file'] as const) {
    if (typeof m[key] !== 'string' || m[key] === '') return `"metadata.${key}" must be a non-empty string`;
  }
  if (m.lang !== undefined && m.lang !== 'python' && m.lang !== 'java') return '"metadata.lang" must be "python" or "java" when present';
  if (
    m.groundtruth_start_lineno !== undefined &&
    (!Number.isInteger(m.groundtruth_start_lineno) || (m.groundtruth_start_lineno as number) < 0)
  ) {
    return '"metadata.groundtruth_start_lineno" must be a non-negative integer when present';
  }
  if (m.groundtruth_start_col !== undefined && (!Number.isInteger(m.groundtruth_start_col) || (m.groundtruth_start_col as number) < 0)) {
    return '"metadata.groundtruth_start_col" must be a non-negative integer when present';
  }
  if (m.crossfile_defs !== undefined) {
    if (!Array.isArray(m.crossfile_defs)) return '"metadata.crossfile_defs" must be an array when present';
    for (const [i, d] of m.crossfile_defs.entries()) {
      if (!isObject(d) || typeof d.name !== 'string' || typeof d.file !== 'string')
        return `"metadata.crossfile_defs[${i}]" needs string "name" and "file"`;
    }
  }
  return value as unknown as BenchCase;
}

export function validatePrediction(value: unknown): Prediction | string {
  if (!isObject(value)) return 'expected a JSON object';
  if (typeof value.task_id !== 'string' || value.task_id === '') return '"task_id" must be a non-empty string';
  if (typeof value.prediction !== 'string') return '"prediction" must be a string';
  const contexts = value.contexts ?? [];
  if (!Array.isArray(contexts)) return '"contexts" must be an array when present';
  for (const [i, c] of contexts.entries()) {
    if (!isObject(c) || typeof c.path !== 'string' || typeof c.text !== 'string') return `"contexts[${i}]" needs string "path" and "text"`;
  }
  const timings = value.timings_ms ?? {};
  if (!isObject(timings)) return '"timings_ms" must be an object when present';
  for (const [stage, ms] of Object.entries(timings)) {
    if (typeof ms !== 'number' || !Number.isFinite(ms)) return `"timings_ms.${stage}" must be a number`;
  }
  if (value.unknown_member !== undefined && typeof value.unknown_member !== 'boolean')
    return '"unknown_member" must be a boolean when present';
  if (value.shown !== undefined && typeof value.shown !== 'boolean') return '"shown" must be a boolean when present';
  const similar =
    isObject(value.similar) && typeof value.similar.arm === 'string' && Array.isArray(value.similar.features)
      ? (value.similar as unknown as Prediction['similar'])
      : undefined;
  return {
    task_id: value.task_id,
    prediction: value.prediction,
    contexts: contexts as PredictionContext[],
    timings_ms: timings as StageTimings,
    ...(typeof value.unknown_member === 'boolean' ? { unknown_member: value.unknown_member } : {}),
    ...(similar ? { similar } : {}),
    ...(typeof value.shown === 'boolean' ? { shown: value.shown } : {}),
    ...(isObject(value.gate) && typeof value.gate.score === 'number' && isObject(value.gate.features)
      ? { gate: value.gate as unknown as NonNullable<Prediction['gate']> }
      : {}),
  };
}

/** Parse JSONL text; blank lines are skipped, every other line must validate. */
export function parseJsonl<T>(text: string, file: string, validate: (v: unknown) => T | string): T[] {
  const out: T[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    out.push(parseLine(line, file, i + 1, validate));
  }
  return out;
}

function parseLine<T>(line: string, file: string, lineNumber: number, validate: (v: unknown) => T | string): T {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    throw new BenchFileError(file, lineNumber, `malformed JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const result = validate(value);
  if (typeof result === 'string') throw new BenchFileError(file, lineNumber, result);
  return result;
}

/** Stream a JSONL file line by line (benchmark files can be large). */
async function readJsonl<T>(path: string, validate: (v: unknown) => T | string, signal?: AbortSignal): Promise<T[]> {
  try {
    await fs.access(path);
  } catch {
    throw new UserError(`file not found: ${path}`);
  }
  const out: T[] = [];
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const raw of lines) {
    n++;
    throwIfAborted(signal);
    const line = raw.trim();
    if (line === '') continue;
    out.push(parseLine(line, path, n, validate));
  }
  return out;
}

export function readCases(path: string, signal?: AbortSignal): Promise<BenchCase[]> {
  return readJsonl(path, validateCase, signal);
}

export function readPredictions(path: string, signal?: AbortSignal): Promise<Prediction[]> {
  return readJsonl(path, validatePrediction, signal);
}

/** Cases as JSONL text; the key order follows docs/BENCHMARKS.md. */
export function formatCases(cases: readonly BenchCase[]): string {
  return cases
    .map(
      (c) =>
        JSON.stringify({ prompt: c.prompt, groundtruth: c.groundtruth, right_context: c.right_context ?? '', metadata: c.metadata }) + '\n',
    )
    .join('');
}

export async function writeCases(path: string, cases: readonly BenchCase[]): Promise<void> {
  await fs.writeFile(path, formatCases(cases), 'utf8');
}

export function formatPrediction(p: Prediction): string {
  return (
    JSON.stringify({
      task_id: p.task_id,
      prediction: p.prediction,
      contexts: p.contexts,
      timings_ms: p.timings_ms,
      ...(p.unknown_member !== undefined ? { unknown_member: p.unknown_member } : {}),
      ...(p.similar ? { similar: p.similar } : {}),
      ...(p.shown !== undefined ? { shown: p.shown } : {}),
      ...(p.gate ? { gate: p.gate } : {}),
    }) + '\n'
  );
}

/**
 * Appends predictions to a JSONL file as they are produced, so a long `coderag eval` run keeps
 * what it finished if it stops. `open` truncates the file; `taskIds` lists what it already holds
 * when opened with `resume`.
 */
export class PredictionWriter {
  private constructor(
    private readonly handle: fs.FileHandle,
    readonly taskIds: Set<string>,
  ) {}

  static async open(path: string, options: { resume?: boolean } = {}): Promise<PredictionWriter> {
    const done = new Set<string>();
    if (options.resume) {
      let text = '';
      try {
        text = await fs.readFile(path, 'utf8');
      } catch {
        // Nothing to resume.
      }
      // A run killed mid-write leaves a partial last line: keep only whole, valid lines.
      const whole = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
      for (const p of parseJsonl(whole, path, validatePrediction)) done.add(p.task_id);
      await fs.writeFile(path, whole, 'utf8');
      return new PredictionWriter(await fs.open(path, 'a'), done);
    }
    return new PredictionWriter(await fs.open(path, 'w'), done);
  }

  async write(p: Prediction): Promise<void> {
    await this.handle.appendFile(formatPrediction(p), 'utf8');
    this.taskIds.add(p.task_id);
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

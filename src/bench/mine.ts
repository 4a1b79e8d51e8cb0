// `bench build`: mine cross-file completion cases from repositories into CCEval's line format
// (docs/BENCHMARKS.md). Line cases follow CCEval's construction (a line that uses a name defined
// in another file of the repository); body cases follow Rambo (a method body that does).
//
// Text and reassembly: a case's file text is the file decoded as UTF-8, BOM removed, line breaks
// normalised to "\n". For a case whose target spans rows [first, last] (0-based):
//   prompt        = text before row `first` (ends with "\n", or '' when first = 0)
//   groundtruth   = rows first..last joined by "\n" (no trailing newline)
//   right_context = text after the "\n" that ends row `last`
// so `prompt + groundtruth + "\n" + right_context === text` always holds; rows not ended by a
// newline (the last line of a file without one) are never targets.
//
// Line cases: a row of a non-test file (isTestPath) that uses a cross-file definition (see
// crossfile.ts) and is not blank, a comment line, part of an import/package statement, or part
// of a def/class/method header (the definition line itself). Decorator rows may be targets.
// Body cases: functions and methods at module or class level (not nested in a function) whose
// signature ends its line (Python: the `:` row; Java: the `{` row, with the `}` alone on its row).
// first = the row after the signature; last = the function's last row (Python, so a docstring is
// part of the body) or the row before the `}` (Java, whose right_context starts with the `}`).
// Kept when the body has BODY_MIN_LINES..BODY_MAX_LINES normalised lines (metrics.normalizedLines)
// and uses a cross-file definition; never constructors (`__init__`, `__new__`, Java
// constructors), property accessors (@property, @x.setter ...), Java get*/set*/is* methods.
// Sampling: candidates in (file path, row) order; per repository N drawn uniformly without
// replacement with a PRNG seeded by (seed, repository, lang, task); task ids `<repo>/<n>` follow
// the candidates' order.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { Parsers } from '../engine/kb/parsers';
import { decodeSource } from '../engine/kb/scan';
import type { Lang } from '../engine/kb/types';
import { throwIfAborted } from '../engine/util/errors';
import type { BenchCase } from './cases';
import { analyzeFile, isTestPath, CrossfileSymbols, type FileAnalysis } from './crossfile';

export { isTestPath };
import type { CrossfileDef } from './metrics';
import { normalizedLines } from './metrics';
import { sampleIndices, seededRandom } from './random';

export type MineTask = 'line' | 'body' | 'dot';

interface MineOptions {
  lang: Lang;
  task: MineTask;
  /** Cases drawn per repository, uniformly from all candidates (all of them when fewer). */
  perRepo: number;
  seed: string | number;
}

/** Method-body cases have this many normalised (non-empty, non-comment) lines, bounds included. */
const BODY_MIN_LINES = 3;
const BODY_MAX_LINES = 40;

/** The text cases are cut from: BOM removed (by decodeSource) and line breaks normalised to "\n". */
export function caseText(decoded: string): string {
  return decoded.includes('\r') ? decoded.replace(/\r\n?/g, '\n') : decoded;
}

/** Offsets where each row starts; a final entry past the end when the text ends with "\n". */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** The case parts for rows first..last, or undefined when row `last` has no terminating newline. */
export function cutCase(
  text: string,
  starts: readonly number[],
  first: number,
  last: number,
): { prompt: string; groundtruth: string; rightContext: string } | undefined {
  const begin = starts[first];
  const next = starts[last + 1];
  if (begin === undefined || next === undefined) return undefined;
  return { prompt: text.slice(0, begin), groundtruth: text.slice(begin, next - 1), rightContext: text.slice(next) };
}

interface Candidate {
  file: string;
  first: number;
  last: number;
  defs: CrossfileDef[];
  functionName?: string;
  className?: string;
}

export interface RepoMineResult {
  repository: string;
  /** Non-test files of the language that were analysed. */
  files: number;
  candidates: number;
  cases: BenchCase[];
  elapsedMs: number;
}

/** Every candidate of one repository (sorted by file, then row) and the sampled cases. */
export async function mineRepository(
  kb: KnowledgeBase,
  parsers: Parsers,
  repository: string,
  options: MineOptions,
  signal?: AbortSignal,
): Promise<RepoMineResult> {
  const start = performance.now();
  const symbols = new CrossfileSymbols(kb);
  const texts = new Map<string, { text: string; starts: number[] }>();
  const candidates: Candidate[] = [];
  let files = 0;
  for (const path of kb.paths()) {
    throwIfAborted(signal);
    const x = kb.file(path);
    if (!x || x.lang !== options.lang || isTestPath(path)) continue;
    if (options.lang === 'python' && !path.endsWith('.py')) continue;
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(join(kb.repoRoot, path));
    } catch {
      continue; // removed since indexing
    }
    const decoded = decodeSource(bytes);
    if (!decoded.ok) continue;
    files++;
    const text = caseText(decoded.text);
    const starts = lineStarts(text);
    const analysis = analyzeFile(symbols, kb, parsers, path, options.lang, text);
    const found =
      options.task === 'body'
        ? bodyCandidates(analysis, text, starts, options.lang)
        : options.task === 'dot'
          ? lineCandidates(analysis, text, starts).filter((c) => dotColumn(lineOf(text, starts, c.first), c.defs) !== undefined)
          : lineCandidates(analysis, text, starts);
    if (found.length > 0) texts.set(path, { text, starts });
    candidates.push(...found);
  }
  const chosen = sampleIndices(
    candidates.length,
    options.perRepo,
    seededRandom(`${options.seed}\0${repository}\0${options.lang}\0${options.task}`),
  );
  const cases: BenchCase[] = [];
  for (const index of chosen) {
    const c = candidates[index]!;
    const t = texts.get(c.file)!;
    const cut = cutCase(t.text, t.starts, c.first, c.last)!;
    const metadata: BenchCase['metadata'] = {
      task_id: `${repository}/${cases.length}`,
      repository,
      file: c.file,
      groundtruth_start_lineno: c.first,
      lang: options.lang,
      crossfile_defs: c.defs,
    };
    if (options.task === 'body') metadata.task = 'body';
    if (c.functionName !== undefined) metadata.function_name = c.functionName;
    if (c.className !== undefined) metadata.class_name = c.className;
    if (options.task === 'dot') {
      // The cursor right after the dot of the first member use of a cross-file definition.
      const col = dotColumn(cut.groundtruth, c.defs)!;
      metadata.groundtruth_start_col = col;
      cases.push({
        prompt: cut.prompt + cut.groundtruth.slice(0, col),
        groundtruth: cut.groundtruth.slice(col),
        right_context: cut.rightContext,
        metadata,
      });
      continue;
    }
    cases.push({ prompt: cut.prompt, groundtruth: cut.groundtruth, right_context: cut.rightContext, metadata });
  }
  return { repository, files, candidates: candidates.length, cases, elapsedMs: performance.now() - start };
}

function lineOf(text: string, starts: readonly number[], row: number): string {
  return text.slice(starts[row] ?? 0, (starts[row + 1] ?? text.length + 1) - 1);
}

/**
 * Dot cases: the 0-based column right after the `.` of the first `x.name` on the line where name
 * is one of the row's cross-file definitions (code only: strings and comments are blanked first).
 */
export function dotColumn(line: string, defs: readonly CrossfileDef[]): number | undefined {
  const code = line.replace(/(["'])(?:\\.|(?!\1).)*\1/g, (s) => ' '.repeat(s.length)).replace(/(#|\/\/).*$/, (s) => ' '.repeat(s.length));
  const names = new Set(defs.map((d) => d.name));
  for (const m of code.matchAll(/[\p{L}\p{N}_$)\]]\.([\p{L}_$][\p{L}\p{N}_$]*)/gu)) {
    if (names.has(m[1]!)) return (m.index ?? 0) + 2;
  }
  return undefined;
}

function lineCandidates(a: FileAnalysis, text: string, starts: readonly number[]): Candidate[] {
  const out: Candidate[] = [];
  const rows = [...a.defsByRow.keys()].sort((x, y) => x - y);
  for (const row of rows) {
    if (a.excludedRows.has(row)) continue;
    const cut = cutCase(text, starts, row, row);
    if (!cut) continue;
    const line = cut.groundtruth.trim();
    if (line === '' || normalizedLines(line, a.lang).length === 0) continue;
    out.push({ file: a.path, first: row, last: row, defs: a.defsByRow.get(row)! });
  }
  return out;
}

function bodyCandidates(a: FileAnalysis, text: string, starts: readonly number[], lang: Lang): Candidate[] {
  const out: Candidate[] = [];
  const spans = [...a.functions].sort((x, y) => x.bodyFirstRow - y.bodyFirstRow);
  for (const span of spans) {
    if (span.excluded || span.bodyLastRow < span.bodyFirstRow) continue;
    const cut = cutCase(text, starts, span.bodyFirstRow, span.bodyLastRow);
    if (!cut) continue;
    const n = normalizedLines(cut.groundtruth, lang).length;
    if (n < BODY_MIN_LINES || n > BODY_MAX_LINES) continue;
    const defs: CrossfileDef[] = [];
    const seen = new Set<string>();
    for (let row = span.bodyFirstRow; row <= span.bodyLastRow; row++) {
      for (const d of a.defsByRow.get(row) ?? []) {
        const key = `${d.file}\0${d.name}\0${d.line}\0${d.kind}`;
        if (seen.has(key)) continue;
        seen.add(key);
        defs.push(d);
      }
    }
    if (defs.length === 0) continue;
    const c: Candidate = { file: a.path, first: span.bodyFirstRow, last: span.bodyLastRow, defs, functionName: span.name };
    if (span.className !== undefined) c.className = span.className;
    out.push(c);
  }
  return out;
}

/** Repository folders under `reposDir`: its visible subfolders (links to folders too), sorted by name. */
export async function listRepositories(reposDir: string): Promise<string[]> {
  const entries = await fs.readdir(reposDir, { withFileTypes: true });
  const out: string[] = [];
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    if (e.isDirectory()) out.push(e.name);
    else if (e.isSymbolicLink()) {
      const st = await fs.stat(join(reposDir, e.name)).catch(() => undefined);
      if (st?.isDirectory()) out.push(e.name);
    }
  }
  return out.sort();
}

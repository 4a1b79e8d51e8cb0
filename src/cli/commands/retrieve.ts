// `coderag retrieve <repo> <file>:<line>[:<col>]`: CodeRAG's query construction and multi-path
// retrieval (sections 2.2-2.2.1) for one cursor, printing the query, each path's candidates with
// scores, the merged list and the timings.
import { showControlChars, terminalJson } from '../../engine/util/outsideText';
import { existsSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, positiveInt, UsageError } from '../command';
import { readCursorFile, requireRepo } from '../context';
import { openModels, preparedPaths } from '../pipelineHost';
import { indexedKnowledgeBase, indexOptions } from './index';
import { langOfPath } from '../../engine/kb/parsers';
import { isOutsideRelative } from '../../engine/kb/scan';
import type { QueryStrategy } from '../../engine/query/types';
import { prefixAt, type UnfinishedFile } from '../../engine/query/unfinishedFile';
import type { Candidate, PathName, RetrievalTrace, ScoredSnippet } from '../../engine/retrieve/types';
import { createPipeline, PIPELINE_DEFAULTS, resolveOptions } from '../../engine/pipeline';
import { causalLMProber } from '../../engine/index/pipelineAdapters';
import { UserError } from '../../engine/util/errors';

const PATH_ALIASES: Record<string, PathName> = {
  s: 'sparse',
  sparse: 'sparse',
  d: 'dense',
  dense: 'dense',
  df: 'dataflow',
  dataflow: 'dataflow',
  rg1: 'rg1',
};
const QUERIES: readonly QueryStrategy[] = ['probe', 'last3', 'last10', 'jaccard'];

interface CursorSpec {
  file: string;
  line: number;
  column?: number;
}

/** `path/to/file.py:12` or `path/to/file.py:12:5` (1-based line and column). */
export function parseCursor(spec: string): CursorSpec {
  const m = /^(.+?):(\d+)(?::(\d+))?$/.exec(spec);
  if (!m) throw new UsageError(`expected <file>:<line>[:<col>], got "${spec}"`);
  const line = Number(m[2]);
  const column = m[3] === undefined ? undefined : Number(m[3]);
  if (line < 1 || (column !== undefined && column < 1)) throw new UsageError('line and column are 1-based');
  return { file: m[1]!, line, ...(column !== undefined ? { column } : {}) };
}

/**
 * The text before a 1-based cursor. A line past the end of the file (or a column past the end of
 * its line) is an error: silently using the end would retrieve for a cursor the user did not give.
 */
export function prefixAtCursor(text: string, cursor: CursorSpec): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const lineText = lines[cursor.line - 1];
  if (lineText === undefined)
    throw new UserError(
      `line ${cursor.line} is past the end of ${cursor.file} (${text.endsWith('\n') ? lines.length - 1 : lines.length} lines)`,
    );
  if (cursor.column !== undefined && cursor.column > lineText.length + 1)
    throw new UserError(`column ${cursor.column} is past the end of line ${cursor.line} of ${cursor.file} (${lineText.length} characters)`);
  return prefixAt(text, cursor.line, cursor.column);
}

export function parsePaths(value: string | undefined): PathName[] {
  const names = (value ?? 's,d,df')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const out: PathName[] = [];
  for (const n of names) {
    const path = PATH_ALIASES[n];
    if (!path) throw new UsageError(`unknown retrieval path "${n}" (use s, d, df, rg1)`);
    if (!out.includes(path)) out.push(path);
  }
  if (out.length === 0) throw new UsageError('--paths names no retrieval path');
  return out;
}

export function repoRelative(repo: string, file: string): string {
  const candidates = isAbsolute(file) ? [file] : [join(repo, file), resolve(file)];
  for (const abs of candidates) {
    if (existsSync(abs) && statSync(abs).isFile()) {
      const rel = relative(repo, abs).split('\\').join('/');
      if (isOutsideRelative(rel)) throw new UserError(`${file} is not inside the repository ${repo}`);
      return rel;
    }
  }
  throw new UserError(`file not found: ${file}`);
}

function fmtMs(ms: number): string {
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

function line(r: ScoredSnippet | Candidate, score: string, index: number): string {
  const s = r.snippet;
  return `  ${String(index + 1).padStart(2)}. ${score}  ${s.kind.padEnd(14)} ${s.path}:${s.range.startLine + 1}  ${s.qualifiedName}`;
}

function formatTrace(trace: RetrievalTrace, file: UnfinishedFile, timings: Record<string, number>): string {
  const out: string[] = [];
  const q = trace.query;
  const spans = q.spans.map((s) => `${s.startLine + 1}-${s.endLine + 1}`).join(', ');
  out.push(`Query (${q.strategy}${spans ? `, lines ${spans}` : ''}) for ${file.path}:`);
  if (q.fallbackReason) out.push(`  note: ${q.fallbackReason}`);
  out.push(...(q.text === '' ? ['  (empty)'] : q.text.split('\n').map((l) => `  | ${l}`)));
  for (const p of trace.paths) {
    out.push('', `${p.path}: ${p.status}, ${fmtMs(p.elapsedMs)} (budget ${p.budgetMs} ms)${p.message ? ` — ${p.message}` : ''}`);
    for (const n of p.notes ?? []) out.push(`  ${n}`);
    p.results.forEach((r, i) => out.push(line(r, r.score.toFixed(3), i) + (r.reason && p.path === 'dataflow' ? `   <- ${r.reason}` : '')));
    if (p.status === 'ok' && p.results.length === 0) out.push('  (no results)');
  }
  out.push('', `Merged candidates (${trace.candidates.length}):`);
  trace.candidates.forEach((c, i) => {
    const scores = c.paths.map((p) => `${p}=${(c.scores[p] ?? 0).toFixed(3)}`).join(' ');
    out.push(line(c, scores.padEnd(16), i));
  });
  out.push(
    '',
    `Timings: ${Object.entries(timings)
      .map(([k, v]) => `${k} ${fmtMs(v)}`)
      .join(', ')}`,
  );
  return out.join('\n');
}

export const retrieveCommand: CliCommand = {
  name: 'retrieve',
  usage:
    'retrieve <repo> <file>:<line>[:<col>] [--paths s,d,df,rg1 (default s,d,df)] [--query probe|last3|last10|jaccard ' +
    '(default probe)] [--top-j N] [--json] [--index-dir DIR]',
  async run(argv, signal) {
    const { values, positionals } = parseCommandArgs(argv, {
      ...indexOptions,
      paths: { type: 'string' },
      query: { type: 'string' },
      'top-j': { type: 'string' },
    });
    if (positionals.length !== 2) throw new UsageError('expected a repository folder and <file>:<line>[:<col>]');
    const repo = requireRepo(positionals[0]);
    const cursor = parseCursor(positionals[1]!);
    const paths = parsePaths(values.paths as string | undefined);
    const strategy = (values.query as string | undefined) ?? PIPELINE_DEFAULTS.query.strategy;
    if (!QUERIES.includes(strategy as QueryStrategy)) throw new UsageError(`--query must be one of ${QUERIES.join(', ')}`);
    const topJ = positiveInt(values, 'top-j');

    const path = repoRelative(repo, cursor.file);
    const lang = langOfPath(path);
    if (!lang) throw new UserError(`${path} is not a Python or Java file`);
    const text = await readCursorFile(join(repo, path));
    const file: UnfinishedFile = { path, lang, prefix: prefixAtCursor(text, cursor) };

    const timings: Record<string, number> = {};
    let t = performance.now();
    const { kb } = await indexedKnowledgeBase(repo, values, signal);
    timings.index = performance.now() - t;

    t = performance.now();
    const models = await openModels(
      { lm: strategy === 'probe', encoder: paths.includes('dense') },
      (m) => process.stderr.write(`warning: ${m}\n`),
      signal,
    );
    if (models.lm || models.encoder) timings['load models'] = performance.now() - t;
    try {
      const prepared = await preparedPaths(kb, repo, paths, models.encoder, values['index-dir'] as string | undefined, signal);
      const retrievers = [...prepared.paths.byName.values()];
      try {
        if (retrievers.length === 0) throw new UserError('no retrieval path is available');
        for (const [name, ms] of Object.entries(prepared.prepareMs)) timings[`prepare ${name}`] = ms;
        const prober = models.lm ? causalLMProber(models.lm) : undefined;
        // Retrieval only: no reranker, no model.
        const pipeline = createPipeline(resolveOptions({ query: { strategy: strategy as QueryStrategy }, retrieval: { topJ } }), {
          env: { repo: { retrievers }, ...(prober ? { prober } : {}) },
        });
        const result = await pipeline.complete({ filePath: file.path, lang: file.lang, prefix: file.prefix, suffix: '' }, signal);
        const trace = result.retrieval;
        if (!trace)
          throw new UserError(
            `retrieval failed: ${result.trace.stages.find((st) => st.stage === 'retrieve')?.message ?? 'unknown reason'}`,
          );
        timings.query = result.trace.stages.find((st) => st.stage === 'query')?.elapsedMs ?? 0;
        timings.retrieve = trace.elapsedMs;
        if (values.json) {
          const strip = <T extends { snippet: { item?: unknown } }>(r: T): T => ({ ...r, snippet: { ...r.snippet, item: undefined } });
          const json = {
            repo,
            file: path,
            cursor,
            query: trace.query,
            paths: trace.paths.map((p) => ({ ...p, results: p.results.map(strip) })),
            candidates: trace.candidates.map(strip),
            timings,
          };
          process.stdout.write(terminalJson(json) + '\n');
        } else {
          process.stdout.write(showControlChars(formatTrace(trace, file, timings) + '\n'));
        }
      } finally {
        prepared.paths.dispose();
      }
    } finally {
      kb.dispose();
      await models.registry.dispose().catch(() => undefined);
    }
    return 0;
  },
};

// `coderag retrieve <repo> <file>:<line>[:<col>]`: CodeRAG's query construction and multi-path
// retrieval (sections 2.2-2.2.1) for one cursor, printing the query, each path's candidates with
// scores, the merged list and the timings.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { assetsDir, cacheRoot, modelDevice, parsers, progressPrinter, requireRepo } from '../context';
import { indexedKnowledgeBase, indexOptions } from './index';
import { langOfPath } from '../../engine/kb/parsers';
import { buildQuery } from '../../engine/query/buildQuery';
import type { QueryStrategy } from '../../engine/query/types';
import { prefixAt, type UnfinishedFile } from '../../engine/query/unfinishedFile';
import { DataflowRetriever } from '../../engine/retrieve/dataflow/dataflowRetrieve';
import { multiPathRetrieve } from '../../engine/retrieve/multiPathRetrieve';
import { Rg1Retriever } from '../../engine/retrieve/rg1/rg1Retrieve';
import { SparseRetriever } from '../../engine/retrieve/sparse/sparseRetrieve';
import type { Candidate, PathName, RetrievalTrace, Retriever, ScoredSnippet } from '../../engine/retrieve/types';
import { errorMessage, UserError } from '../../engine/util/errors';
import { indexFolderFor } from '../../engine/kb/store';
import { ModelRegistry, type CausalLM, type Encoder } from '../../engine/models';
import { lmChunkProber } from '../../engine/query/lmChunkProber';
import { DenseRetriever } from '../../engine/retrieve/dense/denseRetrieve';

const PATH_ALIASES: Record<string, PathName> = { s: 'sparse', sparse: 'sparse', d: 'dense', dense: 'dense', df: 'dataflow', dataflow: 'dataflow', rg1: 'rg1' };
const QUERIES: readonly QueryStrategy[] = ['probe', 'last3', 'last10', 'jaccard'];

export interface CursorSpec {
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

export function parsePaths(value: string | undefined): PathName[] {
  const names = (value ?? 's,d,df').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const out: PathName[] = [];
  for (const n of names) {
    const path = PATH_ALIASES[n];
    if (!path) throw new UsageError(`unknown retrieval path "${n}" (use s, d, df, rg1)`);
    if (!out.includes(path)) out.push(path);
  }
  if (out.length === 0) throw new UsageError('--paths names no retrieval path');
  return out;
}

function repoRelative(repo: string, file: string): string {
  const candidates = isAbsolute(file) ? [file] : [join(repo, file), resolve(file)];
  for (const abs of candidates) {
    if (existsSync(abs) && statSync(abs).isFile()) {
      const rel = relative(repo, abs).split('\\').join('/');
      if (rel.startsWith('..')) throw new UserError(`${file} is not inside the repository ${repo}`);
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
  out.push('', `Timings: ${Object.entries(timings).map(([k, v]) => `${k} ${fmtMs(v)}`).join(', ')}`);
  return out.join('\n');
}

/** The shipped models the CLI's probing and dense path use; a model that does not load is a warning, and its stage falls back. */
export async function openModels(
  need: { lm: boolean; encoder: boolean },
  warn: (message: string) => void,
): Promise<{ registry: ModelRegistry; lm?: CausalLM; encoder?: Encoder }> {
  const registry = new ModelRegistry({ modelsDir: join(assetsDir(), 'models'), threads: 2, device: modelDevice() });
  const out: { registry: ModelRegistry; lm?: CausalLM; encoder?: Encoder } = { registry };
  if (need.lm) {
    try {
      out.lm = await registry.causalLM();
    } catch (e) {
      warn(`probing model not available (${errorMessage(e)}); the query falls back to the Jaccard-closest chunk`);
    }
  }
  if (need.encoder) {
    try {
      out.encoder = await registry.encoder();
    } catch (e) {
      warn(`dense retrieval skipped: code encoder not available (${errorMessage(e)})`);
    }
  }
  return out;
}

export const retrieveCommand: CliCommand = {
  name: 'retrieve',
  usage: 'retrieve <repo> <file>:<line>[:<col>] [--paths s,d,df,rg1 (default s,d,df)] [--query probe|last3|last10|jaccard (default probe)] [--top-j N] [--json] [--index-dir DIR]',
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { ...indexOptions, paths: { type: 'string' }, query: { type: 'string' }, 'top-j': { type: 'string' } });
    if (positionals.length !== 2) throw new UsageError('expected a repository folder and <file>:<line>[:<col>]');
    const repo = requireRepo(positionals[0]);
    const cursor = parseCursor(positionals[1]!);
    const paths = parsePaths(values.paths as string | undefined);
    const strategy = (values.query as string | undefined) ?? 'probe';
    if (!QUERIES.includes(strategy as QueryStrategy)) throw new UsageError(`--query must be one of ${QUERIES.join(', ')}`);
    const topJ = values['top-j'] === undefined ? 15 : Number(values['top-j']);
    if (!Number.isInteger(topJ) || topJ < 1) throw new UsageError('--top-j must be a positive integer');

    const path = repoRelative(repo, cursor.file);
    const lang = langOfPath(path);
    if (!lang) throw new UserError(`${path} is not a Python or Java file`);
    const text = readFileSync(join(repo, path), 'utf8');
    const file: UnfinishedFile = { path, lang, prefix: prefixAt(text, cursor.line, cursor.column) };

    const timings: Record<string, number> = {};
    let t = performance.now();
    const { kb } = await indexedKnowledgeBase(repo, values);
    timings.index = performance.now() - t;

    t = performance.now();
    const models = await openModels({ lm: strategy === 'probe', encoder: paths.includes('dense') }, (m) => process.stderr.write(`warning: ${m}\n`));
    if (models.lm || models.encoder) timings['load models'] = performance.now() - t;
    const retrievers: Array<Retriever & { dispose(): void }> = [];
    const embedding = progressPrinter('embedding');
    for (const p of paths) {
      if (p === 'sparse') retrievers.push(new SparseRetriever(kb));
      else if (p === 'dataflow') retrievers.push(new DataflowRetriever(kb, await parsers()));
      else if (p === 'rg1') retrievers.push(new Rg1Retriever(kb));
      else if (p === 'dense' && models.encoder) {
        retrievers.push(new DenseRetriever(kb, models.encoder, { indexFolder: indexFolderFor(cacheRoot(values['index-dir'] as string | undefined), repo), onProgress: (x) => embedding.update({ done: x.done, total: x.total, path: '' }) }));
      }
    }
    try {
      if (retrievers.length === 0) throw new UserError('no retrieval path is available');
      for (const r of retrievers) {
        t = performance.now();
        await r.prepare?.();
        timings[`prepare ${r.name}`] = performance.now() - t;
      }
      embedding.done();
      const query = await buildQuery(file.prefix, { strategy: strategy as QueryStrategy }, models.lm ? lmChunkProber(models.lm) : undefined);
      timings.query = query.elapsedMs ?? 0;
      const trace = await multiPathRetrieve(retrievers, { file, query, topJ });
      timings.retrieve = trace.elapsedMs;
      if (values.json) {
        const strip = <T extends { snippet: { item?: unknown } }>(r: T): T => ({ ...r, snippet: { ...r.snippet, item: undefined } });
        const json = { repo, file: path, cursor, query, paths: trace.paths.map((p) => ({ ...p, results: p.results.map(strip) })), candidates: trace.candidates.map(strip), timings };
        process.stdout.write(JSON.stringify(json, null, 2) + '\n');
      } else {
        process.stdout.write(formatTrace(trace, file, timings) + '\n');
      }
    } finally {
      for (const r of retrievers) r.dispose();
      kb.dispose();
      await models.registry.dispose().catch(() => undefined);
    }
    return 0;
  },
};

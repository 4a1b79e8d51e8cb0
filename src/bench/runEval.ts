// `coderag eval` / `eval compare` (docs/BENCHMARK.md): index every repository of the cases once,
// prepare the retrieval paths the methods need, and run every method on every case of that
// repository, handing each prediction to its method's sink as soon as it is made.
import { promises as fs } from 'node:fs';
import { join } from 'node:path';
import type { BenchCase, Prediction } from './cases';
import { runCase, type CaseEnvironment, type MethodSpec, type RerankMode, type RunOptions } from './runMethod';
import { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { Parsers } from '../engine/kb/parsers';
import type { ChunkProber } from '../engine/query/probeQuery';
import type { ModelClient } from '../engine/generate/types';
import type { Reranker } from '../engine/rerank/types';
import type { DenseEncoder } from '../engine/retrieve/dense/denseRetrieve';
import type { PathName } from '../engine/retrieve/types';
import { createRetrievalPaths, type RetrievalPaths } from '../engine/pipeline';
import { RepoMethods } from '../engine/body/RepoMethods';
import type { Tokenize } from '../engine/body/tokens';
import { isBodyCase } from './cases';
import { errorMessage, isCancellationError, throwIfAborted, UserError } from '../engine/util/errors';

export interface EvalProgress {
  phase: 'index' | 'prepare' | 'case';
  repo: string;
  method?: string;
  /** Cases finished over the whole run (phase 'case'). */
  done: number;
  total: number;
  detail?: string;
}

export interface EvalRunInput {
  cases: readonly BenchCase[];
  reposDir: string;
  methods: readonly MethodSpec[];
  options: RunOptions;
  parsers: Parsers;
  /** Where a repository's index (and dense vectors) are kept; omit to index in memory. */
  indexFolderFor?: (repoRoot: string) => string;
  encoder?: DenseEncoder;
  prober?: ChunkProber;
  model?: ModelClient;
  /** Rambo's signature tokens (the completion model's tokenizer); absent: subword tokens. */
  tokenize?: Tokenize;
  rerankers?: Partial<Record<Exclude<RerankMode, 'none'>, Reranker>>;
  write(method: string, prediction: Prediction): Promise<void>;
  onProgress?(p: EvalProgress): void;
}

export interface RepoReport {
  repository: string;
  files: number;
  items: number;
  indexMs: number;
  /** Index-time work of each path (RG-1 windows, TF-IDF, embeddings). */
  prepareMs: Partial<Record<PathName, number>>;
}

export interface MethodReport {
  cases: number;
  /** Degradations by kind (a path's timeout, a probing fallback, a failed generate ...), with counts. */
  problems: Record<string, number>;
  elapsedMs: number;
}

export interface EvalRunReport {
  repos: RepoReport[];
  methods: Record<string, MethodReport>;
  elapsedMs: number;
}

/** Cases grouped by repository, in first-seen order. */
export function groupByRepository(cases: readonly BenchCase[]): Map<string, BenchCase[]> {
  const out = new Map<string, BenchCase[]>();
  for (const c of cases) {
    const list = out.get(c.metadata.repository);
    if (list) list.push(c);
    else out.set(c.metadata.repository, [c]);
  }
  return out;
}

function problemKey(p: string): string {
  // Counts group by kind, not by the exact timing in the message.
  return p.replace(/[\d.]+ ms/g, 'N ms').slice(0, 160);
}

export async function runEval(input: EvalRunInput, signal: AbortSignal): Promise<EvalRunReport> {
  const start = performance.now();
  const groups = groupByRepository(input.cases);
  const missing: string[] = [];
  for (const repo of groups.keys()) {
    const ok = await fs.stat(join(input.reposDir, repo)).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!ok) missing.push(repo);
  }
  if (missing.length > 0) throw new UserError(`repository folders missing under ${input.reposDir}: ${missing.join(', ')}`);
  const needed = new Set<PathName>(input.methods.flatMap((m) => m.paths));
  if (needed.has('dense') && !input.encoder) throw new UserError('the dense path needs the code encoder, which is not loaded');
  const report: EvalRunReport = { repos: [], methods: {}, elapsedMs: 0 };
  for (const m of input.methods) report.methods[m.name] = { cases: 0, problems: {}, elapsedMs: 0 };
  const total = input.cases.length * input.methods.length;
  let done = 0;

  for (const [repo, cases] of groups) {
    throwIfAborted(signal);
    const repoRoot = join(input.reposDir, repo);
    const t0 = performance.now();
    input.onProgress?.({ phase: 'index', repo, done, total });
    const indexFolder = input.indexFolderFor?.(repoRoot);
    const kb = await KnowledgeBase.open({ repoRoot, parsers: input.parsers, ...(indexFolder ? { indexFolder } : {}) });
    let paths: RetrievalPaths | undefined;
    let repoMethods: RepoMethods | undefined;
    try {
      await kb.index(undefined, signal);
      const repoReport: RepoReport = { repository: repo, files: kb.paths().length, items: kb.items().length, indexMs: performance.now() - t0, prepareMs: {} };
      paths = createRetrievalPaths(kb, input.parsers, {
        paths: [...needed],
        ...(input.encoder
          ? { dense: { encoder: input.encoder, ...(indexFolder ? { indexFolder } : {}), onProgress: (p) => input.onProgress?.({ phase: 'prepare', repo, done, total, detail: `dense ${p.done}/${p.total}` }) } }
          : {}),
      });
      for (const path of ['sparse', 'dense', 'dataflow', 'rg1'] as const) {
        const r = paths.byName.get(path);
        if (!r) continue;
        input.onProgress?.({ phase: 'prepare', repo, done, total, detail: path });
        const p0 = performance.now();
        await r.prepare?.(signal);
        repoReport.prepareMs[path] = performance.now() - p0;
      }
      const retrievers = paths.byName;
      // Rambo's methods, and every method on body cases (the body mode), read the repository's methods.
      if (input.methods.some((m) => m.rambo) || cases.some(isBodyCase)) repoMethods = new RepoMethods(kb, input.tokenize);
      report.repos.push(repoReport);
      const env: CaseEnvironment = {
        receivers: paths.receivers,
        retriever: (path) => {
          const r = retrievers.get(path);
          if (!r) throw new Error(`retrieval path ${path} was not prepared`);
          return r;
        },
        ...(input.prober ? { prober: input.prober } : {}),
        ...(input.model ? { model: input.model } : {}),
        rerankers: input.rerankers ?? {},
        queryMemo: new Map(),
        ...(repoMethods ? { body: { parsers: input.parsers, repo: () => repoMethods, ...(input.tokenize ? { tokenize: input.tokenize } : {}) } } : {}),
      };
      for (const method of input.methods) {
        const m0 = performance.now();
        const mr = report.methods[method.name]!;
        for (const c of cases) {
          throwIfAborted(signal);
          let prediction: Prediction;
          let problems: string[];
          try {
            ({ prediction, problems } = await runCase(c, method, env, input.options, signal));
          } catch (e) {
            if (isCancellationError(e) || signal.aborted) throw e;
            if (e instanceof UserError) throw e;
            // One broken case does not end the run: it is scored as an empty prediction.
            prediction = { task_id: c.metadata.task_id, prediction: '', contexts: [], timings_ms: {} };
            problems = [`case failed: ${errorMessage(e)}`];
          }
          for (const p of problems) mr.problems[problemKey(p)] = (mr.problems[problemKey(p)] ?? 0) + 1;
          await input.write(method.name, prediction);
          mr.cases++;
          done++;
          input.onProgress?.({ phase: 'case', repo, method: method.name, done, total });
        }
        mr.elapsedMs += performance.now() - m0;
      }
    } finally {
      paths?.dispose();
      repoMethods?.dispose();
      kb.dispose();
    }
  }
  report.elapsedMs = performance.now() - start;
  return report;
}

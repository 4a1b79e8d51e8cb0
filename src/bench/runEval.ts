// `coderag eval` / `eval compare` (docs/BENCHMARKS.md): index every repository of the cases once,
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
import { similarModeFor } from '../engine/pipeline';
import { createRepositoryIndex, type RepositoryIndex } from '../engine/index/repositoryIndex';
import type { RepoMethods } from '../engine/body/RepoMethods';
import type { Tokenize } from '../engine/body/tokens';
import { isBodyCase } from './cases';
import { errorMessage, isCancellationError, throwIfAborted, UserError } from '../engine/util/errors';
import { CodeWindowIndex, DEFAULT_WINDOW } from '../engine/similar/windowIndex';
import { SimilarRetriever, type NextLineModel, type SimilarRetrieverOptions } from '../engine/similar/perspectives';
import { createSimilarBandit } from '../engine/similar/bandit';
import { readsWordSets } from '../engine/similar/chooseWindows';
import type { LinUcb, LinUcbState } from '../engine/similar/linUcb';
import type { SimilarArm } from '../engine/similar/types';
import { caseLang } from './cases';
import { scoreCompletion } from './metrics';
import { SignatureVectors } from './variants/encoderSignatures';
import { RG1, withRg1 } from './baselines/rg1Retrieve';
import { PromptMemory } from '../engine/prompt/promptMemory';

export interface EvalProgress {
  phase: 'index' | 'prepare' | 'case';
  repo: string;
  method?: string;
  /** Cases finished over the whole run (phase 'case'). */
  done: number;
  total: number;
  detail?: string;
}

interface EvalRunInput {
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
  /** ProCC's hypothetical line: the causal LM's greedy next line. */
  nextLine?: NextLineModel;
  /** ProCC's windows (default DEFAULT_WINDOW) and how its perspectives match. */
  similar?: { windowLines?: number; strideLines?: number } & SimilarRetrieverOptions;
  /** The bandit methods start from this saved LinUCB state (else from nothing). */
  banditState?: unknown;
  write(method: string, prediction: Prediction): Promise<void>;
  onProgress?(p: EvalProgress): void;
}

/** The encoder as Rambo's signature option reads it. */
function embedWith(encoder: DenseEncoder): (texts: string[], signal: AbortSignal) => Promise<Float32Array[]> {
  return (texts, signal) => encoder.embed(texts, signal);
}

interface RepoReport {
  repository: string;
  files: number;
  items: number;
  indexMs: number;
  /** Index-time work of each path (RG-1 windows, TF-IDF, embeddings). */
  prepareMs: Record<string, number>;
  /** ProCC's code-window index: windows, time to build and embed them, memory held (bytes, an estimate). */
  windows?: { count: number; ms: number; bytes: number; embedded: number; store: string };
}

interface MethodReport {
  cases: number;
  /** Degradations by kind (a path's timeout, a probing fallback, a failed generate ...), with counts. */
  problems: Record<string, number>;
  elapsedMs: number;
}

export interface EvalRunReport {
  repos: RepoReport[];
  /** Each bandit method's LinUCB state at the end of the run, and why a given saved state was not used. */
  bandits?: Record<string, LinUcbState>;
  banditError?: string;
  methods: Record<string, MethodReport>;
  elapsedMs: number;
}

/** Cases grouped by repository, in first-seen order. */
function groupByRepository(cases: readonly BenchCase[]): Map<string, BenchCase[]> {
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
  // Each bandit method keeps one LinUCB over the whole run: cases in file order, each predicted before its reward is used.
  const bandits = new Map<string, LinUcb<SimilarArm>>();
  for (const m of input.methods) {
    if (m.similar !== 'bandit') continue;
    const made = createSimilarBandit(input.banditState);
    if (made.error) report.banditError = made.error;
    bandits.set(m.name, made.bandit);
  }
  const needsSimilar = input.methods.some((m) => m.similar !== undefined && m.similar !== 'off');
  if (needsSimilar && !input.encoder) throw new UserError("ProCC's methods need the code encoder, which is not loaded");

  for (const [repo, cases] of groups) {
    throwIfAborted(signal);
    const repoRoot = join(input.reposDir, repo);
    const t0 = performance.now();
    input.onProgress?.({ phase: 'index', repo, done, total });
    const indexFolder = input.indexFolderFor?.(repoRoot);
    const kb = await KnowledgeBase.open({ repoRoot, parsers: input.parsers, ...(indexFolder ? { indexFolder } : {}) });
    let paths: RepositoryIndex | undefined;
    let repoMethods: RepoMethods | undefined;
    let windows: CodeWindowIndex | undefined;
    try {
      await kb.index(undefined, signal);
      const repoReport: RepoReport = {
        repository: repo,
        files: kb.paths().length,
        items: kb.items().length,
        indexMs: performance.now() - t0,
        prepareMs: {},
      };
      // RG-1, a baseline, beside the engine's paths.
      const built = createRepositoryIndex(kb, input.parsers, {
        paths: [...needed],
        ...(input.tokenize ? { tokenize: input.tokenize } : {}),
        ...(input.encoder
          ? {
              dense: {
                encoder: input.encoder,
                ...(indexFolder ? { indexFolder } : {}),
                onProgress: (p) => input.onProgress?.({ phase: 'prepare', repo, done, total, detail: `dense ${p.done}/${p.total}` }),
              },
            }
          : {}),
      });
      paths = withRg1(built, kb, [...needed]);
      for (const path of ['sparse', 'dense', 'dataflow', RG1] as const) {
        const r = paths.byName.get(path);
        if (!r) continue;
        input.onProgress?.({ phase: 'prepare', repo, done, total, detail: path });
        const p0 = performance.now();
        await r.prepare?.(signal);
        repoReport.prepareMs[path] = performance.now() - p0;
      }
      let similar: SimilarRetriever | undefined;
      // `auto` builds windows only where it turns them on (a Java repository with the in-process model).
      const lang = cases[0]?.metadata.lang;
      const backend = input.options.generate ? input.model?.backend : undefined;
      const windowsHere = input.methods.some(
        (m) => m.similar !== undefined && lang !== undefined && similarModeFor(m.similar, lang, backend) !== 'off',
      );
      if (windowsHere && input.encoder) {
        input.onProgress?.({ phase: 'prepare', repo, done, total, detail: 'code windows' });
        windows = new CodeWindowIndex(kb, input.encoder, {
          windowLines: input.similar?.windowLines ?? DEFAULT_WINDOW.lines,
          strideLines: input.similar?.strideLines ?? input.similar?.windowLines ?? DEFAULT_WINDOW.stride,
          ...(indexFolder ? { indexFolder } : {}),
          // Built ahead where a perspective searches them all, so its time budget measures the search alone.
          wordSets: () =>
            input.methods.some((m) => m.similar !== undefined && readsWordSets(m.similar)) ||
            input.similar?.hypotheticalMatch === 'lexical',
          onProgress: (p) => input.onProgress?.({ phase: 'prepare', repo, done, total, detail: `windows ${p.done}/${p.total}` }),
        });
        const w = await windows.prepare(signal);
        repoReport.windows = {
          count: w.windows,
          ms: w.elapsedMs,
          bytes: w.bytes,
          embedded: w.embedded,
          store: typeof w.store === 'string' ? w.store : `invalid: ${w.store.invalid}`,
        };
        const nextLine = input.nextLine;
        similar = new SimilarRetriever(windows, kb, nextLine ? () => nextLine : undefined, input.similar ?? {});
      }
      const retrievers = paths.byName;
      // Rambo's methods, the product (auto mode), and every method on body cases (the body mode), read the repository's methods.
      if (input.methods.some((m) => m.rambo || m.product) || cases.some(isBodyCase)) repoMethods = paths.methods;
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
        ...(similar ? { similar } : {}),
        bandits,
        ...(repoMethods
          ? {
              body: {
                parsers: input.parsers,
                methods: repoMethods,
                ...(input.tokenize ? { tokenize: input.tokenize } : {}),
              },
              ...(input.encoder ? { signatureVectors: new SignatureVectors(embedWith(input.encoder)) } : {}),
            }
          : {}),
      };
      for (const method of input.methods) {
        const m0 = performance.now();
        const mr = report.methods[method.name]!;
        const session = input.options.session ? new PromptMemory() : undefined;
        const here = session ? { ...env, promptMemory: session } : env;
        // The user pauses at the place: what it waited for joins the block (a few pieces at most).
        const pause = (): void => {
          for (let n = 0; session && n < 8; n++) if (!session.idleWork()?.commit()) break;
        };
        for (const c of cases) {
          throwIfAborted(signal);
          let prediction: Prediction;
          let problems: string[];
          try {
            let outcome = await runCase(c, method, here, input.options, signal);
            pause();
            if (input.options.session === 'paused') outcome = await runCase(c, method, here, input.options, signal);
            ({ prediction, problems } = outcome);
            // The bandit learns from this case only after predicting it: reward = ES of the completion (0..1).
            const bandit = bandits.get(method.name);
            const lang = caseLang(c);
            if (bandit && outcome.similar?.chosenBy === 'bandit' && lang && input.options.generate) {
              const reward = scoreCompletion(prediction.prediction, c.groundtruth, lang).es / 100;
              bandit.update(outcome.similar.arm, outcome.similar.features, reward);
              if (prediction.similar) prediction.similar.reward = reward;
            }
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
      windows?.dispose();
      kb.dispose();
    }
  }
  if (bandits.size > 0) report.bandits = Object.fromEntries([...bandits].map(([name, b]) => [name, b.toJSON()]));
  report.elapsedMs = performance.now() - start;
  return report;
}

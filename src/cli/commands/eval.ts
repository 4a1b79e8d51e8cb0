// `coderag eval`: run a method over CCEval-format cases and write predictions with contexts and
// per-stage timings; `eval compare` runs several methods into one table and chart; `eval score`
// scores predictions (docs/BENCHMARKS.md metrics).
import { readRegularFile } from '../../engine/util/safeFile';
import { existsSync, promises as fs, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, positiveInt, UsageError } from '../command';
import { assetsDir, cacheRoot, modelDevice, parsers } from '../context';
import { openModels } from '../pipelineHost';
import { readCases, readPredictions, PredictionWriter, type BenchCase, type Prediction } from '../../bench/cases';
import { formatScoreReport, scorePredictions } from '../../bench/score';
import { DEFAULT_RUN_OPTIONS, methodNeeds, parseMethod, withSimilarMode, type MethodSpec, type RunOptions } from '../../bench/runMethod';
import { SIMILAR_MODES } from '../../engine/similar/chooseWindows';
import { runEval, type EvalProgress, type EvalRunReport } from '../../bench/runEval';
import {
  describeGenerator,
  openDistilledReranker,
  openGenerator,
  openLlmReranker,
  parseGenerator,
  parseLlmReranker,
} from '../../bench/evalModels';
import { compareMethods, formatComparisonMarkdown } from '../../bench/compare';
import { comparisonChartSvg } from '../../bench/chart';
import { indexFolderFor, writeFileAtomic } from '../../engine/kb/store';
import { DEFAULT_PROBE_BATCH, DEFAULT_PROBE_BUDGET_MS, lmChunkProber } from '../../engine/query/lmChunkProber';
import type { QueryStrategy } from '../../engine/query/types';
import { BODY_ELEMENTS, CHECK_MODES, PIPELINE_DEFAULTS, type CheckMode } from '../../engine/pipeline';
import { embeddedLMOf } from '../../engine/index/pipelineAdapters';
import type { Reranker } from '../../engine/rerank/types';
import { BODY_COMPOSES } from '../../bench/variants/bodyCompose';
import { SIGNATURE_SEARCHES } from '../../bench/variants/encoderSignatures';
import { distillCase, RecordingReranker, seedOf, type DistillCaseStats } from '../../bench/distillCases';
import { isUserError, UserError } from '../../engine/util/errors';

const SCORE_USAGE = 'eval score --cases FILE --preds FILE [--json OUT.json] [--k 10]';
const COMMON =
  '--cases F --repos DIR [--generator embedded|ollama:<model>|openai:<url>#<model>|local:<file.gguf>] [--local-threads 1] ' +
  '[--shipped-decoding] [--no-generate] [--query ' +
  'probe|last3|last10|jaccard] [--k 10] [--top-j 15] [--limit N] [--reranker-llm ollama:<model>|openai:<url>#<model>] ' +
  '[--ollama-host URL] [--index-dir DIR] [--probe-budget-ms 20] [--probe-batch 4] [--probe-top 1] [--body-prompt ' +
  'rambo|block] [--body-max-new-tokens 128] [--body-signatures jaccard|encoder] [--body-compose ' +
  'turns|knowledge-first|definitions-first|rrf] [--body-elements sketch|sketch+similar] [--check ' +
  'constrain|repair|off] [--check-prior W] [--bandit-state FILE] [--window-lines 20] [--window-stride 20] ' +
  '[--hyp-match embed|lexical] [--similar-share 0.3] [--context-share 0.5] [--read-rate 100] [--session first|paused] ' +
  '[--body-context-share 0.7] [--loop-guard ' +
  'on|off] [--copy-prior on|off] [--gate on|off] [--gate-threshold 0.4] [--gate-body-threshold 0.4] ' +
  '[--similar auto|off|lexical|hypothetical|summary|union|bandit (product)]';
const RUN_USAGE = `eval --method M ${COMMON} --out preds.jsonl`;
const COMPARE_USAGE = `eval compare --methods m1,m2,... ${COMMON} --out DIR`;
const DISTILL_USAGE = `eval distill [--method df+s+d] ${COMMON} [--per-size 3] --out data.jsonl`;

const RUN_OPTIONS = {
  cases: { type: 'string' },
  repos: { type: 'string' },
  generator: { type: 'string' },
  'local-threads': { type: 'string' },
  'shipped-decoding': { type: 'boolean' },
  'no-generate': { type: 'boolean' },
  query: { type: 'string' },
  k: { type: 'string' },
  'top-j': { type: 'string' },
  limit: { type: 'string' },
  'reranker-llm': { type: 'string' },
  'ollama-host': { type: 'string' },
  'index-dir': { type: 'string' },
  'budget-ms': { type: 'string' },
  'probe-budget-ms': { type: 'string' },
  'probe-batch': { type: 'string' },
  'probe-top': { type: 'string' },
  'timeout-ms': { type: 'string' },
  'body-prompt': { type: 'string' },
  'body-signatures': { type: 'string' },
  'body-compose': { type: 'string' },
  'body-elements': { type: 'string' },
  'body-max-new-tokens': { type: 'string' },
  check: { type: 'string' },
  'check-prior': { type: 'string' },
  'bandit-state': { type: 'string' },
  'window-lines': { type: 'string' },
  'window-stride': { type: 'string' },
  'hyp-match': { type: 'string' },
  'similar-share': { type: 'string' },
  'context-share': { type: 'string' },
  'read-rate': { type: 'string' },
  session: { type: 'string' },
  'body-context-share': { type: 'string' },
  'loop-guard': { type: 'string' },
  'copy-prior': { type: 'string' },
  gate: { type: 'string' },
  'gate-threshold': { type: 'string' },
  'gate-body-threshold': { type: 'string' },
  similar: { type: 'string' },
  out: { type: 'string' },
  quiet: { type: 'boolean' },
} as const;

const QUERIES: readonly QueryStrategy[] = ['probe', 'last3', 'last10', 'jaccard'];

/** A value of one of `allowed`, or undefined when the option is absent. */
function oneOf<T extends string>(values: Record<string, unknown>, name: string, allowed: readonly T[]): T | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (!allowed.includes(v as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}

function bodyPromptForm(value: unknown): RunOptions['bodyPromptForm'] {
  if (value === undefined) return DEFAULT_RUN_OPTIONS.bodyPromptForm;
  if (value !== 'rambo' && value !== 'block') throw new UsageError('--body-prompt must be rambo or block');
  return value;
}

function share(value: unknown, name: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new UsageError(`--${name} must be a number from 0 to 1`);
  return n;
}

/**
 * `--gate on|off`, `--gate-threshold X` (every mode's) and `--gate-body-threshold Y` (a method body's,
 * over X); a threshold alone turns the gate on; none: the product's default.
 */
export function gateOption(
  gate: unknown,
  threshold: unknown,
  bodyThreshold?: unknown,
): { gate?: { mode: 'on' | 'off'; threshold?: number; bodyThreshold?: number } } {
  if (gate !== undefined && gate !== 'on' && gate !== 'off') throw new UsageError('--gate must be on or off');
  if (gate === undefined && threshold === undefined && bodyThreshold === undefined) return {};
  const mode = (gate as 'on' | 'off' | undefined) ?? 'on';
  const line = threshold !== undefined ? share(threshold, 'gate-threshold') : undefined;
  const body = bodyThreshold !== undefined ? share(bodyThreshold, 'gate-body-threshold') : line;
  return {
    gate: { mode, ...(line !== undefined ? { threshold: line } : {}), ...(body !== undefined ? { bodyThreshold: body } : {}) },
  };
}

function nonNegative(value: unknown, name: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number of 0 or more`);
  return n;
}

/** `--session`'s value: a place's first prompt or the one after its pause. */
function sessionOption(v: string): 'first' | 'paused' {
  if (v !== 'first' && v !== 'paused') throw new UserError(`--session is first or paused, not ${v}`);
  return v;
}

/** Progress on stderr: a line every few seconds (every case on a terminal). */
function progressLine(quiet: boolean): (p: EvalProgress) => void {
  let last = 0;
  const tty = process.stderr.isTTY === true;
  return (p) => {
    if (quiet) return;
    const now = Date.now();
    if (p.phase !== 'index' && now - last < (tty ? 150 : 3000) && p.done !== p.total) return;
    last = now;
    const what =
      p.phase === 'case'
        ? `${p.method ?? ''} ${p.done}/${p.total}`
        : p.phase === 'index'
          ? `indexing (${p.done}/${p.total} done)`
          : `preparing ${p.detail ?? ''}`;
    const line = `eval ${p.repo}: ${what}`;
    if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns ?? 100) - 1)}`);
    else process.stderr.write(`${line}\n`);
  };
}

interface Prepared {
  cases: BenchCase[];
  reposDir: string;
  options: RunOptions;
  run(
    specs: MethodSpec[],
    write: (method: string, p: Prediction) => Promise<void>,
    rerankers?: { distilled?: Reranker },
  ): Promise<EvalRunReport>;
  describe: string;
}

/** A parser of an option's value: what it rejects is a usage error (exit 2), not a failure. */
function asUsage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    if (isUserError(e)) throw new UsageError(e.message);
    throw e;
  }
}

/** Parse the shared options, load what the methods need (failing fast when something is absent). */
async function prepare(
  values: Record<string, unknown>,
  specs: MethodSpec[],
  signal: AbortSignal,
): Promise<Prepared & { dispose(): Promise<void> }> {
  const casesFile = values.cases as string | undefined;
  const reposDir = values.repos as string | undefined;
  if (!casesFile) throw new UsageError('--cases is required');
  if (!reposDir) throw new UsageError('--repos is required');
  const query = ((values.query as string | undefined) ?? DEFAULT_RUN_OPTIONS.query) as QueryStrategy;
  if (!QUERIES.includes(query)) throw new UsageError(`--query must be one of ${QUERIES.join(', ')}`);
  const check = ((values.check as string | undefined) ?? PIPELINE_DEFAULTS.check.mode) as CheckMode;
  if (!CHECK_MODES.includes(check)) throw new UsageError(`--check must be one of ${CHECK_MODES.join(', ')}`);
  const bodySignatures = oneOf(values, 'body-signatures', SIGNATURE_SEARCHES);
  const bodyCompose = oneOf(values, 'body-compose', BODY_COMPOSES);
  const bodyElements = oneOf(values, 'body-elements', BODY_ELEMENTS);
  const generate = values['no-generate'] !== true;
  const host = (values['ollama-host'] as string | undefined) ?? 'http://127.0.0.1:11434';
  // Option values are checked before anything is read: a bad one is a usage error (exit 2).
  // Rambo's sketch needs the model even when only retrieval is evaluated.
  const generator =
    generate || specs.some((s) => s.rambo === 'model')
      ? asUsage(() => parseGenerator((values.generator as string | undefined) ?? 'embedded', host))
      : undefined;
  const llmSpec =
    values['reranker-llm'] === undefined ? undefined : asUsage(() => parseLlmReranker(values['reranker-llm'] as string, host));
  if (!existsSync(reposDir) || !statSync(reposDir).isDirectory()) throw new UserError(`repositories folder not found: ${reposDir}`);
  const options: RunOptions = {
    ...DEFAULT_RUN_OPTIONS,
    query,
    generate,
    topU: positiveInt(values, 'k', DEFAULT_RUN_OPTIONS.topU),
    topJ: positiveInt(values, 'top-j', DEFAULT_RUN_OPTIONS.topJ),
    pathBudgetMs: positiveInt(values, 'budget-ms', DEFAULT_RUN_OPTIONS.pathBudgetMs),
    bodyMaxNewTokens: positiveInt(values, 'body-max-new-tokens', DEFAULT_RUN_OPTIONS.bodyMaxNewTokens),
    bodyPromptForm: bodyPromptForm(values['body-prompt']),
    ...(bodySignatures ? { bodySignatures } : {}),
    ...(bodyCompose ? { bodyCompose } : {}),
    ...(bodyElements ? { bodyElements } : {}),
    check,
    ...(values['check-prior'] !== undefined ? { checkPrior: nonNegative(values['check-prior'], 'check-prior') } : {}),
    ...(values['similar-share'] !== undefined ? { similarShare: share(values['similar-share'], 'similar-share') } : {}),
    ...(values['probe-top'] !== undefined ? { probeTop: positiveInt(values, 'probe-top', 1) } : {}),
    ...(values['context-share'] !== undefined ? { contextShare: share(values['context-share'], 'context-share') } : {}),
    ...(values['read-rate'] !== undefined ? { readRate: positiveInt(values, 'read-rate') } : {}),
    ...(values.session !== undefined ? { session: sessionOption(String(values.session)) } : {}),
    ...(values['body-context-share'] !== undefined ? { bodyContextShare: share(values['body-context-share'], 'body-context-share') } : {}),
    ...gateOption(values.gate, values['gate-threshold'], values['gate-body-threshold']),
  };
  const timeoutMs = positiveInt(values, 'timeout-ms', 60_000);
  let cases = await readCases(casesFile);
  if (cases.length === 0) throw new UserError(`${casesFile} holds no cases`);
  if (values.limit !== undefined) cases = cases.slice(0, positiveInt(values, 'limit', cases.length));

  const needs = methodNeeds(specs, query, options);
  // Rerankers first: they fail fast without loading anything.
  const rerankers: { llm?: Reranker; distilled?: Reranker } = {};
  if (needs.llmReranker) {
    rerankers.llm = await openLlmReranker(llmSpec, timeoutMs);
  }
  if (needs.distilledReranker) rerankers.distilled = await openDistilledReranker(join(assetsDir(), 'models'), modelDevice());
  const loopGuard = oneOf(values, 'loop-guard', ['on', 'off'] as const) ?? 'on';
  const copyPrior = oneOf(values, 'copy-prior', ['on', 'off'] as const) ?? 'on';
  const hypMatch = (values['hyp-match'] as string | undefined) ?? 'embed';
  if (hypMatch !== 'lexical' && hypMatch !== 'embed') throw new UsageError('--hyp-match must be lexical or embed');
  let banditState: unknown;
  const banditFile = values['bandit-state'] as string | undefined;
  if (banditFile) {
    try {
      banditState = JSON.parse((await readRegularFile(banditFile, 1024 * 1024)).toString('utf8')) as unknown;
    } catch (e) {
      throw new UserError(`--bandit-state ${banditFile}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const windowLines = values['window-lines'] === undefined ? undefined : positiveInt(values, 'window-lines', 20);
  const windowStride = values['window-stride'] === undefined ? undefined : positiveInt(values, 'window-stride', 20);
  const models = await openModels(
    { lm: needs.prober || needs.similar || generator?.kind === 'embedded', encoder: needs.encoder },
    (m) => process.stderr.write(`warning: ${m}\n`),
    signal,
  );
  let disposeModel: (() => Promise<void>) | undefined;
  try {
    if (needs.encoder && !models.encoder)
      throw new UserError('the dense methods need the code encoder (models/coderag-encoder), which did not load');
    const model = generator
      ? await openGenerator(
          generator,
          () => (models.lm ? Promise.resolve(embeddedLMOf(models.lm)) : models.registry.causalLM(undefined, signal).then(embeddedLMOf)),
          timeoutMs,
          signal,
          { loopGuard: loopGuard === 'on', copyPrior: copyPrior === 'on' },
          { threads: positiveInt(values, 'local-threads', 1), shippedDecoding: values['shipped-decoding'] === true },
        )
      : undefined;
    disposeModel = model?.dispose?.bind(model);
    const prober =
      needs.prober && models.lm
        ? lmChunkProber(models.lm, {
            budgetMs: positiveInt(values, 'probe-budget-ms', DEFAULT_PROBE_BUDGET_MS),
            batchSize: positiveInt(values, 'probe-batch', DEFAULT_PROBE_BATCH),
          })
        : undefined;
    const p = await parsers();
    const cache = cacheRoot(values['index-dir'] as string | undefined);
    const embedded = generator?.kind === 'embedded';
    const shipped = generator?.kind === 'local' && values['shipped-decoding'] === true ? ' (shipped decoding)' : '';
    const loopOff = embedded && loopGuard === 'off' ? ' (loop guard off)' : '';
    const priorOff = embedded && copyPrior === 'off' ? ' (copy prior off)' : '';
    const generating = generator ? `generator ${describeGenerator(generator)}${shipped}${loopOff}${priorOff}` : 'retrieval only';
    const fallback = needs.prober && !prober ? ' (model missing: Jaccard fallback)' : '';
    const describe = `${cases.length} cases, query ${query}${fallback}, ${generating}`;
    return {
      cases,
      reposDir: resolve(reposDir),
      options,
      describe,
      run: (methodSpecs, write, override) =>
        runEval(
          {
            cases,
            reposDir: resolve(reposDir),
            methods: methodSpecs,
            options,
            parsers: p,
            indexFolderFor: (root) => indexFolderFor(cache, root),
            ...(models.encoder ? { encoder: models.encoder } : {}),
            ...(prober ? { prober } : {}),
            ...(model ? { model } : {}),
            ...(models.lm ? { tokenize: (t: string) => models.lm!.encode(t) } : {}),
            rerankers: { ...rerankers, ...override },
            ...(needs.similar && models.lm
              ? { nextLine: (prompt: string, maxNewTokens: number, s: AbortSignal) => models.lm!.generate(prompt, { maxNewTokens }, s) }
              : {}),
            similar: {
              ...(windowLines ? { windowLines } : {}),
              ...(windowStride ? { strideLines: windowStride } : {}),
              hypotheticalMatch: hypMatch,
            },
            ...(banditState !== undefined ? { banditState } : {}),
            write,
            onProgress: progressLine(values.quiet === true),
          },
          signal,
        ),
      dispose: async () => {
        await disposeModel?.().catch(() => undefined);
        await models.registry.dispose().catch(() => undefined);
      },
    };
  } catch (e) {
    await disposeModel?.().catch(() => undefined);
    await models.registry.dispose().catch(() => undefined);
    throw e;
  }
}

function problemsText(report: EvalRunReport): string {
  const out: string[] = [];
  for (const [method, m] of Object.entries(report.methods)) {
    const entries = Object.entries(m.problems).sort((a, b) => b[1] - a[1]);
    if (entries.length === 0) continue;
    out.push(`${method}: degraded in some cases:`);
    for (const [what, n] of entries.slice(0, 8)) out.push(`  ${n} x ${what}`);
  }
  return out.join('\n');
}

async function runCommand(argv: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...RUN_OPTIONS, method: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const method = values.method as string | undefined;
  if (!method) throw new UsageError('--method is required');
  const out = values.out as string | undefined;
  if (!out) throw new UsageError('--out is required');
  const spec = withSimilarMode(
    asUsage(() => parseMethod(method)),
    oneOf(values, 'similar', SIMILAR_MODES),
  );
  const prepared = await prepare(values, [spec], signal);
  const writer = await PredictionWriter.open(out);
  try {
    process.stderr.write(`eval ${spec.name}: ${prepared.describe}\n`);
    const report = await prepared.run([spec], (_, p) => writer.write(p));
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    const problems = problemsText(report);
    if (problems) process.stderr.write(problems + '\n');
  } finally {
    await writer.close();
    await prepared.dispose();
  }
  const score = scorePredictions(prepared.cases, await readPredictions(out), prepared.options.topU);
  process.stdout.write(formatScoreReport(score) + '\n');
  process.stdout.write(`wrote ${prepared.cases.length} predictions to ${out}\n`);
  return 0;
}

function fileNameOf(method: string): string {
  return method.replace(/[^A-Za-z0-9._+-]/g, '_');
}

async function compareCommand(argv: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...RUN_OPTIONS, methods: { type: 'string' }, title: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const names = ((values.methods as string | undefined) ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (names.length === 0) throw new UsageError('--methods is required (e.g. rg1,df+s+d)');
  const outDir = values.out as string | undefined;
  if (!outDir) throw new UsageError('--out is required (a folder)');
  const similarMode = oneOf(values, 'similar', SIMILAR_MODES);
  const specs = asUsage(() => names.map((n) => withSimilarMode(parseMethod(n), similarMode)));
  const prepared = await prepare(values, specs, signal);
  await fs.mkdir(outDir, { recursive: true });
  const writers = new Map<string, PredictionWriter>();
  let report: EvalRunReport;
  try {
    for (const s of specs) writers.set(s.name, await PredictionWriter.open(join(outDir, `${fileNameOf(s.name)}.jsonl`)));
    process.stderr.write(`eval compare ${names.join(', ')}: ${prepared.describe}\n`);
    report = await prepared.run(specs, (m, p) => writers.get(m)!.write(p));
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  } finally {
    for (const w of writers.values()) await w.close();
    await prepared.dispose();
  }
  const predictions = new Map<string, Prediction[]>();
  for (const s of specs) predictions.set(s.name, await readPredictions(join(outDir, `${fileNameOf(s.name)}.jsonl`)));
  const rows = compareMethods(prepared.cases, predictions, prepared.options.topU);
  const title = (values.title as string | undefined) ?? `CodeRAG method comparison (${prepared.describe})`;
  const command = `coderag eval compare ${argv.join(' ')}`;
  const notes = [
    `Index-time work per repository (ms): ${report.repos
      .map(
        (r) =>
          `${r.repository} ${r.files} files/${r.items} items: index ${r.indexMs.toFixed(0)}${Object.entries(r.prepareMs)
            .map(([p, t]) => `, ${p} ${t.toFixed(0)}`)
            .join('')}${
            r.windows
              ? `, code windows ${r.windows.count} (${r.windows.embedded} embedded, store ` +
                `${r.windows.store}) ${r.windows.ms.toFixed(0)} ms, ${(r.windows.bytes / 1048576).toFixed(1)} MiB`
              : ''
          }`,
      )
      .join('; ')}`,
    ...(report.banditError ? [`--bandit-state not used: ${report.banditError}`] : []),
    ...Object.entries(report.methods)
      .filter(([, m]) => Object.keys(m.problems).length > 0)
      .map(
        ([name, m]) =>
          `${name} degraded: ${Object.entries(m.problems)
            .map(([w, n]) => `${n} x ${w}`)
            .slice(0, 4)
            .join('; ')}`,
      ),
  ];
  const markdown = formatComparisonMarkdown(rows, { title, command, generated: prepared.options.generate, notes });
  await writeFileAtomic(join(outDir, 'report.md'), markdown);
  await writeFileAtomic(join(outDir, 'chart.svg'), comparisonChartSvg(rows, title.length > 90 ? `${title.slice(0, 87)}...` : title));
  for (const [name, state] of Object.entries(report.bandits ?? {}))
    await writeFileAtomic(join(outDir, `bandit-${fileNameOf(name)}.json`), JSON.stringify(state) + '\n');
  await writeFileAtomic(
    join(outDir, 'scores.json'),
    JSON.stringify({ rows: rows.map((r) => ({ method: r.method, group: r.group, ...r.report })), run: report }, null, 2) + '\n',
  );
  process.stdout.write(markdown + '\n');
  process.stdout.write(`wrote ${join(outDir, 'report.md')}, chart.svg, scores.json and one predictions file per method\n`);
  return 0;
}

async function scoreCommand(argv: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    cases: { type: 'string' },
    preds: { type: 'string' },
    json: { type: 'string' },
    k: { type: 'string' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const casesFile = values.cases as string | undefined;
  const predsFile = values.preds as string | undefined;
  if (!casesFile) throw new UsageError('--cases is required');
  if (!predsFile) throw new UsageError('--preds is required');
  const k = values.k === undefined ? 10 : Number(values.k);
  if (!Number.isInteger(k) || k <= 0) throw new UsageError(`--k must be a positive integer, got "${String(values.k)}"`);
  const cases = await readCases(casesFile);
  if (cases.length === 0) throw new UserError(`${casesFile} holds no cases`);
  const preds = await readPredictions(predsFile);
  const report = scorePredictions(cases, preds, k);
  process.stdout.write(formatScoreReport(report) + '\n');
  const jsonOut = values.json as string | undefined;
  if (jsonOut) await writeFileAtomic(jsonOut, JSON.stringify(report, null, 2) + '\n');
  return 0;
}

/**
 * `eval distill`: the distillation data of CodeRAG Alg. 2 for the distilled reranker, with the
 * ground-truth oracle as teacher. Runs the method's query and retrieval on every case exactly as
 * a completion would, records the merged candidates and writes one JSONL line per case (features,
 * the oracle's hits, kept windows). Only use cases of repositories a model may train on.
 */
async function distillCommand(argv: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { ...RUN_OPTIONS, method: { type: 'string' }, 'per-size': { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const out = values.out as string | undefined;
  if (!out) throw new UsageError('--out is required (a .jsonl file)');
  const base = asUsage(() => parseMethod((values.method as string | undefined) ?? 'df+s+d'));
  if (base.rerank !== 'none' || base.iterative)
    throw new UsageError('--method must be a union of retrieval paths (s, d, df) without a reranker');
  const spec: MethodSpec = { ...base, name: `${base.name} (distill)`, rerank: 'distilled' };
  const perSize = positiveInt(values, 'per-size', 3);
  const prepared = await prepare({ ...values, 'no-generate': true }, [base], signal);
  const byId = new Map(prepared.cases.map((c) => [c.metadata.task_id, c]));
  const recorder = new RecordingReranker();
  const stats: DistillCaseStats = { cases: 0, withCandidates: 0, teachable: 0, windows: 0, subsets: 0 };
  const lines: string[] = [];
  try {
    process.stderr.write(`eval distill ${base.name}: ${prepared.describe}\n`);
    await prepared.run(
      [spec],
      async (_, p) => {
        stats.cases++;
        const recorded = recorder.take();
        const c = byId.get(p.task_id);
        if (!c || !recorded || recorded.docs.length < 2) return;
        stats.withCandidates++;
        const { record, subsets } = await distillCase(c, recorded, { perSize, seed: seedOf(p.task_id) }, signal);
        stats.subsets += subsets;
        if (record.hits.some((h) => h > 0)) stats.teachable++;
        stats.windows += record.windows.length;
        lines.push(JSON.stringify(record));
      },
      { distilled: recorder },
    );
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  } finally {
    await prepared.dispose();
  }
  await fs.mkdir(dirname(resolve(out)), { recursive: true });
  await writeFileAtomic(out, lines.map((l) => l + '\n').join(''));
  process.stdout.write(
    `distillation data: ${stats.cases} cases, ${stats.withCandidates} with 2+ candidates, ${stats.teachable} where a ` +
      `candidate holds a cross-file definition; ` +
      `${stats.windows} of ${stats.subsets} windows kept (oracle teacher); wrote ${out}\n`,
  );
  return 0;
}

export const evalCommand: CliCommand = {
  name: 'eval',
  usage: `${RUN_USAGE} | ${COMPARE_USAGE} | ${SCORE_USAGE} | ${DISTILL_USAGE}`,
  async run(argv, signal) {
    const [sub, ...rest] = argv;
    if (sub === 'score') return scoreCommand(rest, signal);
    if (sub === 'compare') return compareCommand(rest, signal);
    if (sub === 'distill') return distillCommand(rest, signal);
    if (sub === undefined || sub.startsWith('-')) return runCommand(argv, signal);
    throw new UsageError(
      `unknown subcommand "${sub}" (expected score, compare or distill, or options of a run)\n  ${RUN_USAGE}\n  ` +
        `${COMPARE_USAGE}\n  ${SCORE_USAGE}\n  ${DISTILL_USAGE}`,
    );
  },
};

// `coderag eval score`: join cases and predictions by task id and aggregate the docs/BENCHMARKS.md
// metrics overall and per repository, plus per-stage timing medians and p95 (CodeRAG Table 7).
import type { BenchCase, Prediction } from './cases';
import { caseLang } from './cases';
import { identifiers, medianP95, normalizedLines, recalledDefs, scoreCompletion, scoreContexts, setF1 } from './metrics';
import type { Lang } from '../engine/kb/types';
import { junkOf, type JunkKind } from './junk';

export interface ScoreSummary {
  /** Cases scored (a case without a prediction counts, with an empty prediction). */
  n: number;
  /** Exact match, percent. */
  em: number;
  /** Edit similarity, percent. */
  es: number;
  /** Identifier exact match, percent. */
  id_em: number;
  /** Identifier F1, percent. */
  id_f1: number;
  /** Next-identifier match, percent: the prediction's first identifier is the ground truth's. */
  nim: number;
  /** Share of predictions dereferencing a member the repository proves missing (fraction; null when the predictions do not say). */
  unknown_member_rate: number | null;
  /** Context recall@k, a fraction, over the cases that have crossfile_defs (null when none has). */
  recall: number | null;
  /** Name coverage@k, a fraction, over the same cases. */
  coverage: number | null;
  /** Share of those cases whose every crossfile def was recalled (fraction). */
  full_recall: number | null;
  /** How many cases entered recall / coverage. */
  n_recall: number;
  /** Cases that had no prediction. */
  missing: number;
  /**
   * Generator-free relevance, percent: the best identifier F1 between any line of the top-1 window
   * (ProCC's chosen similar window when there is one, else the first context) and the ground truth.
   */
  rel: number;
  /** Share of cases the editor would show (a prediction without `shown` counts as shown), fraction. */
  shown_share: number;
  /** EM / ES over the shown cases only, percent (0 when none is shown). */
  em_shown: number;
  es_shown: number;
  /** Share of shown, non-empty suggestions with junk of any kind (bench/junk.ts), fraction; null when none. */
  junk_rate: number | null;
  /** Shown, non-empty suggestions with each kind of junk. */
  junk: Partial<Record<JunkKind, number>>;
}

export interface ScoreReport {
  k: number;
  overall: ScoreSummary;
  by_repo: Record<string, ScoreSummary>;
  /** Recall@k per kind of definition (the cases' crossfile_defs `kind`): defs of that kind and the share recalled. */
  by_kind: Record<string, KindRecall>;
  timings_ms: Record<string, { median: number; p95: number }>;
  /** Predictions whose task_id matches no case (ignored). */
  unmatched_predictions: number;
  /** Cases skipped because their language is unknown (no metadata.lang, extension not .py/.java). */
  unknown_lang: number;
}

interface KindRecall {
  /** Definitions of this kind over all cases. */
  n: number;
  /** The share of them recalled in the top k (fraction). */
  recall: number;
}

interface Accumulator {
  n: number;
  em: number;
  es: number;
  idEm: number;
  idF1: number;
  nRecall: number;
  recall: number;
  coverage: number;
  full: number;
  missing: number;
  nim: number;
  nUnknown: number;
  unknown: number;
  rel: number;
  shown: number;
  emShown: number;
  esShown: number;
  nonEmptyShown: number;
  junkAny: number;
  junk: Partial<Record<JunkKind, number>>;
}

const empty = (): Accumulator => ({
  n: 0,
  em: 0,
  es: 0,
  idEm: 0,
  idF1: 0,
  nRecall: 0,
  recall: 0,
  coverage: 0,
  full: 0,
  missing: 0,
  nim: 0,
  nUnknown: 0,
  unknown: 0,
  rel: 0,
  shown: 0,
  emShown: 0,
  esShown: 0,
  nonEmptyShown: 0,
  junkAny: 0,
  junk: {},
});

/** The best identifier F1 (percent) between any line of the prediction's top-1 window and the ground truth. */
export function topWindowRelevance(pred: Prediction | undefined, groundtruth: string, lang: Lang): number {
  const top = pred?.contexts.find((c) => c.source.startsWith('similar:')) ?? pred?.contexts[0];
  if (!top) return 0;
  const truth = identifiers(normalizedLines(groundtruth, lang).join(''), lang);
  if (truth.length === 0) return 0;
  let best = 0;
  for (const line of top.text.split('\n')) {
    const ids = identifiers(line, lang);
    if (ids.length > 0) best = Math.max(best, setF1(ids, truth));
  }
  return 100 * best;
}

function summarize(a: Accumulator): ScoreSummary {
  const mean = (x: number): number => (a.n === 0 ? 0 : x / a.n);
  const frac = (x: number): number | null => (a.nRecall === 0 ? null : x / a.nRecall);
  return {
    n: a.n,
    em: mean(a.em),
    es: mean(a.es),
    id_em: mean(a.idEm),
    id_f1: mean(a.idF1),
    nim: mean(a.nim),
    unknown_member_rate: a.nUnknown === 0 ? null : a.unknown / a.nUnknown,
    recall: frac(a.recall),
    coverage: frac(a.coverage),
    full_recall: frac(a.full),
    n_recall: a.nRecall,
    missing: a.missing,
    rel: mean(a.rel),
    shown_share: a.n === 0 ? 0 : a.shown / a.n,
    em_shown: a.shown === 0 ? 0 : a.emShown / a.shown,
    es_shown: a.shown === 0 ? 0 : a.esShown / a.shown,
    junk_rate: a.nonEmptyShown === 0 ? null : a.junkAny / a.nonEmptyShown,
    junk: { ...a.junk },
  };
}

/** The first identifier of a text (leading whitespace skipped), '' when it does not start with one. */
export function firstIdentifier(text: string): string {
  return /^\s*([\p{L}_$][\p{L}\p{N}_$]*)/u.exec(text)?.[1] ?? '';
}

/** NIM (monitor-guided decoding): the prediction's first identifier equals the ground truth's (which must have one). */
export function nextIdentifierMatch(prediction: string, groundtruth: string): boolean {
  const want = firstIdentifier(groundtruth);
  return want !== '' && firstIdentifier(prediction) === want;
}

/** Score predictions against cases; `k` is the number of contexts recall and coverage look at. */
export function scorePredictions(cases: readonly BenchCase[], predictions: readonly Prediction[], k = 10): ScoreReport {
  const byTask = new Map<string, Prediction>();
  for (const p of predictions) byTask.set(p.task_id, p);
  const overall = empty();
  const repos = new Map<string, Accumulator>();
  const timings = new Map<string, number[]>();
  const kinds = new Map<string, { n: number; hits: number }>();
  const caseIds = new Set<string>();
  let unknownLang = 0;
  for (const c of cases) {
    caseIds.add(c.metadata.task_id);
    const lang = caseLang(c);
    if (!lang) {
      unknownLang++;
      continue;
    }
    const pred = byTask.get(c.metadata.task_id);
    const code = scoreCompletion(pred?.prediction, c.groundtruth, lang);
    const ctx = scoreContexts(c.metadata.crossfile_defs, pred?.contexts, k);
    const rel = topWindowRelevance(pred, c.groundtruth, lang);
    const defs = c.metadata.crossfile_defs ?? [];
    recalledDefs(defs, pred?.contexts, k).forEach((hit, i) => {
      const kind = defs[i]!.kind || 'unknown';
      const acc = kinds.get(kind) ?? { n: 0, hits: 0 };
      acc.n++;
      if (hit) acc.hits++;
      kinds.set(kind, acc);
    });
    const shown = pred !== undefined && pred.shown !== false;
    const junk = shown ? junkOf(pred.prediction, c.right_context ?? '', pred.unknown_member) : [];
    let repo = repos.get(c.metadata.repository);
    if (!repo) repos.set(c.metadata.repository, (repo = empty()));
    for (const acc of [overall, repo]) {
      acc.n++;
      acc.em += code.em;
      acc.es += code.es;
      acc.idEm += code.idEm;
      acc.idF1 += code.idF1;
      acc.rel += rel;
      if (shown) {
        acc.shown++;
        acc.emShown += code.em;
        acc.esShown += code.es;
        if (pred.prediction.trim() !== '') acc.nonEmptyShown++;
        if (junk.length > 0) acc.junkAny++;
        for (const k of junk) acc.junk[k] = (acc.junk[k] ?? 0) + 1;
      }
      acc.nim += nextIdentifierMatch(pred?.prediction ?? '', c.groundtruth) ? 100 : 0;
      if (pred?.unknown_member !== undefined) {
        acc.nUnknown++;
        if (pred.unknown_member) acc.unknown++;
      }
      if (!pred) acc.missing++;
      if (ctx) {
        acc.nRecall++;
        acc.recall += ctx.recall;
        acc.coverage += ctx.coverage;
        acc.full += ctx.full;
      }
    }
    for (const [stage, ms] of Object.entries(pred?.timings_ms ?? {})) {
      const list = timings.get(stage);
      if (list) list.push(ms);
      else timings.set(stage, [ms]);
    }
  }
  const timingSummary: ScoreReport['timings_ms'] = {};
  for (const [stage, list] of timings) {
    const s = medianP95(list);
    if (s) timingSummary[stage] = s;
  }
  const byRepo: Record<string, ScoreSummary> = {};
  for (const name of [...repos.keys()].sort()) byRepo[name] = summarize(repos.get(name)!);
  const byKind: Record<string, KindRecall> = {};
  for (const [kind, a] of [...kinds].sort(([x], [y]) => x.localeCompare(y))) byKind[kind] = { n: a.n, recall: a.hits / a.n };
  return {
    k,
    overall: summarize(overall),
    by_repo: byRepo,
    by_kind: byKind,
    timings_ms: timingSummary,
    unmatched_predictions: predictions.filter((p) => !caseIds.has(p.task_id)).length,
    unknown_lang: unknownLang,
  };
}

// The stages of docs/BENCHMARKS.md in pipeline order; others follow alphabetically.
const STAGE_ORDER = ['query', 'sparse', 'dense', 'dataflow', 'rerank', 'prompt', 'generate', 'total'];

/** The printed tables: metrics per repository and overall, then timings per stage. */
export function formatScoreReport(report: ScoreReport): string {
  const pct = (x: number): string => x.toFixed(2);
  const frac = (x: number | null): string => (x === null ? '-' : x.toFixed(3));
  const rows: string[][] = [
    [
      'repository',
      'n',
      'EM',
      'ES',
      'ID-EM',
      'ID-F1',
      'NIM',
      `recall@${report.k}`,
      `full@${report.k}`,
      `cover@${report.k}`,
      'unk-member',
      'shown',
      'EM-shown',
      'ES-shown',
      'junk',
      'missing',
    ],
  ];
  const row = (name: string, s: ScoreSummary): string[] => [
    name,
    String(s.n),
    pct(s.em),
    pct(s.es),
    pct(s.id_em),
    pct(s.id_f1),
    pct(s.nim),
    frac(s.recall),
    frac(s.full_recall),
    frac(s.coverage),
    frac(s.unknown_member_rate),
    frac(s.shown_share),
    pct(s.em_shown),
    pct(s.es_shown),
    frac(s.junk_rate),
    String(s.missing),
  ];
  for (const [name, s] of Object.entries(report.by_repo)) rows.push(row(name, s));
  rows.push(row('overall', report.overall));
  const out = [table(rows, rows.length - 1)];
  const kindRows = Object.entries(report.by_kind);
  if (kindRows.length > 0) {
    const t: string[][] = [['kind', 'defs', `recall@${report.k}`]];
    for (const [kind, v] of kindRows) t.push([kind, String(v.n), v.recall.toFixed(3)]);
    out.push('', table(t));
  }
  const stages = Object.keys(report.timings_ms).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  if (stages.length > 0) {
    const t: string[][] = [['stage', 'median ms', 'p95 ms']];
    for (const s of stages) {
      const v = report.timings_ms[s]!;
      t.push([s, v.median.toFixed(1), v.p95.toFixed(1)]);
    }
    out.push('', table(t));
  } else {
    out.push('', 'timings: none in the predictions');
  }
  if (report.unmatched_predictions > 0) out.push('', `${report.unmatched_predictions} predictions match no case (ignored)`);
  if (report.unknown_lang > 0) out.push('', `${report.unknown_lang} cases skipped: language unknown (set metadata.lang)`);
  return out.join('\n');
}

function rank(stage: string): number {
  const i = STAGE_ORDER.indexOf(stage);
  return i < 0 ? STAGE_ORDER.length : i;
}

/** Left-aligned first column, right-aligned numbers; a rule before row `ruleBefore` when given. */
function table(rows: string[][], ruleBefore?: number): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  const fmt = (r: string[]): string => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const lines = rows.map(fmt);
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  lines.splice(1, 0, rule);
  if (ruleBefore !== undefined && ruleBefore > 1) lines.splice(ruleBefore + 1, 0, rule);
  return lines.join('\n');
}

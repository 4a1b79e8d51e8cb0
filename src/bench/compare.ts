// `coderag eval compare`: several methods' predictions on the same cases as one table (CodeRAG
// Tables 1, 3, 5 and 7: code match, identifier match, context recall, per-stage cost), per
// language and overall.
import type { BenchCase, Prediction } from './cases';
import { caseLang } from './cases';
import { scorePredictions, type ScoreReport } from './score';
import type { Lang } from '../engine/kb/types';

export type LangGroup = Lang | 'all';

export interface ComparisonRow {
  method: string;
  group: LangGroup;
  report: ScoreReport;
  /** Context recall at a second k beside the run's (20, Rambo's usage count; 10 when the run's k is 20). */
  recallAlso: { k: number; value: number | null };
  /** Share of cases whose prediction is empty (a missing one counts). */
  emptyShare: number;
}

/** One score report per method and language group (groups without cases are left out). */
export function compareMethods(
  cases: readonly BenchCase[],
  predictions: ReadonlyMap<string, readonly Prediction[]>,
  k = 10,
): ComparisonRow[] {
  const groups: Array<[LangGroup, BenchCase[]]> = [
    ['python', cases.filter((c) => caseLang(c) === 'python')],
    ['java', cases.filter((c) => caseLang(c) === 'java')],
  ];
  const present = groups.filter(([, cs]) => cs.length > 0);
  if (present.length > 1) present.push(['all', [...cases]]);
  const rows: ComparisonRow[] = [];
  for (const [group, cs] of present) {
    for (const [method, preds] of predictions) {
      const byTask = new Map(preds.map((p) => [p.task_id, p]));
      const empty = cs.filter((c) => (byTask.get(c.metadata.task_id)?.prediction ?? '').trim() === '').length;
      rows.push({
        method,
        group,
        report: scorePredictions(cs, preds, k),
        recallAlso: { k: k === 20 ? 10 : 20, value: scorePredictions(cs, preds, k === 20 ? 10 : 20).overall.recall },
        emptyShare: cs.length ? empty / cs.length : 0,
      });
    }
  }
  return rows;
}

/** Stages in pipeline order (docs/BENCHMARKS.md), then any others a method recorded. */
const STAGES = [
  'query',
  'sparse',
  'dense',
  'dataflow',
  'rg1',
  'retrieve',
  'rerank',
  'retrieve+rerank',
  'similar',
  'sim-lexical',
  'sim-hypothetical',
  'sim-summary',
  'detect',
  'signatures',
  'sketch',
  'elements',
  'usages',
  'knowledge',
  'prompt',
  'generate',
  'postprocess',
  'total',
];

function stagesOf(rows: readonly ComparisonRow[]): string[] {
  const seen = new Set<string>();
  for (const r of rows) for (const s of Object.keys(r.report.timings_ms)) seen.add(s);
  return STAGES.filter((s) => seen.has(s));
}

const frac = (x: number | null): string => (x === null ? '-' : x.toFixed(3));
const pct = (x: number): string => x.toFixed(2);
const ms = (x: { median: number; p95: number } | undefined): string => (x ? `${x.median.toFixed(1)} / ${x.p95.toFixed(1)}` : '-');

interface ComparisonMeta {
  title: string;
  /** The command that produced the predictions, shown verbatim. */
  command?: string;
  generated: boolean;
  notes?: string[];
}

/** The markdown report: one quality table and one timing table per language group. */
export function formatComparisonMarkdown(rows: readonly ComparisonRow[], meta: ComparisonMeta): string {
  const out: string[] = [`# ${meta.title}`, ''];
  if (meta.command) out.push('Produced by:', '', '```', meta.command, '```', '');
  if (!meta.generated)
    out.push('_Retrieval only (`--no-generate`): EM/ES/identifier scores are not meaningful; read recall and coverage._', '');
  for (const n of meta.notes ?? []) out.push(`- ${n}`);
  if (meta.notes?.length) out.push('');
  const k = rows[0]?.report.k ?? 10;
  for (const group of ['python', 'java', 'all'] as const) {
    const rs = rows.filter((r) => r.group === group);
    if (rs.length === 0) continue;
    out.push(`## ${group === 'all' ? 'All cases' : group === 'python' ? 'Python' : 'Java'} (${rs[0]!.report.overall.n} cases)`, '');
    const also = k === 20 ? 10 : 20;
    out.push(
      `| method | recall@${k} | recall@${also} | full@${k} | coverage@${k} | EM | ES | ID-EM | ID-F1 | REL | empty |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of rs) {
      const s = r.report.overall;
      const label = r.method === 'rambo-oracle' ? 'rambo-oracle (ORACLE: ground truth as sketch)' : r.method;
      out.push(
        `| ${label} | ${frac(s.recall)} | ${frac(r.recallAlso.value)} | ${frac(s.full_recall)} | ${frac(s.coverage)} | ` +
          `${pct(s.em)} | ${pct(s.es)} | ${pct(s.id_em)} | ${pct(s.id_f1)} | ${pct(s.rel)} | ${frac(r.emptyShare)} |`,
      );
    }
    out.push('');
    const kinds = [...new Set(rs.flatMap((r) => Object.keys(r.report.by_kind)))].sort();
    if (kinds.length > 0) {
      out.push(
        `Recall@${k} by kind of definition (definitions in parentheses):`,
        '',
        `| method | ${kinds.map((kd) => `${kd} (${rs[0]!.report.by_kind[kd]?.n ?? 0})`).join(' | ')} |`,
        `|---|${kinds.map(() => '---:').join('|')}|`,
      );
      for (const r of rs) out.push(`| ${r.method} | ${kinds.map((kd) => frac(r.report.by_kind[kd]?.recall ?? null)).join(' | ')} |`);
      out.push('');
    }
    const stages = stagesOf(rs);
    if (stages.length > 0) {
      out.push('Per-stage time, median / p95 ms:', '', `| method | ${stages.join(' | ')} |`, `|---|${stages.map(() => '---:').join('|')}|`);
      for (const r of rs) out.push(`| ${r.method} | ${stages.map((s) => ms(r.report.timings_ms[s])).join(' | ')} |`);
      out.push('');
    }
  }
  return out.join('\n');
}

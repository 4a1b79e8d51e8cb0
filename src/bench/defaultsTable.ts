// `npm run bench:defaults`' table (docs/BENCHMARKS-history.md "Defaults chosen on validation
// repositories"): each alternative is `product` with one setting changed, scored on the validation
// cases, with the SHA-256 of the model files it ran with, so a model change without a new table is
// caught (test/bench/defaultsTable.test.ts compares them with models/manifest.json's files).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScoreSummary } from './score';

export type DefaultsTask = 'line' | 'dot' | 'body';

export interface DefaultsRow {
  /** `product` for the defaults, else `<setting>=<value>` (or a baseline method's name on body cases). */
  alternative: string;
  task: DefaultsTask;
  lang: 'python' | 'java';
  n: number;
  es: number;
  em: number;
  id_f1: number;
  nim: number;
  /** Fractions (null: nothing to count). */
  junk_rate: number | null;
  shown_share: number;
  es_shown: number;
  recall: number | null;
  /** Median of the predictions' `total` time (ms). */
  median_ms: number | null;
}

export interface DefaultsTable {
  /** ISO date of the run. */
  date: string;
  /** `models/<name>/<file>` -> SHA-256 of the model files the run used (README.md files left out: documentation). */
  models: Record<string, string>;
  /** How the table was produced (the command, the case files and counts). */
  command: string;
  cases: Record<string, number>;
  rows: DefaultsRow[];
  notes?: string[];
}

interface Manifest {
  models: Array<{ name: string; files: string[] }>;
}

/** SHA-256 of every model file models/manifest.json lists (not the READMEs), keyed `name/file`. */
export function modelHashes(modelsDir: string): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(modelsDir, 'manifest.json'), 'utf8')) as Manifest;
  const out: Record<string, string> = {};
  for (const m of manifest.models)
    for (const f of m.files) {
      if (f.endsWith('README.md')) continue;
      out[`${m.name}/${f}`] = createHash('sha256')
        .update(readFileSync(join(modelsDir, m.name, f)))
        .digest('hex');
    }
  return out;
}

/** One table row from a method's score summary. */
export function defaultsRow(
  alternative: string,
  task: DefaultsTask,
  lang: 'python' | 'java',
  s: ScoreSummary,
  medianMs: number | null,
): DefaultsRow {
  return {
    alternative,
    task,
    lang,
    n: s.n,
    es: s.es,
    em: s.em,
    id_f1: s.id_f1,
    nim: s.nim,
    junk_rate: s.junk_rate,
    shown_share: s.shown_share,
    es_shown: s.es_shown,
    recall: s.recall,
    median_ms: medianMs,
  };
}

const f2 = (x: number): string => x.toFixed(2);
const frac = (x: number | null): string => (x === null ? '-' : x.toFixed(3));
const msOf = (x: number | null): string => (x === null ? '-' : x.toFixed(0));

/** The markdown table: one section per task, a row per alternative with both languages side by side. */
export function formatDefaultsMarkdown(t: DefaultsTable): string {
  const out = [
    `# Defaults on the validation repositories (${t.date})`,
    '',
    'Each row is `product` (the editor with its default settings) with one setting changed. ' +
      'ES/EM/ID-F1/NIM in percent; junk = share of shown, non-empty suggestions with a line repeated more than twice, ' +
      'a redaction placeholder, a member the typed receiver lacks, or only the text after the cursor; ' +
      'shown = share the editor would show; ms = median total time ' +
      '(noisy on a shared machine: compare within the table).',
    '',
    'Produced by:',
    '',
    '```',
    t.command,
    '```',
    '',
    `Cases: ${Object.entries(t.cases)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}.`,
    '',
    ...(t.notes ?? []).map((n) => `- ${n}`),
    ...(t.notes?.length ? [''] : []),
  ];
  for (const task of ['line', 'dot', 'body'] as const) {
    const rows = t.rows.filter((r) => r.task === task);
    if (rows.length === 0) continue;
    const names = [...new Set(rows.map((r) => r.alternative))];
    out.push(`## ${task} cases`, '');
    const cols =
      task === 'dot' ? ['NIM', 'ES', 'EM', 'junk', 'shown', 'ms'] : ['ES', 'EM', 'ID-F1', 'junk', 'shown', 'ES shown', 'recall@10', 'ms'];
    out.push(
      `| alternative | ${['Python', 'Java'].flatMap((l) => cols.map((c) => `${l} ${c}`)).join(' | ')} |`,
      `|---|${['python', 'java'].flatMap(() => cols.map(() => '---:')).join('|')}|`,
    );
    for (const name of names) {
      const cells = (['python', 'java'] as const).flatMap((lang) => {
        const r = rows.find((x) => x.alternative === name && x.lang === lang);
        if (!r) return cols.map(() => '');
        return task === 'dot'
          ? [f2(r.nim), f2(r.es), f2(r.em), frac(r.junk_rate), frac(r.shown_share), msOf(r.median_ms)]
          : [f2(r.es), f2(r.em), f2(r.id_f1), frac(r.junk_rate), frac(r.shown_share), f2(r.es_shown), frac(r.recall), msOf(r.median_ms)];
      });
      out.push(`| ${name} | ${cells.join(' | ')} |`);
    }
    out.push('');
  }
  out.push('Model files (SHA-256):', '', ...Object.entries(t.models).map(([f, h]) => `- \`${f}\` ${h}`), '');
  return out.join('\n');
}

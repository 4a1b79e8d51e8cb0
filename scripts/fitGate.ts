// The show gate fitted offline on the validation cases (docs/BENCHMARKS.md "Show
// or stay silent"): reads `coderag eval` predictions (each with the gate's features),
// fits the logistic model with and without the log-probability features (bench/gateFit), prints
// the curve (share shown against the ES of what is shown) per language and mode at thresholds
// 0..1, in-sample and leave-one-repository-out, and with --out writes the weights as
// src/engine/gate/weights.ts. Runs named --report are scored with the fitted weights (dev: reported only).
// Usage: npx tsx scripts/fitGate.ts --run CASES.jsonl=PREDS.jsonl [--run ...] [--report CASES=PREDS ...] [--ridge 1] [--out FILE]
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { caseLang, readCases, readPredictions } from '../src/bench/cases';
import { fitLogistic, scoreOf, showCurve, type GateSample } from '../src/bench/gateFit';
import { scoreCompletion } from '../src/bench/metrics';
import { featureVector, GATE_FEATURES, type GateFeatures } from '../src/engine/gate/features';
import { BODY_SHOW_THRESHOLDS, SHOW_THRESHOLDS, type ShowLevel } from '../src/engine/gate/levels';

const { values } = parseArgs({
  options: {
    run: { type: 'string', multiple: true },
    report: { type: 'string', multiple: true },
    ridge: { type: 'string', default: '1' },
    out: { type: 'string' },
  },
});
const ridge = Number(values.ridge);

interface Row extends GateSample {
  es: number;
  repo: string;
  logprobs: boolean;
}

async function rowsOf(pairs: readonly string[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const pair of pairs) {
    const [casesFile, predsFile] = pair.split('=');
    const cases = new Map((await readCases(casesFile!)).map((c) => [c.metadata.task_id, c]));
    const mode = /body/.test(casesFile!) ? 'body' : /dot/.test(casesFile!) ? 'dot' : 'line';
    for (const p of await readPredictions(predsFile!)) {
      const c = cases.get(p.task_id);
      const lang = c && caseLang(c);
      if (!c || !lang || !p.gate || !p.prediction) continue;
      const es = scoreCompletion(p.prediction, c.groundtruth, lang).es;
      rows.push({
        x: featureVector(p.gate.features as GateFeatures),
        y: es / 100,
        es,
        hasLogprobs: p.gate.logprobs,
        logprobs: p.gate.logprobs,
        group: `${lang}-${mode}`,
        repo: c.metadata.repository,
      });
    }
  }
  return rows;
}

/** `line+body`: the acceptance's population (dot cases are fitted on, reported apart). */
function inGroup(r: Row, g: string): boolean {
  return g === 'line+body' ? !r.group.endsWith('-dot') : r.group === g;
}

const THRESHOLDS = Array.from({ length: 21 }, (_, i) => i / 20);

function printCurves(title: string, rows: readonly Row[], scoreRow: (r: Row) => number): void {
  console.log(`\n${title}`);
  const groups = [...new Set(rows.map((r) => r.group))].sort();
  for (const g of [...groups, 'line+body']) {
    const of = rows.filter((r) => inGroup(r, g));
    const curve = showCurve(
      of.map((r) => ({ score: scoreRow(r), es: r.es })),
      THRESHOLDS,
    );
    console.log(
      `${g.padEnd(12)} n=${String(of.length).padStart(3)} ` +
        curve
          .map((p) => `${p.threshold.toFixed(2)}:${(100 * p.shown).toFixed(0)}%/${p.esShown === null ? '-' : p.esShown.toFixed(1)}`)
          .join(' '),
    );
  }
  // Near the levels, finer: each group's share shown and ES gain over showing all.
  console.log('threshold ' + [...groups, 'line+body'].map((g) => g.padEnd(18)).join(''));
  for (let t = 0.15; t <= 0.351; t += 0.01) {
    const cells = [...groups, 'line+body'].map((g) => {
      const of = rows.filter((r) => inGroup(r, g));
      const all = of.reduce((a, r) => a + r.es, 0) / Math.max(1, of.length);
      const [p] = showCurve(
        of.map((r) => ({ score: scoreRow(r), es: r.es })),
        [t],
      );
      return `${(100 * p!.shown).toFixed(0)}% ${p!.esShown === null ? '-' : `${p!.esShown >= all ? '+' : ''}${(p!.esShown - all).toFixed(1)}`}`.padEnd(
        18,
      );
    });
    console.log(`${t.toFixed(2).padEnd(10)}${cells.join('')}`);
  }
  const levels = Object.keys(SHOW_THRESHOLDS) as ShowLevel[];
  console.log('level            group        shown   ES shown   ES all   gain');
  for (const level of levels)
    for (const g of [...groups, 'line+body']) {
      const of = rows.filter((r) => inGroup(r, g));
      const all = of.reduce((a, r) => a + r.es, 0) / Math.max(1, of.length);
      // Each row against its own mode's threshold: a body's is stricter than a line's at every level.
      const t = SHOW_THRESHOLDS[level];
      const [p] = showCurve(
        of.map((r) => ({ score: scoreRow(r) + (r.group.endsWith('-body') ? t - BODY_SHOW_THRESHOLDS[level] : 0), es: r.es })),
        [t],
      );
      console.log(
        `${level.padEnd(16)} ${g.padEnd(12)} ${(100 * p!.shown).toFixed(1).padStart(5)}%  ${(p!.esShown ?? 0).toFixed(2).padStart(8)}  ${all
          .toFixed(2)
          .padStart(7)}  ${((p!.esShown ?? 0) - all).toFixed(2).padStart(5)}`,
      );
    }
}

function fit(rows: readonly Row[]): { withLogprobs: number[]; withoutLogprobs: number[] } {
  return {
    withLogprobs: fitLogistic(
      rows.filter((r) => r.logprobs),
      ridge,
    ),
    withoutLogprobs: fitLogistic(rows, ridge, ['meanLogprob', 'minLogprob']),
  };
}

/** src/engine/gate/weights.ts with `weights`. */
function weightsFile(weights: { withLogprobs: number[]; withoutLogprobs: number[] }, n: number): string {
  const fmt = (w: number[]): string => `[${w.map((v) => Number(v.toFixed(4))).join(', ')}]`;
  return [
    `// The show gate's shipped weights (GATE_FEATURES' order), written by scripts/fitGate.ts from the`,
    `// validation cases' predictions (${n} suggestions; docs/BENCHMARKS.md "Show or stay silent").`,
    '',
    "/** Two weight vectors in GATE_FEATURES order: with the model's log-probabilities, and without them (their weights 0). */",
    'export interface GateWeights {',
    '  withLogprobs: number[];',
    '  withoutLogprobs: number[];',
    '}',
    '',
    'export const SHIPPED_GATE_WEIGHTS: GateWeights = {',
    `  withLogprobs: ${fmt(weights.withLogprobs)},`,
    `  withoutLogprobs: ${fmt(weights.withoutLogprobs)},`,
    '};',
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const rows = await rowsOf(values.run ?? []);
  if (rows.length === 0) throw new Error('no predictions with gate features (run coderag eval with this build)');
  const weights = fit(rows);
  const score = (w: typeof weights) => (r: Row) => scoreOf(r.logprobs ? w.withLogprobs : w.withoutLogprobs, r.x);
  console.log(`fitted on ${rows.length} suggestions (${rows.filter((r) => r.logprobs).length} with log-probabilities), ridge ${ridge}`);
  for (const [name, w] of Object.entries(weights))
    console.log(`${name}: ${GATE_FEATURES.map((f, i) => `${f}=${w[i]!.toFixed(3)}`).join(' ')}`);
  printCurves('validation, in-sample', rows, score(weights));
  // Leave one repository out: each repository scored by weights fitted on the others.
  const byRepo = new Map<string, (r: Row) => number>();
  for (const repo of new Set(rows.map((r) => r.repo))) byRepo.set(repo, score(fit(rows.filter((r) => r.repo !== repo))));
  printCurves('validation, leave-one-repository-out', rows, (r) => byRepo.get(r.repo)!(r));
  printCurves('validation, without log-probabilities (in-sample)', rows, (r) => scoreOf(weights.withoutLogprobs, r.x));
  if (values.report?.length) {
    const dev = await rowsOf(values.report);
    printCurves('dev (reported only, not fitted on)', dev, score(weights));
  }

  if (values.out) {
    writeFileSync(values.out, weightsFile(weights, rows.length));
    console.log(`\nwrote ${values.out}`);
  }
}

void main();

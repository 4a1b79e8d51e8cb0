// ProCC's bandit fitted offline and frozen (src/bench/banditReplay.ts) on one `eval compare` run:
// fits on the first half of the cases (file order), reports every method of the run and the frozen
// bandit on the other half, so all rows score the same held-out cases.
// Usage: npx tsx scripts/proccOffline.ts --cases cases.jsonl --dir RUN_DIR [--fit N]
import { join } from 'node:path';
import { existsSync, readdirSync } from 'node:fs';
import { readCases, readPredictions, type Prediction } from '../src/bench/cases';
import { replayFrozenBandit } from '../src/bench/banditReplay';
import { scorePredictions } from '../src/bench/score';

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const casesFile = opt('cases');
  const dir = opt('dir');
  if (!casesFile || !dir) throw new Error('usage: --cases FILE --dir RUN_DIR [--fit N]');
  const cases = await readCases(casesFile);
  const fit = Number(opt('fit') ?? Math.floor(cases.length / 2));
  const byMethod = new Map<string, Prediction[]>();
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.jsonl'))) byMethod.set(f.slice(0, -6), await readPredictions(join(dir, f)));
  const features = new Map<string, number[]>();
  for (const p of byMethod.get('procc') ?? []) if (p.similar) features.set(p.task_id, p.similar.features);
  if (!existsSync(join(dir, 'procc.jsonl'))) throw new Error('the run has no procc predictions (the bandit context comes from them)');
  const replay = replayFrozenBandit(cases, byMethod, features, fit);
  const held = cases.slice(fit);
  const rows: string[] = [`Fitted on cases 1-${fit} (${replay.fitCases.length} with a context), frozen on cases ${fit + 1}-${cases.length} (${held.length}); chosen: ${JSON.stringify(replay.chosen)}`, '', '| method (held-out cases) | EM | ES | ID-F1 | REL |', '|---|---:|---:|---:|---:|'];
  const row = (name: string, preds: readonly Prediction[]): void => {
    const s = scorePredictions(held, preds).overall;
    rows.push(`| ${name} | ${s.em.toFixed(2)} | ${s.es.toFixed(2)} | ${s.id_f1.toFixed(2)} | ${s.rel.toFixed(2)} |`);
  };
  for (const [name, preds] of byMethod) row(name, preds);
  row('procc (offline-fitted, frozen)', replay.predictions);
  process.stdout.write(rows.join('\n') + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});

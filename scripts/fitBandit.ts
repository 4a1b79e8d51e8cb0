// ProCC's bandit fitted offline on a validation split (section 3.3) and saved as a LinUCB state
// that `coderag eval --bandit-state FILE` (and a workspace without learned state) can start from.
// Fits on every case of one or more `eval compare` runs (pooled: the editor keeps one bandit per
// workspace, whatever the language), and first prints a leave-one-repository-out check: fitted on
// the other repositories, frozen on each one, against every single arm on the same cases.
// Usage: npx tsx scripts/fitBandit.ts --run CASES.jsonl=RUN_DIR [--run ...] [--with df+s+d+dr] [--out STATE.json]
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readCases, readPredictions, type BenchCase, type Prediction } from '../src/bench/cases';
import { armMethodsOf, contextsOf, fitBandit, frozenChoices } from '../src/bench/banditReplay';
import { scorePredictions } from '../src/bench/score';
import type { SimilarArm } from '../src/engine/similar/types';
import { createSimilarBandit } from '../src/engine/similar/bandit';
import type { LinUcb } from '../src/engine/similar/linUcb';

const { values } = parseArgs({ options: { run: { type: 'string', multiple: true }, with: { type: 'string' }, out: { type: 'string' }, ridge: { type: 'string', default: '1' } } });

/**
 * A fresh bandit whose context weights (all but the bias) start with ridge weight `ridge` instead of
 * 1: A = diag(1, ridge, ..., ridge), b = 0, loaded through the saved-state path.
 */
function ridged(arms: readonly SimilarArm[], ridge: number): LinUcb<SimilarArm> {
  const fresh = createSimilarBandit(undefined, arms).bandit.toJSON();
  const d = fresh.dim;
  for (const a of arms) for (let i = 1; i < d; i++) fresh.A[a]![i * d + i] = Math.max(1, ridge);
  const { bandit, error } = createSimilarBandit(fresh, arms);
  if (error) throw new Error(`--ridge ${ridge}: ${error}`);
  return bandit;
}

async function main(): Promise<void> {
  const runs = values.run ?? [];
  if (runs.length === 0) throw new Error('usage: --run CASES.jsonl=RUN_DIR [--run ...] [--with BASE] [--out FILE]');
  const { arms, bandit: banditMethod } = armMethodsOf(values.with);
  const cases: BenchCase[] = [];
  const byMethod = new Map<string, Prediction[]>();
  for (const run of runs) {
    const [casesFile, dir] = run.split('=');
    if (!casesFile || !dir) throw new Error(`--run ${run}: expected CASES.jsonl=RUN_DIR`);
    cases.push(...(await readCases(casesFile)));
    for (const m of new Set([...Object.values(arms), banditMethod])) {
      const list = byMethod.get(m) ?? [];
      list.push(...(await readPredictions(join(dir, `${m}.jsonl`))));
      byMethod.set(m, list);
    }
  }
  const features = contextsOf(byMethod.get(banditMethod));
  const armList = Object.keys(arms) as SimilarArm[];
  const ridge = Number(values.ridge);
  const repoOf = (c: BenchCase): string => c.metadata.repository ?? c.metadata.task_id.split('/')[0]!;
  const repos = [...new Set(cases.map(repoOf))];
  const held: Prediction[] = [];
  const chosen: Partial<Record<SimilarArm, number>> = {};
  for (const repo of repos) {
    const train = cases.filter((c) => repoOf(c) !== repo);
    const test = cases.filter((c) => repoOf(c) === repo);
    const { bandit } = fitBandit(train, byMethod, features, arms, ridged(armList, ridge));
    const out = frozenChoices(bandit, test, byMethod, features, arms);
    held.push(...out.predictions);
    for (const [a, n] of Object.entries(out.chosen)) chosen[a as SimilarArm] = (chosen[a as SimilarArm] ?? 0) + n;
  }
  const es = (preds: readonly Prediction[]): string => {
    const o = scorePredictions(cases, preds).overall;
    return [o.em, o.es, o.id_f1, o.rel].map((v) => v.toFixed(2)).join(' | ');
  };
  const lines = [`# bandit fitted offline: ${cases.length} cases from ${repos.length} repositories (${repos.join(', ')}); arms ${JSON.stringify(arms)}`, '', `| leave one repository out (ridge ${values.ridge}) | EM | ES | ID-F1 | REL |`, '|---|---:|---:|---:|---:|'];
  for (const [arm, m] of Object.entries(arms)) lines.push(`| ${arm} always (${m}) | ${es(byMethod.get(m)!)} |`);
  lines.push(`| ${banditMethod} as run (online from its start) | ${es(byMethod.get(banditMethod)!)} |`);
  lines.push(`| frozen bandit, fitted on the other repositories | ${es(held)} |`, '', `chosen: ${JSON.stringify(chosen)}`);
  const { bandit, fitted } = fitBandit(cases, byMethod, features, arms, ridged(armList, ridge));
  lines.push(`fitted on all ${fitted.length} cases with a context; its choices there: ${JSON.stringify(frozenChoices(bandit, cases, byMethod, features, arms).chosen)}`);
  process.stdout.write(lines.join('\n') + '\n');
  if (values.out) {
    writeFileSync(values.out, JSON.stringify(bandit.toJSON()) + '\n');
    process.stdout.write(`wrote ${values.out}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});

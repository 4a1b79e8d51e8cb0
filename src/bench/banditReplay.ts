// ProCC's bandit fitted offline (section 3.3: LinUCB fitted on a validation split, then frozen):
// from one run's predictions of each arm's method (procc-lex, procc-hyp, procc-sum, zero-shot for
// "no similar code"; or, for a CodeRAG method with ProCC's window, METHOD+pc-lex ... and METHOD
// itself) and the bandit's context per case, fit a LinUCB with every arm's reward (offline, each
// arm's completion is known), then let it choose on other cases without learning. Greedy decoding
// makes an arm's completion the same whether its method or the bandit chose it, so the frozen
// bandit's prediction is that arm's method's prediction.
import type { BenchCase, Prediction } from './cases';
import { caseLang } from './cases';
import { scoreCompletion } from './metrics';
import { createSimilarBandit } from '../engine/similar/bandit';
import type { LinUcb } from '../engine/similar/linUcb';
import type { SimilarArm } from '../engine/similar/types';

/** The method whose predictions stand for each arm of ProCC alone. */
const ARM_METHODS: Readonly<Record<SimilarArm, string>> = {
  lexical: 'procc-lex',
  hypothetical: 'procc-hyp',
  summary: 'procc-sum',
  none: 'zero-shot',
};

/**
 * The methods standing for each arm, and the bandit method whose predictions carry the context:
 * ProCC alone (`base` undefined), or `base` with ProCC's window added (`base+pc`).
 */
export function armMethodsOf(base?: string): { arms: Readonly<Record<SimilarArm, string>>; bandit: string } {
  if (!base) return { arms: ARM_METHODS, bandit: 'procc' };
  return {
    arms: { lexical: `${base}+pc-lex`, hypothetical: `${base}+pc-hyp`, summary: `${base}+pc-sum`, none: base },
    bandit: `${base}+pc`,
  };
}

interface ReplayResult {
  /** Cases the bandit was fitted on (the first `fit` cases in file order). */
  fitCases: string[];
  /** Its predictions on the other cases, each the chosen arm's method's prediction (with `similar.arm` set). */
  predictions: Prediction[];
  /** How often each arm was chosen on the held-out cases. */
  chosen: Partial<Record<SimilarArm, number>>;
}

/** Each case's bandit context, from the predictions of the run's bandit method. */
export function contextsOf(predictions: readonly Prediction[] | undefined): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const p of predictions ?? []) if (p.similar) out.set(p.task_id, p.similar.features);
  return out;
}

/**
 * A LinUCB fitted on `cases` with every arm's reward (ES / 100, as the online runs). Arms whose
 * method is missing from `byMethod` are left out of the bandit; cases without a context are skipped.
 * `into`: fit into this bandit instead of a fresh one (its arms are the ones fitted).
 */
export function fitBandit(
  cases: readonly BenchCase[],
  byMethod: ReadonlyMap<string, readonly Prediction[]>,
  features: ReadonlyMap<string, number[]>,
  armMethods: Readonly<Record<SimilarArm, string>> = ARM_METHODS,
  into?: LinUcb<SimilarArm>,
): { bandit: LinUcb<SimilarArm>; fitted: string[] } {
  const arms = into ? [...into.arms] : (Object.keys(armMethods) as SimilarArm[]).filter((a) => byMethod.has(armMethods[a]));
  if (arms.length === 0) throw new Error('no arm method predictions to fit on');
  const preds = new Map<SimilarArm, Map<string, Prediction>>();
  for (const a of arms) {
    const list = byMethod.get(armMethods[a]);
    if (!list) throw new Error(`no predictions of ${armMethods[a]} (arm ${a})`);
    preds.set(a, new Map(list.map((p) => [p.task_id, p])));
  }
  const bandit = into ?? createSimilarBandit(undefined, arms).bandit;
  const fitted: string[] = [];
  for (const c of cases) {
    const x = features.get(c.metadata.task_id);
    const lang = caseLang(c);
    if (!x || !lang) continue;
    fitted.push(c.metadata.task_id);
    for (const a of arms)
      bandit.update(a, x, scoreCompletion(preds.get(a)!.get(c.metadata.task_id)?.prediction, c.groundtruth, lang).es / 100);
  }
  return { bandit, fitted };
}

/** The frozen bandit's choice on each case: that arm's method's prediction. */
export function frozenChoices(
  bandit: LinUcb<SimilarArm>,
  cases: readonly BenchCase[],
  byMethod: ReadonlyMap<string, readonly Prediction[]>,
  features: ReadonlyMap<string, number[]>,
  armMethods: Readonly<Record<SimilarArm, string>> = ARM_METHODS,
): { predictions: Prediction[]; chosen: Partial<Record<SimilarArm, number>> } {
  const preds = new Map<SimilarArm, Map<string, Prediction>>();
  for (const a of bandit.arms) preds.set(a, new Map((byMethod.get(armMethods[a]) ?? []).map((p) => [p.task_id, p])));
  const predictions: Prediction[] = [];
  const chosen: Partial<Record<SimilarArm, number>> = {};
  for (const c of cases) {
    const x = features.get(c.metadata.task_id);
    const arm = x ? bandit.choose(x).arm : bandit.arms[0]!;
    chosen[arm] = (chosen[arm] ?? 0) + 1;
    const p = preds.get(arm)!.get(c.metadata.task_id) ?? { task_id: c.metadata.task_id, prediction: '', contexts: [], timings_ms: {} };
    predictions.push({ ...p, similar: { arm, chosen_by: 'bandit', features: x ?? [] } });
  }
  return { predictions, chosen };
}

/** Fit on `cases.slice(0, fit)`, choose on the rest (`features`: each case's bandit context). */
export function replayFrozenBandit(
  cases: readonly BenchCase[],
  byMethod: ReadonlyMap<string, readonly Prediction[]>,
  features: ReadonlyMap<string, number[]>,
  fit: number,
  armMethods: Readonly<Record<SimilarArm, string>> = ARM_METHODS,
): ReplayResult {
  const { bandit, fitted } = fitBandit(cases.slice(0, fit), byMethod, features, armMethods);
  return { fitCases: fitted, ...frozenChoices(bandit, cases.slice(fit), byMethod, features, armMethods) };
}

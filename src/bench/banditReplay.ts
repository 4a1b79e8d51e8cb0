// ProCC's bandit fitted offline (section 3.3: LinUCB fitted on a validation split, then frozen):
// from one run's predictions of each arm's method (procc-lex, procc-hyp, procc-sum, zero-shot for
// "no similar code") and the bandit's context per case, fit a LinUCB on the first cases with every
// arm's reward (offline, each arm's completion is known), then let it choose on the rest without
// learning. Greedy decoding makes an arm's completion the same whether its method or the bandit
// chose it, so the frozen bandit's prediction is that arm's method's prediction.
import type { BenchCase, Prediction } from './cases';
import { caseLang } from './cases';
import { scoreCompletion } from './metrics';
import { createSimilarBandit } from '../engine/similar/bandit';
import type { SimilarArm } from '../engine/similar/types';

/** The method whose predictions stand for each arm. */
export const ARM_METHODS: Readonly<Record<SimilarArm, string>> = { lexical: 'procc-lex', hypothetical: 'procc-hyp', summary: 'procc-sum', none: 'zero-shot' };

export interface ReplayResult {
  /** Cases the bandit was fitted on (the first `fit` cases in file order). */
  fitCases: string[];
  /** Its predictions on the other cases, each the chosen arm's method's prediction (with `similar.arm` set). */
  predictions: Prediction[];
  /** How often each arm was chosen on the held-out cases. */
  chosen: Partial<Record<SimilarArm, number>>;
}

/**
 * Fit on `cases.slice(0, fit)`, choose on the rest. `features` gives each case's bandit context
 * (from the run's `procc` predictions); `byMethod` each arm method's predictions. Arms whose method
 * is missing are left out of the bandit. Reward: ES / 100 (as the online runs).
 */
export function replayFrozenBandit(cases: readonly BenchCase[], byMethod: ReadonlyMap<string, readonly Prediction[]>, features: ReadonlyMap<string, number[]>, fit: number): ReplayResult {
  const arms = (Object.keys(ARM_METHODS) as SimilarArm[]).filter((a) => byMethod.has(ARM_METHODS[a]));
  if (arms.length === 0) throw new Error('no arm method predictions to replay');
  const preds = new Map<string, Map<string, Prediction>>();
  for (const a of arms) preds.set(a, new Map(byMethod.get(ARM_METHODS[a])!.map((p) => [p.task_id, p])));
  const { bandit } = createSimilarBandit(undefined, arms);
  const fitCases: string[] = [];
  for (const c of cases.slice(0, fit)) {
    const x = features.get(c.metadata.task_id);
    const lang = caseLang(c);
    if (!x || !lang) continue;
    fitCases.push(c.metadata.task_id);
    for (const a of arms) bandit.update(a, x, scoreCompletion(preds.get(a)!.get(c.metadata.task_id)?.prediction, c.groundtruth, lang).es / 100);
  }
  const predictions: Prediction[] = [];
  const chosen: Partial<Record<SimilarArm, number>> = {};
  for (const c of cases.slice(fit)) {
    const x = features.get(c.metadata.task_id);
    const arm = x ? bandit.choose(x).arm : arms[0]!;
    chosen[arm] = (chosen[arm] ?? 0) + 1;
    const p = preds.get(arm)!.get(c.metadata.task_id) ?? { task_id: c.metadata.task_id, prediction: '', contexts: [], timings_ms: {} };
    predictions.push({ ...p, similar: { arm, chosen_by: 'bandit', features: x ?? [] } });
  }
  return { fitCases, predictions, chosen };
}

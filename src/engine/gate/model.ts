// The show gate's model: a logistic model over the features of features.ts that
// predicts how much of a suggestion a person keeps (offline: its edit similarity to what was
// written; online: the share of it accepted), so its score is comparable to the threshold a
// person chose. Two weight vectors: one with the model's log-probabilities, one fitted without
// them for clients that give none. Online, each shown suggestion's outcome moves the vector that
// scored it one small gradient step (the host keeps one model per workspace folder).
import { GATE_FEATURES, featureVector, type GateFeatures } from './features';
import { SHIPPED_GATE_WEIGHTS, type GateWeights } from './weights';

interface GateState extends GateWeights {
  version: 1;
  features: string[];
  /** Outcomes learned from since the shipped weights. */
  updates: number;
}

/** How far one outcome moves the weights: small, so one rejection does not silence a kind of suggestion. */
const GATE_LEARNING_RATE = 0.02;

/** Most a weight may be (a saved state or a long run of outcomes cannot make one feature decide alone). */
const MAX_WEIGHT = 20;

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

function dot(w: readonly number[], x: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < x.length; i++) z += (w[i] ?? 0) * x[i]!;
  return z;
}

function validVector(v: unknown): v is number[] {
  return Array.isArray(v) && v.length === GATE_FEATURES.length && v.every((n) => typeof n === 'number' && Number.isFinite(n));
}

export class GateModel {
  private weights: GateWeights;
  updates = 0;

  constructor(weights: GateWeights = SHIPPED_GATE_WEIGHTS) {
    this.weights = { withLogprobs: [...weights.withLogprobs], withoutLogprobs: [...weights.withoutLogprobs] };
  }

  /** A model from a saved state; a state it cannot use gives the shipped weights and the reason. */
  static fromJSON(saved: unknown): { model: GateModel; error?: string } {
    const s = saved as Partial<GateState> | undefined;
    if (
      !s ||
      s.version !== 1 ||
      !Array.isArray(s.features) ||
      s.features.join(',') !== GATE_FEATURES.join(',') ||
      !validVector(s.withLogprobs) ||
      !validVector(s.withoutLogprobs)
    )
      return { model: new GateModel(), error: 'not a gate state of this version' };
    const model = new GateModel({ withLogprobs: s.withLogprobs, withoutLogprobs: s.withoutLogprobs });
    model.updates = typeof s.updates === 'number' && Number.isFinite(s.updates) ? s.updates : 0;
    return { model };
  }

  toJSON(): GateState {
    return { version: 1, features: [...GATE_FEATURES], ...this.weights, updates: this.updates };
  }

  /** The predicted share of the suggestion a person keeps, 0..1. */
  score(features: GateFeatures, hasLogprobs: boolean): number {
    return sigmoid(dot(hasLogprobs ? this.weights.withLogprobs : this.weights.withoutLogprobs, featureVector(features)));
  }

  /** One outcome (`reward` 0..1: rejected .. accepted) moves the weights that scored it a gradient step of the log-loss. */
  update(features: GateFeatures, hasLogprobs: boolean, reward: number, rate = GATE_LEARNING_RATE): void {
    const r = Math.min(1, Math.max(0, reward));
    const w = hasLogprobs ? this.weights.withLogprobs : this.weights.withoutLogprobs;
    const x = featureVector(features);
    const g = r - sigmoid(dot(w, x));
    for (let i = 0; i < w.length; i++) {
      // Without log-probabilities their weights stay 0 (the features are 0 there anyway).
      w[i] = Math.min(MAX_WEIGHT, Math.max(-MAX_WEIGHT, w[i]! + rate * g * x[i]!));
    }
    this.updates++;
  }

  /** Back to the shipped weights. */
  reset(): void {
    this.weights = { withLogprobs: [...SHIPPED_GATE_WEIGHTS.withLogprobs], withoutLogprobs: [...SHIPPED_GATE_WEIGHTS.withoutLogprobs] };
    this.updates = 0;
  }
}

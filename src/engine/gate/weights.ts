// The show gate's shipped weights (GATE_FEATURES' order), written by scripts/fitGate.ts from the
// validation cases' predictions (438 suggestions; docs/BENCHMARKS.md "Show or stay silent").

/** Two weight vectors in GATE_FEATURES order: with the model's log-probabilities, and without them (their weights 0). */
export interface GateWeights {
  withLogprobs: number[];
  withoutLogprobs: number[];
}

export const SHIPPED_GATE_WEIGHTS: GateWeights = {
  withLogprobs: [-1.2156, 0.4451, 0.3533, 0.2878, -0.2217, -0.2157, 0.2157, 0.1638, -0.3358, -0.0583, 0.0486, 0, 0.1677, 0.1129],
  withoutLogprobs: [-2.2516, 0, 0, 0.3013, -0.1617, -0.3839, 0.3839, 0.2776, -0.1326, 0.0172, 0.3281, 0, 0.322, 0.1635],
};

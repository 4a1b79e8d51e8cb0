// The show gate's shipped weights (GATE_FEATURES' order), written by scripts/fitGate.ts from the
// validation cases' predictions (349 suggestions; docs/BENCHMARKS.md "Show or stay silent (2026-12-03)").

/** Two weight vectors in GATE_FEATURES order: with the model's log-probabilities, and without them (their weights 0). */
export interface GateWeights {
  withLogprobs: number[];
  withoutLogprobs: number[];
}

export const SHIPPED_GATE_WEIGHTS: GateWeights = {
  withLogprobs: [-1.7614, 0.3552, 0.4147, 0.3678, -0.3213, 0, 0, 0.132, -0.2587, 0.0989, 0.1875, 0, 0.2056, 0.2111],
  withoutLogprobs: [-2.8927, 0, 0, 0.3614, -0.2567, 0, 0, 0.2441, -0.0597, 0.0709, 0.4113, 0, 0.315, 0.2654],
};

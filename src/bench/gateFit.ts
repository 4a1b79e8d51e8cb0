// Fitting the show gate offline (scripts/fitGate.ts): each prediction's gate
// features (written by `coderag eval`) with its edit similarity as the target, a logistic model
// with soft targets (ES / 100: the share of the suggestion a person keeps, as the online reward is
// the share accepted), fitted by Newton's method with a small ridge; and the curve a threshold
// draws: the share of suggestions shown against the mean ES of those shown.
import { GATE_FEATURES, type GateFeatureName } from '../engine/gate/features';

export interface GateSample {
  x: number[];
  /** 0..1: ES / 100. */
  y: number;
  hasLogprobs: boolean;
  group: string;
}

function sigmoid(z: number): number {
  return 1 / (1 + Math.exp(-z));
}

/** Solve A w = b (A symmetric positive definite, small): Gaussian elimination with partial pivoting. */
function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[p]![c]!)) p = r;
    [M[c], M[p]] = [M[p]!, M[c]!];
    const d = M[c]![c]!;
    if (Math.abs(d) < 1e-12) continue;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / d;
      if (f !== 0) for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return M.map((row, i) => (Math.abs(row[i]!) < 1e-12 ? 0 : row[n]! / row[i]!));
}

/**
 * Logistic regression with soft targets: minimises the cross-entropy plus `ridge`/2 |w|² (the bias
 * not penalised); features named in `drop` keep weight 0. Newton's method, a few dozen steps.
 */
export function fitLogistic(samples: readonly GateSample[], ridge = 1, drop: readonly GateFeatureName[] = []): number[] {
  const d = GATE_FEATURES.length;
  const free = GATE_FEATURES.map((name) => !drop.includes(name));
  const w = new Array<number>(d).fill(0);
  for (let iter = 0; iter < 50; iter++) {
    const g = new Array<number>(d).fill(0);
    const H = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const s of samples) {
      let z = 0;
      for (let i = 0; i < d; i++) z += w[i]! * s.x[i]!;
      const p = sigmoid(z);
      const r = p - s.y;
      const v = p * (1 - p);
      for (let i = 0; i < d; i++) {
        g[i]! += r * s.x[i]!;
        for (let j = 0; j < d; j++) H[i]![j]! += v * s.x[i]! * s.x[j]!;
      }
    }
    for (let i = 0; i < d; i++) {
      const lambda = i === 0 ? 1e-6 : ridge;
      g[i]! += lambda * w[i]!;
      H[i]![i]! += lambda;
      if (!free[i]) {
        g[i] = 0;
        for (let j = 0; j < d; j++) H[i]![j] = H[j]![i] = i === j ? 1 : 0;
      }
    }
    const step = solve(H, g);
    let moved = 0;
    for (let i = 0; i < d; i++) {
      w[i]! -= free[i] ? step[i]! : 0;
      moved = Math.max(moved, Math.abs(step[i]!));
    }
    if (moved < 1e-8) break;
  }
  return w;
}

export function scoreOf(w: readonly number[], x: readonly number[]): number {
  let z = 0;
  for (let i = 0; i < x.length; i++) z += w[i]! * x[i]!;
  return sigmoid(z);
}

interface CurvePoint {
  threshold: number;
  /** Share of the suggestions shown, 0..1. */
  shown: number;
  /** Mean ES (0..100) of those shown; null when none is. */
  esShown: number | null;
}

/** The curve over `thresholds`: `scored` pairs each suggestion's gate score with its ES (0..100). */
export function showCurve(scored: ReadonlyArray<{ score: number; es: number }>, thresholds: readonly number[]): CurvePoint[] {
  return thresholds.map((threshold) => {
    const kept = scored.filter((s) => s.score >= threshold);
    return {
      threshold,
      shown: scored.length === 0 ? 0 : kept.length / scored.length,
      esShown: kept.length === 0 ? null : kept.reduce((a, s) => a + s.es, 0) / kept.length,
    };
  });
}

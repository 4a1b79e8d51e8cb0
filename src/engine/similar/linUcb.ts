// LinUCB (disjoint arms, one shared context vector) — ProCC's choice of a retrieval perspective
// per request. Each arm a keeps A_a = I + sum x x^T and b_a = sum r x over the contexts it was
// rewarded on; its score for context x is theta_a . x + alpha * sqrt(x^T A_a^-1 x) with
// theta_a = A_a^-1 b_a. The state is plain numbers, so a host can save and load it as JSON.

interface LinUcbOptions {
  /** Exploration weight (ProCC: 0.1). */
  alpha?: number;
}

interface LinUcbChoice<Arm extends string> {
  arm: Arm;
  /** Every arm's upper confidence bound for the context, in arm order. */
  scores: Record<Arm, number>;
}

/** The saved form: arms, dimension, alpha, and A (row-major) and b per arm. */
export interface LinUcbState {
  version: 1;
  arms: string[];
  dim: number;
  alpha: number;
  A: Record<string, number[]>;
  b: Record<string, number[]>;
  /** Updates received per arm. */
  pulls: Record<string, number>;
}

export class LinUcb<Arm extends string = string> {
  readonly alpha: number;
  private A = new Map<Arm, Float64Array>();
  private b = new Map<Arm, Float64Array>();
  private pulls = new Map<Arm, number>();

  constructor(
    readonly arms: readonly Arm[],
    readonly dim: number,
    options: LinUcbOptions = {},
  ) {
    if (arms.length === 0) throw new Error('LinUCB needs at least one arm');
    if (!Number.isInteger(dim) || dim < 1) throw new Error(`LinUCB dimension must be a positive integer, got ${dim}`);
    this.alpha = options.alpha ?? 0.1;
    this.reset();
  }

  /** Back to no knowledge: A = I, b = 0 for every arm. */
  reset(): void {
    for (const arm of this.arms) {
      const A = new Float64Array(this.dim * this.dim);
      for (let i = 0; i < this.dim; i++) A[i * this.dim + i] = 1;
      this.A.set(arm, A);
      this.b.set(arm, new Float64Array(this.dim));
      this.pulls.set(arm, 0);
    }
  }

  /** The arm with the highest upper confidence bound for `x` (ties: the earlier arm). */
  choose(x: readonly number[], allowed: readonly Arm[] = this.arms): LinUcbChoice<Arm> {
    this.checkContext(x);
    const scores = {} as Record<Arm, number>;
    let best: Arm | undefined;
    for (const arm of this.arms) {
      const s = this.score(arm, x);
      scores[arm] = s;
      if (allowed.includes(arm) && (best === undefined || s > scores[best])) best = arm;
    }
    return { arm: best ?? this.arms[0]!, scores };
  }

  /** theta . x + alpha * sqrt(x^T A^-1 x) for one arm. */
  score(arm: Arm, x: readonly number[]): number {
    this.checkContext(x);
    const Ainv = invert(this.A.get(arm)!, this.dim);
    const b = this.b.get(arm)!;
    const d = this.dim;
    let mean = 0;
    let width = 0;
    for (let i = 0; i < d; i++) {
      let theta = 0;
      let Ax = 0;
      for (let j = 0; j < d; j++) {
        theta += Ainv[i * d + j]! * b[j]!;
        Ax += Ainv[i * d + j]! * x[j]!;
      }
      mean += theta * x[i]!;
      width += x[i]! * Ax;
    }
    return mean + this.alpha * Math.sqrt(Math.max(0, width));
  }

  /** Learn from one reward (in [0, 1]) of `arm` chosen for context `x`. */
  update(arm: Arm, x: readonly number[], reward: number): void {
    this.checkContext(x);
    if (!this.arms.includes(arm)) throw new Error(`unknown arm ${arm}`);
    if (!Number.isFinite(reward)) throw new Error(`reward must be a finite number, got ${reward}`);
    const A = this.A.get(arm)!;
    const b = this.b.get(arm)!;
    const d = this.dim;
    for (let i = 0; i < d; i++) {
      b[i] = b[i]! + reward * x[i]!;
      for (let j = 0; j < d; j++) A[i * d + j] = A[i * d + j]! + x[i]! * x[j]!;
    }
    this.pulls.set(arm, (this.pulls.get(arm) ?? 0) + 1);
  }

  /** Updates received per arm. */
  pullCounts(): Record<Arm, number> {
    const out = {} as Record<Arm, number>;
    for (const arm of this.arms) out[arm] = this.pulls.get(arm) ?? 0;
    return out;
  }

  toJSON(): LinUcbState {
    const A: Record<string, number[]> = {};
    const b: Record<string, number[]> = {};
    const pulls: Record<string, number> = {};
    for (const arm of this.arms) {
      A[arm] = [...this.A.get(arm)!];
      b[arm] = [...this.b.get(arm)!];
      pulls[arm] = this.pulls.get(arm) ?? 0;
    }
    return { version: 1, arms: [...this.arms], dim: this.dim, alpha: this.alpha, A, b, pulls };
  }

  /**
   * A bandit from saved state, or an error saying what is wrong with it. The saved arms and
   * dimension must match the ones asked for (a state of another shape is not silently reused).
   */
  static fromJSON<Arm extends string>(state: unknown, arms: readonly Arm[], dim: number): LinUcb<Arm> {
    const s = state as Partial<LinUcbState> | null;
    if (!s || typeof s !== 'object' || s.version !== 1) throw new Error('not a saved LinUCB state (version 1)');
    if (s.dim !== dim) throw new Error(`saved LinUCB state has dimension ${String(s.dim)}, expected ${dim}`);
    if (!Array.isArray(s.arms) || s.arms.join(',') !== arms.join(','))
      throw new Error(`saved LinUCB state has arms ${JSON.stringify(s.arms)}, expected ${JSON.stringify(arms)}`);
    if (typeof s.alpha !== 'number' || !Number.isFinite(s.alpha) || s.alpha < 0) throw new Error('saved LinUCB state has no valid alpha');
    const bandit = new LinUcb<Arm>(arms, dim, { alpha: s.alpha });
    for (const arm of arms) {
      const A = s.A?.[arm];
      const b = s.b?.[arm];
      if (!Array.isArray(A) || A.length !== dim * dim || !A.every(Number.isFinite))
        throw new Error(`saved LinUCB state: A of arm ${arm} is not ${dim}x${dim} finite numbers`);
      if (!Array.isArray(b) || b.length !== dim || !b.every(Number.isFinite))
        throw new Error(`saved LinUCB state: b of arm ${arm} is not ${dim} finite numbers`);
      // A = I + sum x x^T is symmetric with eigenvalues >= 1; anything else (a singular A) would make every score NaN.
      if (!isLinUcbMatrix(A, dim))
        throw new Error(`saved LinUCB state: A of arm ${arm} is not symmetric positive definite (eigenvalues at least 1)`);
      bandit.A.set(arm, Float64Array.from(A));
      bandit.b.set(arm, Float64Array.from(b));
      const pulls = s.pulls?.[arm];
      bandit.pulls.set(arm, typeof pulls === 'number' && Number.isFinite(pulls) && pulls >= 0 ? pulls : 0);
    }
    return bandit;
  }

  private checkContext(x: readonly number[]): void {
    if (x.length !== this.dim) throw new Error(`LinUCB context has ${x.length} numbers, expected ${this.dim}`);
    for (const v of x) if (!Number.isFinite(v)) throw new Error('LinUCB context holds a number that is not finite');
  }
}

/**
 * Whether `A` (d x d, row-major) can be a LinUCB arm's matrix I + sum x x^T: symmetric, and
 * A - (1 - 1e-9) I positive definite (a Cholesky factorisation succeeds), so A is invertible and
 * every score finite.
 */
function isLinUcbMatrix(A: readonly number[], d: number): boolean {
  const scale = Math.max(1, ...A.map(Math.abs));
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) if (Math.abs(A[i * d + j]! - A[j * d + i]!) > 1e-9 * scale) return false;
  const L = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i * d + j]! - (i === j ? 1 - 1e-9 : 0);
      for (let k = 0; k < j; k++) s -= L[i * d + k]! * L[j * d + k]!;
      if (i === j) {
        if (!(s > 0)) return false;
        L[i * d + i] = Math.sqrt(s);
      } else L[i * d + j] = s / L[j * d + j]!;
    }
  }
  return true;
}

/** The inverse of a symmetric positive-definite d x d matrix (Gauss-Jordan with partial pivoting). */
function invert(M: Float64Array, d: number): Float64Array {
  const a = Float64Array.from(M);
  const inv = new Float64Array(d * d);
  for (let i = 0; i < d; i++) inv[i * d + i] = 1;
  for (let col = 0; col < d; col++) {
    let pivot = col;
    for (let r = col + 1; r < d; r++) if (Math.abs(a[r * d + col]!) > Math.abs(a[pivot * d + col]!)) pivot = r;
    if (pivot !== col) {
      for (let k = 0; k < d; k++) {
        [a[col * d + k], a[pivot * d + k]] = [a[pivot * d + k]!, a[col * d + k]!];
        [inv[col * d + k], inv[pivot * d + k]] = [inv[pivot * d + k]!, inv[col * d + k]!];
      }
    }
    const p = a[col * d + col]!;
    for (let k = 0; k < d; k++) {
      a[col * d + k] = a[col * d + k]! / p;
      inv[col * d + k] = inv[col * d + k]! / p;
    }
    for (let r = 0; r < d; r++) {
      if (r === col) continue;
      const f = a[r * d + col]!;
      if (f === 0) continue;
      for (let k = 0; k < d; k++) {
        a[r * d + k] = a[r * d + k]! - f * a[col * d + k]!;
        inv[r * d + k] = inv[r * d + k]! - f * inv[col * d + k]!;
      }
    }
  }
  return inv;
}

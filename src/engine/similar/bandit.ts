// ProCC's choice of a perspective (section 3.3): LinUCB over the arms with a context of, per
// perspective, its top-1 similarity and the token Jaccard between the query window and that top-1
// window (ProCC's six numbers), plus a constant 1 so each arm learns its own base rate.
import { LinUcb } from './linUcb';
import { PERSPECTIVES, SIMILAR_ARMS, type Perspective, type SimilarArm } from './types';

/** 1 (bias) + 2 numbers per perspective. */
export const SIMILAR_FEATURE_DIM = 1 + 2 * PERSPECTIVES.length;

/** ProCC's exploration weight. */
const SIMILAR_ALPHA = 0.1;

/** The bandit's context: [1, top-1 score, Jaccard(query, top-1)] per perspective; a perspective without a hit gives zeros. */
export function similarFeatures(top: Partial<Record<Perspective, { score: number; jaccard: number }>>): number[] {
  const x = [1];
  for (const p of PERSPECTIVES) {
    const t = top[p];
    x.push(t ? clamp(t.score) : 0, t ? clamp(t.jaccard) : 0);
  }
  return x;
}

function clamp(v: number): number {
  return Number.isFinite(v) ? Math.max(-1, Math.min(1, v)) : 0;
}

/**
 * The bandit a host keeps (the server per workspace, the bench per run): from saved state when it
 * is valid, else fresh, with the reason the saved state was not used.
 */
export function createSimilarBandit(
  saved?: unknown,
  arms: readonly SimilarArm[] = SIMILAR_ARMS,
): { bandit: LinUcb<SimilarArm>; error?: string } {
  if (saved === undefined || saved === null) return { bandit: new LinUcb<SimilarArm>(arms, SIMILAR_FEATURE_DIM, { alpha: SIMILAR_ALPHA }) };
  try {
    return { bandit: LinUcb.fromJSON<SimilarArm>(saved, arms, SIMILAR_FEATURE_DIM) };
  } catch (e) {
    return {
      bandit: new LinUcb<SimilarArm>(arms, SIMILAR_FEATURE_DIM, { alpha: SIMILAR_ALPHA }),
      error: e instanceof Error ? e.message : String(e),
    };
  }
}

// The embedded model's loop guard: a small greedy model falls into cycles (`t: t: t: t:`,
// `str: str: str:`, the same line again and again) and fills its whole token budget with them.
// Before each greedy pick, the token that would extend a cycle past its allowance is masked, so
// the model writes its next-best token instead (a new line, another name, the end). Only the
// generated ids are read: repeating the prompt (copying retrieved code) is never held back.
import { maskUnlessNothingLeft } from './maskTokens';

export interface LoopGuardOptions {
  /** Longest cycle looked for, in tokens (a short line). */
  maxPeriod: number;
  /** Copies of a cycle allowed in a row, by its length in tokens: 1 token, 2-3 tokens, longer. */
  copies: readonly [number, number, number];
}

export const DEFAULT_LOOP_GUARD: LoopGuardOptions = { maxPeriod: 16, copies: [6, 3, 2] };

function allowedCopies(period: number, options: LoopGuardOptions): number {
  return period === 1 ? options.copies[0] : period <= 3 ? options.copies[1] : options.copies[2];
}

/**
 * The tokens that would continue a cycle at the end of `ids` beyond its allowed copies. A tail
 * of `period` p is periodic over its last L tokens when ids[i] = ids[i - p] throughout; the next
 * token of that cycle is ids[n - p], banned once L has reached p x copies. Each id once.
 */
export function loopContinuations(ids: readonly number[], options: LoopGuardOptions = DEFAULT_LOOP_GUARD): number[] {
  const n = ids.length;
  const banned: number[] = [];
  for (let p = 1; p <= options.maxPeriod && 2 * p <= n; p++) {
    const need = p * allowedCopies(p, options);
    if (n < need) continue;
    let periodic = p;
    while (periodic < need && ids[n - 1 - periodic] === ids[n - 1 - periodic + p]) periodic++;
    // `periodic` counts the tail tokens (from the end) that follow the cycle, the first unit included.
    const next = ids[n - p]!;
    if (periodic >= need && !banned.includes(next)) banned.push(next);
  }
  return banned;
}

/** Mask the cycle-extending tokens, unless that would leave no finite choice; how many it masked. */
export function applyLoopGuard(ids: readonly number[], logits: Float32Array, options: LoopGuardOptions = DEFAULT_LOOP_GUARD): number {
  const banned = loopContinuations(ids, options).filter((id) => logits[id]! > -Infinity);
  if (banned.length === 0) return 0;
  return maskUnlessNothingLeft(logits, new Set(banned)) ? banned.length : 0;
}

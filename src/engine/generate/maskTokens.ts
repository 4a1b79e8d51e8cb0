// The embedded client's token bans (the held end, a blank line's enders, the loop guard) share one
// rule: a ban never leaves the model without a finite choice.

/** Set `ids` to -Infinity unless no other token would stay finite; whether it masked. */
export function maskUnlessNothingLeft(logits: Float32Array, ids: ReadonlySet<number>): boolean {
  for (let i = 0; i < logits.length; i++) {
    if (!ids.has(i) && logits[i]! > -Infinity) {
      for (const id of ids) logits[id] = -Infinity;
      return true;
    }
  }
  return false;
}

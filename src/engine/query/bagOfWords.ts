// Bag-of-words tokens and Jaccard similarity (RepoCoder's RG-1 similarity, and CodeRAG's
// Jaccard fallback when the probing model is missing).

// Unicode word runs, so that non-ASCII identifiers are words too.
const WORD = /[\p{L}\p{N}_\p{Mn}\p{Pc}]+/gu;

/** The set of word tokens of a text (identifiers, keywords, numbers), case kept. */
export function wordSet(text: string): Set<string> {
  return new Set(text.match(WORD) ?? []);
}

/** |A ∩ B| / |A ∪ B|; 0 when both are empty. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let common = 0;
  for (const t of small) if (large.has(t)) common++;
  return common / (a.size + b.size - common);
}

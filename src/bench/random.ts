// A small seeded PRNG so that `bench build` samples the same cases for the same seed everywhere.

/** A 32-bit hash of a string (MurmurHash3's finaliser over FNV-1a), used to turn seeds into states. */
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: uniform floats in [0, 1) from a 32-bit state. */
export function seededRandom(seed: string | number): () => number {
  let state = hashString(String(seed));
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` distinct indices of [0, size) drawn uniformly (partial Fisher-Yates), returned in ascending order. */
export function sampleIndices(size: number, n: number, random: () => number): number[] {
  if (n >= size) return Array.from({ length: size }, (_, i) => i);
  const pool = Array.from({ length: size }, (_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (size - i));
    const tmp = pool[i]!;
    pool[i] = pool[j]!;
    pool[j] = tmp;
  }
  return pool.slice(0, n).sort((a, b) => a - b);
}

// LRU cache of completions keyed by what the model saw, pre-filled for typing through: after a
// completion T at prefix P, the keys P + T[0..k] (k <= 50) map to the rest of T, so typing the
// first characters of the shown suggestion is served without a model call (docs/ARCHITECTURE.md "Prior art": Tabby).
// Further into a long suggestion (a whole method body), the recent completions are matched
// directly: the text typed since P is a start of T.

interface CachedCompletion {
  text: string;
  traceId: string;
}

const PREFIX_KEY_CHARS = 2000;
const SUFFIX_KEY_CHARS = 200;
const TYPE_THROUGH_CHARS = 50;
/** Completions kept for typing through past TYPE_THROUGH_CHARS. */
const RECENT_SHOWN = 16;

interface Shown {
  filePath: string;
  prefix: string;
  suffixKey: string;
  completion: CachedCompletion;
}

function cacheKey(filePath: string, prefix: string, suffix: string): string {
  return `${filePath}\u0000${prefix.slice(-PREFIX_KEY_CHARS)}\u0000${suffix.slice(0, SUFFIX_KEY_CHARS)}`;
}

export class CompletionCache {
  private readonly map = new Map<string, CachedCompletion>();
  /** Most recent first. */
  private recent: Shown[] = [];

  constructor(private capacity: number) {}

  get size(): number {
    return this.map.size;
  }

  resize(capacity: number): void {
    this.capacity = capacity;
    if (capacity <= 0) this.recent = [];
    this.evict();
  }

  get(filePath: string, prefix: string, suffix: string): CachedCompletion | undefined {
    const key = cacheKey(filePath, prefix, suffix);
    const hit = this.map.get(key);
    if (hit) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    return this.typedThrough(filePath, prefix, suffix);
  }

  /** The rest of a recent completion whose first characters (more than the pre-filled keys hold) were typed since its prefix. */
  private typedThrough(filePath: string, prefix: string, suffix: string): CachedCompletion | undefined {
    const suffixKey = suffix.slice(0, SUFFIX_KEY_CHARS);
    for (const s of this.recent) {
      const typed = prefix.length - s.prefix.length;
      if (s.filePath !== filePath || s.suffixKey !== suffixKey || typed <= TYPE_THROUGH_CHARS || typed >= s.completion.text.length)
        continue;
      if (prefix.startsWith(s.prefix) && prefix.endsWith(s.completion.text.slice(0, typed)))
        return { text: s.completion.text.slice(typed), traceId: s.completion.traceId };
    }
    return undefined;
  }

  /** Store a completion and its typing-through continuations. */
  put(filePath: string, prefix: string, suffix: string, completion: CachedCompletion): void {
    if (this.capacity <= 0) return;
    const limit = Math.min(completion.text.length - 1, TYPE_THROUGH_CHARS);
    for (let k = 0; k <= limit; k++) {
      const key = cacheKey(filePath, prefix + completion.text.slice(0, k), suffix);
      this.map.delete(key);
      this.map.set(key, { text: completion.text.slice(k), traceId: completion.traceId });
    }
    if (completion.text.length - 1 > TYPE_THROUGH_CHARS)
      this.recent = [
        { filePath, prefix, suffixKey: suffix.slice(0, SUFFIX_KEY_CHARS), completion },
        ...this.recent.slice(0, RECENT_SHOWN - 1),
      ];
    this.evict();
  }

  clear(): void {
    this.map.clear();
    this.recent = [];
  }

  private evict(): void {
    while (this.map.size > this.capacity) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.map.delete(oldest.value);
    }
  }
}

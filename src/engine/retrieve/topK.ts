// Bounded top-k selection with a binary min-heap: O(n log k), no full sort of the scored set.

interface Scored<T> {
  value: T;
  score: number;
}

/** Keeps the k highest scores; ties keep the earlier-offered value (deterministic results). */
export class TopK<T> {
  private readonly heap: Array<Scored<T> & { seq: number }> = [];
  private seq = 0;

  constructor(private readonly k: number) {}

  /** Lower than the current k-th best (so a caller can skip work). */
  get threshold(): number {
    return this.heap.length < this.k ? -Infinity : (this.heap[0]?.score ?? -Infinity);
  }

  offer(value: T, score: number): void {
    if (this.k <= 0) return;
    const entry = { value, score, seq: this.seq++ };
    if (this.heap.length < this.k) {
      this.heap.push(entry);
      this.up(this.heap.length - 1);
    } else if (this.less(this.heap[0]!, entry)) {
      this.heap[0] = entry;
      this.down(0);
    }
  }

  /** Best first. */
  sorted(): Array<Scored<T>> {
    return [...this.heap].sort((a, b) => b.score - a.score || a.seq - b.seq).map(({ value, score }) => ({ value, score }));
  }

  // a ranks below b: lower score, or equal score and offered later.
  private less(a: { score: number; seq: number }, b: { score: number; seq: number }): boolean {
    return a.score < b.score || (a.score === b.score && a.seq > b.seq);
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

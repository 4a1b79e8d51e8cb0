// TF-IDF with cosine similarity (CodeRAG section 2.2.1, sparse path; sklearn's TfidfVectorizer
// defaults: raw counts, smooth idf = ln((1+n)/(1+df)) + 1, l2-normalised vectors).
// Documents are grouped by file so a changed file re-tokenises only itself; the postings are a
// compressed sparse layout rebuilt lazily (one pass over cached term vectors) before a query.
import { codeTerms, type TermOptions } from './codeTerms';
import { TopK } from '../topK';

interface DocVector {
  terms: Uint32Array;
  counts: Float32Array;
}

interface Group<T> {
  docs: T[];
  vectors: DocVector[];
}

export interface TfIdfHit<T> {
  doc: T;
  score: number;
}

export class TfIdfIndex<T> {
  private readonly termIds = new Map<string, number>();
  private readonly groups = new Map<string, Group<T>>();
  private dirty = true;
  // Compressed postings, valid when !dirty.
  private docs: T[] = [];
  private docGroup: Int32Array = new Int32Array(0);
  private groupIds = new Map<string, number>();
  private postingStart: Int32Array = new Int32Array(1);
  private postingDoc: Int32Array = new Int32Array(0);
  private postingWeight: Float32Array = new Float32Array(0);
  private idf: Float32Array = new Float32Array(0);
  private scores: Float32Array = new Float32Array(0);

  constructor(
    private readonly textOf: (doc: T) => string,
    private readonly termOptions: TermOptions = {},
  ) {}

  /** Replace the documents of one group (a file); an empty list removes the group. */
  setGroup(key: string, docs: readonly T[]): void {
    if (docs.length === 0) {
      if (this.groups.delete(key)) this.dirty = true;
      return;
    }
    const vectors = docs.map((d) => this.vectorize(this.textOf(d)));
    this.groups.set(key, { docs: [...docs], vectors });
    this.dirty = true;
  }

  removeGroup(key: string): void {
    if (this.groups.delete(key)) this.dirty = true;
  }

  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.docs.length;
    return n;
  }

  private vectorize(text: string): DocVector {
    const counts = new Map<number, number>();
    for (const term of codeTerms(text, this.termOptions)) {
      let id = this.termIds.get(term);
      if (id === undefined) {
        id = this.termIds.size;
        this.termIds.set(term, id);
      }
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    const terms = new Uint32Array(counts.size);
    const values = new Float32Array(counts.size);
    let i = 0;
    for (const [t, c] of counts) {
      terms[i] = t;
      values[i] = c;
      i++;
    }
    return { terms, counts: values };
  }

  /** Rebuild postings, idf and normalised weights from the cached term vectors (O(postings)). */
  refresh(): void {
    if (!this.dirty) return;
    const termCount = this.termIds.size;
    const df = new Int32Array(termCount);
    const docs: T[] = [];
    const vectors: DocVector[] = [];
    const docGroup: number[] = [];
    const groupIds = new Map<string, number>();
    // Sorted keys: document numbering (and so tie order) does not depend on update history.
    for (const key of [...this.groups.keys()].sort()) {
      const g = this.groups.get(key)!;
      const gid = groupIds.size;
      groupIds.set(key, gid);
      for (let i = 0; i < g.docs.length; i++) {
        docs.push(g.docs[i]!);
        const v = g.vectors[i]!;
        vectors.push(v);
        docGroup.push(gid);
        for (let k = 0; k < v.terms.length; k++) df[v.terms[k]!]!++;
      }
    }
    const n = docs.length;
    const idf = new Float32Array(termCount);
    const start = new Int32Array(termCount + 1);
    for (let t = 0; t < termCount; t++) {
      idf[t] = Math.log((1 + n) / (1 + df[t]!)) + 1;
      start[t + 1] = start[t]! + df[t]!;
    }
    const total = start[termCount]!;
    const postingDoc = new Int32Array(total);
    const postingWeight = new Float32Array(total);
    const fill = start.slice(0, termCount);
    for (let d = 0; d < n; d++) {
      const v = vectors[d]!;
      let norm = 0;
      for (let k = 0; k < v.terms.length; k++) {
        const w = v.counts[k]! * idf[v.terms[k]!]!;
        norm += w * w;
      }
      const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let k = 0; k < v.terms.length; k++) {
        const t = v.terms[k]!;
        const at = fill[t]!++;
        postingDoc[at] = d;
        postingWeight[at] = v.counts[k]! * idf[t]! * inv;
      }
    }
    this.docs = docs;
    this.docGroup = Int32Array.from(docGroup);
    this.groupIds = groupIds;
    this.postingStart = start;
    this.postingDoc = postingDoc;
    this.postingWeight = postingWeight;
    this.idf = idf;
    this.scores = new Float32Array(n);
    this.dirty = false;
  }

  /** Cosine top-k for a query text; documents of `excludeGroup` (the unfinished file) are skipped. */
  query(text: string, k: number, excludeGroup?: string): Array<TfIdfHit<T>> {
    this.refresh();
    const qCounts = new Map<number, number>();
    for (const term of codeTerms(text, this.termOptions)) {
      const id = this.termIds.get(term);
      if (id !== undefined && id < this.idf.length) qCounts.set(id, (qCounts.get(id) ?? 0) + 1);
    }
    if (qCounts.size === 0 || this.docs.length === 0) return [];
    let qNorm = 0;
    for (const [t, c] of qCounts) qNorm += (c * this.idf[t]!) ** 2;
    qNorm = Math.sqrt(qNorm);
    // Dense accumulation: scanning a Float32Array of n scores is cheaper than tracking and sorting
    // the touched documents when common terms (self, return, this) touch most of them.
    const scores = this.scores;
    scores.fill(0);
    for (const [t, c] of qCounts) {
      const qw = (c * this.idf[t]!) / qNorm;
      const end = this.postingStart[t + 1]!;
      const docs = this.postingDoc;
      const weights = this.postingWeight;
      for (let p = this.postingStart[t]!; p < end; p++) scores[docs[p]!]! += qw * weights[p]!;
    }
    const excluded = excludeGroup === undefined ? -1 : (this.groupIds.get(excludeGroup) ?? -1);
    const top = new TopK<number>(k);
    // Offered in document order, so ties break the same way on every run.
    let threshold = 0;
    for (let d = 0; d < scores.length; d++) {
      const s = scores[d]!;
      if (s <= threshold || this.docGroup[d] === excluded) continue;
      top.offer(d, s);
      threshold = Math.max(0, top.threshold);
    }
    return top.sorted().map(({ value, score }) => ({ doc: this.docs[value]!, score }));
  }
}

// TF-IDF with cosine similarity (CodeRAG section 2.2.1, sparse path; sklearn's TfidfVectorizer
// defaults: raw counts, smooth idf = ln((1+n)/(1+df)) + 1, l2-normalised vectors).
// Documents are grouped by file so a changed file re-tokenises only itself; the postings are a
// compressed sparse layout rebuilt lazily (one pass over cached term vectors) before a query.
import { codeTerms, type TermOptions } from './codeTerms';
import { TopK } from '../topK';
import { ownString } from '../../util/ownString';

/**
 * One group's documents and their term vectors, packed: document i's terms and counts are
 * [start[i], start[i + 1]) of `terms` and `counts`. Two small typed arrays per document cost
 * about 700 bytes of object and allocator overhead each (35 MB on the JDK's java.base).
 */
interface Group<T> {
  docs: T[];
  start: Uint32Array;
  terms: Uint32Array;
  counts: Uint16Array;
}

interface TfIdfHit<T> {
  doc: T;
  score: number;
}

/** Postings (and documents) a paced refresh builds between two hands of the event loop back. */
const STEP_POSTINGS = 200_000;

export class TfIdfIndex<T> {
  private readonly termIds = new Map<string, number>();
  private readonly groups = new Map<string, Group<T>>();
  private dirty = true;
  /** Counts the changes of groups, so that a paced rebuild knows whether what it read is still current. */
  private version = 0;
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
      this.removeGroup(key);
      return;
    }
    this.groups.set(key, this.vectorize(docs));
    this.dirty = true;
    this.version++;
  }

  removeGroup(key: string): void {
    if (!this.groups.delete(key)) return;
    this.dirty = true;
    this.version++;
  }

  get size(): number {
    let n = 0;
    for (const g of this.groups.values()) n += g.docs.length;
    return n;
  }

  private vectorize(docs: readonly T[]): Group<T> {
    const start = new Uint32Array(docs.length + 1);
    const terms: number[] = [];
    const counts: number[] = [];
    const bag = new Map<number, number>();
    docs.forEach((doc, i) => {
      bag.clear();
      for (const term of codeTerms(this.textOf(doc), this.termOptions)) {
        let id = this.termIds.get(term);
        if (id === undefined) {
          id = this.termIds.size;
          // The term may be a slice of the item's text: kept as a key, it would keep the text.
          this.termIds.set(ownString(term), id);
        }
        bag.set(id, (bag.get(id) ?? 0) + 1);
      }
      for (const [t, c] of bag) {
        terms.push(t);
        counts.push(Math.min(c, 0xffff));
      }
      start[i + 1] = terms.length;
    });
    return { docs: [...docs], start, terms: Uint32Array.from(terms), counts: Uint16Array.from(counts) };
  }

  /** Rebuild postings, idf and normalised weights from the cached term vectors (O(postings)). */
  refresh(): void {
    if (!this.dirty) return;
    const steps = this.rebuild();
    while (!steps.next().done);
  }

  /**
   * refresh() handing the event loop back (`pause`, awaited between steps of about STEP_POSTINGS
   * postings): on 71,067 items (nova and mypy together) one go held the server about 120 ms on a
   * busy 2-core machine. The postings are those refresh() builds; documents changed meanwhile leave
   * the index dirty for the next refresh.
   */
  async refreshPaced(pause: () => Promise<void>): Promise<void> {
    if (!this.dirty) return;
    const steps = this.rebuild();
    while (!steps.next().done) await pause();
  }

  /** The rebuild of refresh(), yielding between steps; it commits only if no group changed meanwhile. */
  private *rebuild(): Generator<void, void, void> {
    const version = this.version;
    const termCount = this.termIds.size;
    const df = new Int32Array(termCount);
    const docs: T[] = [];
    // Per document: its group and its position there.
    const docOf: Array<[Group<T>, number]> = [];
    const docGroup: number[] = [];
    const groupIds = new Map<string, number>();
    let work = 0;
    // Sorted keys: document numbering (and so tie order) does not depend on update history.
    for (const key of [...this.groups.keys()].sort()) {
      const g = this.groups.get(key)!;
      const gid = groupIds.size;
      groupIds.set(key, gid);
      for (let i = 0; i < g.docs.length; i++) {
        docs.push(g.docs[i]!);
        docOf.push([g, i]);
        docGroup.push(gid);
      }
      for (let k = 0; k < g.terms.length; k++) df[g.terms[k]!]!++;
      work += g.terms.length + g.docs.length;
      if (work >= STEP_POSTINGS) {
        work = 0;
        yield;
      }
    }
    const n = docs.length;
    const idf = new Float32Array(termCount);
    const start = new Int32Array(termCount + 1);
    for (let t = 0; t < termCount; t++) {
      idf[t] = Math.log((1 + n) / (1 + df[t]!)) + 1;
      start[t + 1] = start[t]! + df[t]!;
    }
    yield;
    const total = start[termCount]!;
    const postingDoc = new Int32Array(total);
    const postingWeight = new Float32Array(total);
    const fill = start.slice(0, termCount);
    work = 0;
    for (let d = 0; d < n; d++) {
      const [g, i] = docOf[d]!;
      const from = g.start[i]!;
      const to = g.start[i + 1]!;
      let norm = 0;
      for (let k = from; k < to; k++) {
        const w = g.counts[k]! * idf[g.terms[k]!]!;
        norm += w * w;
      }
      const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let k = from; k < to; k++) {
        const t = g.terms[k]!;
        const at = fill[t]!++;
        postingDoc[at] = d;
        postingWeight[at] = g.counts[k]! * idf[t]! * inv;
      }
      work += 2 * (to - from);
      if (work >= STEP_POSTINGS) {
        work = 0;
        yield;
      }
    }
    // A group set meanwhile (or a refresh() that has already committed): this rebuild is stale.
    if (version !== this.version || !this.dirty) return;
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

// Dense retrieval path (CodeRAG section 2.2.1): the code encoder embeds every knowledge-base item
// at index time and the query at request time; cosine top-j over one contiguous matrix of int8
// codes per item family (functions, variables; int8Rows.ts), as the sparse path does. Vectors are
// persisted next to the KB index and recomputed only for items whose text changed.
import type { KbItem } from '../../kb/types';
import type { KnowledgeBase } from '../../kb/KnowledgeBase';
import { ChangeScheduler } from '../../kb/changeScheduler';
import type { Encoder } from '../../models/types';
import { onnxRowScorer, type RowScorer } from '../../models/OnnxRowScorer';
import { snippetOfItem, type PathResult, type RetrievalRequest, type Retriever, type ScoredSnippet } from '../types';
import { TopK } from '../topK';
import { denseFilePath, readCodedCache, saveVectors, textHash, type CodedRow, type DenseRow } from './denseStore';
import { quantize, quantizeInto, scanInt8Rows } from './int8Rows';
import { denseText } from './denseText';
import type { Disposable } from '../../util/disposable';
import { errorMessage, throwIfAborted } from '../../util/errors';
import { getLogger } from '../../util/logger';
import { eventLoopYielder } from '../../util/yielder';

const log = getLogger('retrieve');

/** The knowledge-base surface the dense path needs. */
export type DenseSource = Pick<KnowledgeBase, 'paths' | 'file' | 'onDidChange'>;

/** The encoder surface the dense path needs (models/OnnxEncoder). */
export type DenseEncoder = Pick<Encoder, 'name' | 'dim' | 'embed' | 'fingerprint' | 'embedItems'>;

export interface DenseProgress {
  /** Items embedded so far in this run, of `total` that needed embedding. */
  done: number;
  total: number;
}

export interface DenseRetrieverOptions {
  /** The KB's index folder; vectors go to dense-<encoder>.bin there. Omit to keep them in memory only. */
  indexFolder?: string;
  /** Texts per embed call: the unit of progress and cancellation (default 64). */
  chunkSize?: number;
  /**
   * A chunk also ends once its texts reach this many characters (each counted up to
   * TEXT_CHARS_COUNTED; the encoder truncates longer ones). Bounds how long one embed call holds
   * the thread (an ONNX run is synchronous). Default: no bound.
   */
  chunkChars?: number;
  /**
   * Awaited before each chunk of a background run (prepare): the host lets its foreground work go
   * first (a server pauses while a completion request runs). Not awaited when a request embeds.
   */
  pace?: (signal: AbortSignal) => Promise<void>;
  onProgress?: (p: DenseProgress) => void;
  /**
   * Scores a family's rows against the query in one ONNX MatMul (default: models/OnnxRowScorer,
   * loaded by prepare() when a family has ONNX_MIN_ROWS rows, else on first use; a function here
   * replaces that loader). null: always the JavaScript loop (also the fallback when ONNX fails).
   */
  rowScorer?: RowScorer | null | (() => Promise<RowScorer>);
}

/**
 * Families with fewer rows are scanned in JavaScript. One query against random int8 rows of 192
 * dimensions, top 15, median of 300 in one process (2 cores): 256 rows 0.065 ms in JavaScript,
 * 0.039 ms through ONNX; 1,024 rows 0.23 / 0.06 ms; 4,096 rows 0.93 / 0.19 ms (the bar stood at
 * 4,096 before, from an older measurement). Below 256 rows the scan is too short to matter.
 */
const ONNX_MIN_ROWS = 256;

/** Characters of one text counted against chunkChars: about the encoder's 256-token window of code. */
const TEXT_CHARS_COUNTED = 1024;

/** What the encoder embeds for an item (denseText: Python docstrings cut to their first sentence). */
function embeddedText(item: KbItem): string {
  return denseText(item.text, item.lang);
}

const hashes = new WeakMap<KbItem, string>();

/** textHash of embeddedText(item): the key of the item's vector (items are immutable; a changed file brings new ones). */
function itemHash(item: KbItem): string {
  let h = hashes.get(item);
  if (h === undefined) hashes.set(item, (h = textHash(embeddedText(item))));
  return h;
}

/** What the last prepare() did, for the trace and the tests. */
interface DensePrepareReport {
  /** How the saved vectors were found: loaded, missing, invalid (why), or in memory only. */
  store: 'loaded' | 'missing' | 'inMemory' | { invalid: string };
  embedded: number;
  reused: number;
  items: number;
  elapsedMs: number;
}

interface Family {
  items: KbItem[];
  /** items.length * dim int8 codes of the L2-normalised rows, row-major. */
  codes: Int8Array;
  /** One scale per row (int8Rows). */
  scales: Float32Array;
  /** Rows [start, end) of each file (rows are grouped by file), so a search skips one file cheaply. */
  fileRows: Map<string, [number, number]>;
}

/** A compiled vector's place: row `row` of the functions (parity 0) or the variables (parity 1). */
function rowKey(row: number, parity: 0 | 1): number {
  return row * 2 + parity;
}

function isFunction(item: KbItem): boolean {
  return item.kind === 'function' || item.kind === 'classFunction';
}

export class DenseRetriever implements Retriever, Disposable {
  readonly name = 'dense' as const;
  /**
   * Vectors by text hash: identical text, identical vector (and a moved item keeps its vector).
   * A compiled vector is known by its row alone (rowKey: no object per vector); `loose` holds the
   * ones not yet compiled (the saved store's, those embedded since) until compile().
   */
  private rows = new Map<string, number>();
  private readonly loose = new Map<string, CodedRow>();
  /** Items per file, as last embedded. */
  private readonly files = new Map<string, KbItem[]>();
  /** Re-embeds changed files soon after a change, so that the next query does not pay for it. */
  private readonly changes: ChangeScheduler;
  private functions: Family = emptyFamily();
  private variables: Family = emptyFamily();
  private loaded = false;
  private storeRead = false;
  private storeStatus: DensePrepareReport['store'] = 'inMemory';
  lastReport: DensePrepareReport | undefined;
  private scorer: Promise<RowScorer | null> | undefined;

  constructor(
    private readonly kb: DenseSource,
    private readonly encoder: DenseEncoder,
    private readonly options: DenseRetrieverOptions = {},
  ) {
    this.changes = new ChangeScheduler(kb, {
      built: () => this.loaded,
      refresh: (signal) => this.prepare(signal),
      onError: (e) => log.warn(`dense re-embedding failed: ${errorMessage(e)}`),
    });
  }

  /** The vector file this retriever reads and writes (undefined without an index folder). */
  get storePath(): string | undefined {
    return this.options.indexFolder ? denseFilePath(this.options.indexFolder, this.encoder.name) : undefined;
  }

  get size(): number {
    return this.functions.items.length + this.variables.items.length;
  }

  /**
   * Embed every item (first call) or the items of files changed since; one run at a time, paced by
   * options.pace. The ONNX row scorer is loaded here when a family needs it, not by the first
   * completion (its session took 1.5-4 ms of the first request on each dev repository).
   */
  async prepare(signal: AbortSignal): Promise<void> {
    await this.prepareWith(signal, true);
    if (Math.max(this.functions.items.length, this.variables.items.length) >= ONNX_MIN_ROWS) await this.rowScorer();
  }

  private prepareWith(signal: AbortSignal, paced: boolean): Promise<void> {
    return this.changes.exclusive(async () => {
      this.lastReport = await this.run(signal, paced);
    });
  }

  private async readStore(): Promise<void> {
    if (this.storeRead) return;
    this.storeRead = true;
    const path = this.storePath;
    if (!path) return;
    this.storeStatus = await readCodedCache(path, this.encoder, this.loose);
    if (typeof this.storeStatus === 'object') log.warn(`dense vectors at ${path} are invalid (${this.storeStatus.invalid}); re-embedding`);
  }

  /** Chunks of at most chunkSize texts and chunkChars characters, shortest texts first (little padding). */
  private chunks(todo: Array<[string, string]>): Array<Array<[string, string]>> {
    const size = Math.max(1, this.options.chunkSize ?? 64);
    const budget = this.options.chunkChars ?? Infinity;
    const sorted = [...todo].sort((a, b) => a[1].length - b[1].length);
    const out: Array<Array<[string, string]>> = [];
    let part: Array<[string, string]> = [];
    let chars = 0;
    for (const entry of sorted) {
      const cost = Math.min(entry[1].length, TEXT_CHARS_COUNTED);
      if (part.length > 0 && (part.length >= size || chars + cost > budget)) {
        out.push(part);
        part = [];
        chars = 0;
      }
      part.push(entry);
      chars += cost;
    }
    if (part.length > 0) out.push(part);
    return out;
  }

  private async run(signal: AbortSignal, paced: boolean): Promise<DensePrepareReport> {
    const start = performance.now();
    await this.readStore();
    const found = this.storeStatus;
    const changed = this.changes.take();
    const paths = this.loaded ? changed : this.kb.paths();
    const first = !this.loaded;
    this.loaded = true;
    const touched = new Map<string, KbItem[]>();
    for (const path of paths) touched.set(path, [...(this.kb.file(path)?.items ?? [])]);
    // Texts without a vector, each once.
    const need = new Map<string, string>();
    let reused = 0;
    // Hashing every item's text takes a while on a large repository (java.base: 71,000 items): hand the event loop back now and then.
    const pause = eventLoopYielder();
    for (const items of touched.values()) {
      await pause();
      for (const item of items) {
        const hash = itemHash(item);
        if (this.rows.has(hash) || this.loose.has(hash)) reused++;
        else if (!need.has(hash)) need.set(hash, embeddedText(item));
      }
    }
    const todo = [...need.entries()];
    const pace = paced ? this.options.pace : undefined;
    let done = 0;
    try {
      for (const part of this.chunks(todo)) {
        throwIfAborted(signal);
        this.options.onProgress?.({ done, total: todo.length });
        if (pace) await pace(signal);
        throwIfAborted(signal);
        const texts = part.map(([, text]) => text);
        const vecs = await (this.encoder.embedItems ? this.encoder.embedItems(texts, signal) : this.encoder.embed(texts, signal));
        const dim = this.encoder.dim;
        const codes = new Int8Array(part.length * dim);
        part.forEach(([hash], j) => {
          const v = vecs[j];
          if (!v || v.length !== dim)
            throw new Error(`encoder ${this.encoder.name} returned a vector of length ${v?.length ?? 0}, expected ${dim}`);
          const scale = quantizeInto(v, codes, j * dim);
          this.loose.set(hash, { codes: codes.subarray(j * dim, (j + 1) * dim), scale });
        });
        done += part.length;
      }
      this.options.onProgress?.({ done, total: todo.length });
    } catch (e) {
      // What was embedded stays cached; the files wait for the next call.
      this.changes.putBack(paths);
      if (first) this.loaded = false;
      throw e;
    }
    for (const [path, items] of touched) {
      if (items.length > 0) this.files.set(path, items);
      else this.files.delete(path);
    }
    await this.compile();
    // Write when vectors or items changed, or the file on disk is missing or was invalid.
    if (todo.length > 0 || !first || this.storeStatus !== 'loaded') await this.save();
    return { store: found, embedded: todo.length, reused, items: this.size, elapsedMs: performance.now() - start };
  }

  /**
   * Copies the vector of a text hash (a loose one, or a row of the compiled matrices) into row `at`
   * of `codes` / `scales`, with no view or object made for a compiled one; false when there is none.
   */
  private copyVector(hash: string, codes: Int8Array, scales: Float32Array, at: number): boolean {
    const dim = this.encoder.dim;
    const loose = this.loose.get(hash);
    if (loose) {
      codes.set(loose.codes, at * dim);
      scales[at] = loose.scale;
      return true;
    }
    const key = this.rows.get(hash);
    if (key === undefined) return false;
    const family = key % 2 === 0 ? this.functions : this.variables;
    const row = Math.floor(key / 2);
    const from = family.codes;
    for (let d = 0, src = row * dim, dst = at * dim; d < dim; d++) codes[dst + d] = from[src + d]!;
    scales[at] = family.scales[row]!;
    return true;
  }

  /**
   * Rebuild the two contiguous matrices; every vector an item uses becomes a row of them, the rest
   * are dropped. Handing the event loop back every ~25 ms: in one go it held the server for about
   * 330 ms on 36,854 items (nova), with the save after it.
   */
  private async compile(): Promise<void> {
    const dim = this.encoder.dim;
    const fns: KbItem[] = [];
    const vars: KbItem[] = [];
    for (const path of [...this.files.keys()].sort()) for (const item of this.files.get(path)!) (isFunction(item) ? fns : vars).push(item);
    const rows = new Map<string, number>();
    const pause = eventLoopYielder();
    const build = async (items: KbItem[], parity: 0 | 1): Promise<Family> => {
      const codes = new Int8Array(items.length * dim);
      const scales = new Float32Array(items.length);
      const fileRows = new Map<string, [number, number]>();
      for (let i = 0; i < items.length; i++) {
        if (i % 256 === 0) await pause();
        const item = items[i]!;
        const hash = itemHash(item);
        if (this.copyVector(hash, codes, scales, i) && !rows.has(hash)) rows.set(hash, rowKey(i, parity));
        const span = fileRows.get(item.path);
        if (span) span[1] = i + 1;
        else fileRows.set(item.path, [i, i + 1]);
      }
      return { items, codes, scales, fileRows };
    };
    // Both built before either replaces the old matrices, which copyVector() and searches meanwhile still read.
    const functions = await build(fns, 0);
    const variables = await build(vars, 1);
    this.functions = functions;
    this.variables = variables;
    this.rows = rows;
    this.loose.clear();
  }

  private async save(): Promise<void> {
    const path = this.storePath;
    if (!path) return;
    const dim = this.encoder.dim;
    const rows: DenseRow[] = [];
    const all = [...this.functions.items, ...this.variables.items];
    const codes = new Int8Array(all.length * dim);
    const scales = new Float32Array(all.length);
    const pause = eventLoopYielder();
    for (let i = 0; i < all.length; i++) {
      if (i % 256 === 0) await pause();
      const item = all[i]!;
      const hash = itemHash(item);
      rows.push({ id: item.id, hash });
      this.copyVector(hash, codes, scales, i);
    }
    try {
      await saveVectors(path, {
        encoder: this.encoder.name,
        fingerprint: this.encoder.fingerprint ?? '',
        dim,
        rows,
        data: { layout: 'int8', codes, scales },
      });
      this.storeStatus = 'loaded';
    } catch (e) {
      // Persisting is an optimisation: the vectors in memory still serve.
      log.warn(`could not save dense vectors to ${path}: ${errorMessage(e)}`);
    }
  }

  async retrieve(request: RetrievalRequest, signal: AbortSignal): Promise<PathResult> {
    const notes: string[] = [];
    // A paced background run waits for the very request calling this: search what is embedded now.
    if (this.changes.busy && this.options.pace) notes.push('embedding in the background: searching the vectors embedded so far');
    else if (!this.loaded || this.changes.hasPending) await this.prepareWith(signal, false);
    throwIfAborted(signal);
    const text = request.query.text;
    if (text.trim() === '' || this.size === 0) return { results: [], notes: [...notes, `${this.size} items embedded`] };
    const [vector] = await this.encoder.embed([text], signal);
    throwIfAborted(signal);
    if (!vector || vector.length !== this.encoder.dim) throw new Error(`encoder ${this.encoder.name} returned no query vector`);
    const query = quantize(vector);
    const j = request.topJ;
    const exclude = request.file.path;
    const functions = await this.top(this.functions, query, j, exclude);
    const variables = await this.top(this.variables, query, j, exclude);
    // The families are ranked separately (CodeRAG: top functions + top variables): take turns.
    const results: ScoredSnippet[] = [];
    for (let i = 0; i < Math.max(functions.length, variables.length); i++) {
      for (const hit of [functions[i], variables[i]]) if (hit) results.push({ snippet: snippetOfItem(hit.value), score: hit.score });
    }
    return {
      results,
      notes: [
        ...notes,
        `${this.functions.items.length} functions, ${this.variables.items.length} variables embedded (dim ${this.encoder.dim})`,
      ],
    };
  }

  /** Cosine top-k (rows and query are unit vectors: a dot product), skipping the unfinished file. */
  private async top(
    family: Family,
    query: { codes: Int8Array; scale: number },
    k: number,
    excludePath: string,
  ): Promise<Array<{ value: KbItem; score: number }>> {
    const top = new TopK<KbItem>(k);
    const [skipFrom, skipTo] = family.fileRows.get(excludePath) ?? [0, 0];
    const rows = family.items.length;
    const scorer = rows >= ONNX_MIN_ROWS ? await this.rowScorer() : null;
    let dots: Int32Array | undefined;
    if (scorer) {
      try {
        dots = await scorer.scores(family.codes, rows, query.codes);
      } catch (e) {
        log.warn(`dense search falls back to JavaScript: ${errorMessage(e)}`);
        this.scorer = Promise.resolve(null);
      }
    }
    if (dots) {
      // The same product as scanInt8Rows, so both ways give the same scores.
      const offer = (from: number, to: number, s: Int32Array): void => {
        for (let i = from; i < to; i++) {
          const score = s[i]! * family.scales[i]! * query.scale;
          if (score > top.threshold) top.offer(family.items[i]!, score);
        }
      };
      offer(0, skipFrom, dots);
      offer(skipTo, rows, dots);
    } else {
      scanInt8Rows(family.codes, family.scales, family.items, query.codes, query.scale, 0, skipFrom, top);
      scanInt8Rows(family.codes, family.scales, family.items, query.codes, query.scale, skipTo, rows, top);
    }
    return top.sorted();
  }

  private rowScorer(): Promise<RowScorer | null> {
    const given = this.options.rowScorer;
    this.scorer ??=
      given !== undefined && typeof given !== 'function'
        ? Promise.resolve(given)
        : (given ?? onnxRowScorer)().catch((e: unknown) => {
            log.warn(`dense search uses JavaScript (the ONNX row scorer did not load): ${errorMessage(e)}`);
            return null;
          });
    return this.scorer;
  }

  dispose(): void {
    this.changes.dispose();
  }
}

function emptyFamily(): Family {
  return { items: [], codes: new Int8Array(0), scales: new Float32Array(0), fileRows: new Map() };
}

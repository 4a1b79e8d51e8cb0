// ProCC's code-window index (ProCC, Tan et al. 2024; docs/ARCHITECTURE.md "Papers: implementation notes"): fixed windows of
// the repository's code, each with its lexical vector from the shipped encoder (the dense path's),
// its word set (Jaccard) and a summary built from the knowledge base's signatures and docstrings
// of what the window defines and uses. Kept current per file through the knowledge base's change
// events; vectors are persisted next to the KB index and recomputed only for changed text.
import { join } from 'node:path';
import type { KnowledgeBase } from '../kb/KnowledgeBase';
import type { KbItem } from '../kb/types';
import { ChangeScheduler } from '../kb/changeScheduler';
import { wordSet } from '../query/bagOfWords';
import type { DenseEncoder } from '../retrieve/dense/denseRetrieve';
import { readVectorCache, saveVectors, textHash, type DenseRow } from '../retrieve/dense/denseStore';
import type { Disposable } from '../util/disposable';
import { errorMessage, throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import { readIndexedText } from '../util/safeFile';

const log = getLogger('similar');

/** What the window index reads of the knowledge base. */
export type WindowSource = Pick<KnowledgeBase, 'paths' | 'file' | 'onDidChange' | 'repoRoot' | 'itemsNamed'>;

export interface CodeWindow {
  /** `path#window:start-end` (0-based lines). */
  id: string;
  path: string;
  startLine: number;
  endLine: number;
  text: string;
  /** Word tokens of the code (Jaccard). */
  readonly words: ReadonlySet<string>;
  /** Signatures and first docstring lines of what the window defines and uses. */
  readonly summary: string;
  readonly summaryWords: ReadonlySet<string>;
}

export interface WindowIndexOptions {
  /** Lines per window (default 20; ProCC's reference: 60, see DEFAULT_WINDOW). */
  windowLines?: number;
  /** Lines between window starts (default = windowLines: no overlap). */
  strideLines?: number;
  /** The KB's index folder; vectors go to windows-<encoder>-<lines>x<stride>.bin there. Omit: in memory only. */
  indexFolder?: string;
  /** The file text, with LF line breaks, for a repo-relative path (default: read it from the repository folder). */
  readText?: (path: string) => Promise<string>;
  /** Texts per embed call (default 32). */
  chunkSize?: number;
  /** Awaited before each embed call of a background run: the host lets foreground work go first. */
  pace?: (signal: AbortSignal) => Promise<void>;
  onProgress?: (p: { done: number; total: number }) => void;
  /**
   * Embeds a chunk of windows at the encoder's full length, as the queries that search them are
   * (ProCC's figures were measured so; knowledge-base items are embedded shorter, the encoder's
   * item_max_length): a host with an encoder thread runs it there. Default: encoder.embed.
   */
  embedWindows?: (texts: string[], signal: AbortSignal) => Promise<Float32Array[]>;
  /**
   * Whether a build also makes every window's word sets and summary (the summary perspective and the
   * lexically matched hypothetical line search them all; read at each build). Default: no, they are made
   * when first read.
   */
  wordSets?: () => boolean;
}

/** 20 lines (about the encoder's 256 tokens) without overlap, chosen by measurement on the tuning cases. */
export const DEFAULT_WINDOW = { lines: 20, stride: 20 } as const;

interface WindowIndexReport {
  store: 'loaded' | 'missing' | 'inMemory' | { invalid: string };
  windows: number;
  embedded: number;
  reused: number;
  elapsedMs: number;
  /** Bytes held by vectors, texts and word sets (an estimate). */
  bytes: number;
}

export interface WindowHit {
  window: CodeWindow;
  score: number;
}

/** The summary of code: signatures (and first docstring lines) of items it defines, then of names it uses. */
export function summarizeCode(
  text: string,
  defined: readonly KbItem[],
  lookup: (name: string) => readonly KbItem[],
  exclude?: (item: KbItem) => boolean,
  maxUsed = 12,
): string {
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const item of defined) {
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    const doc = item.docstring
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim();
    lines.push(`${item.signature.trim()}${doc ? ` — ${doc}` : ''}`);
  }
  const definedNames = new Set(defined.map((i) => i.name));
  let used = 0;
  for (const name of wordSet(text)) {
    if (used >= maxUsed) break;
    if (definedNames.has(name) || name.length < 3 || /^\d/.test(name)) continue;
    const item = lookup(name).find((i) => !exclude?.(i));
    if (!item || seen.has(item.id)) continue;
    seen.add(item.id);
    lines.push(item.signature.trim());
    used++;
  }
  return lines.join('\n');
}

/**
 * A window whose word sets and summary are made when a perspective first reads them: the lexical
 * perspective (the default's) reads only the text and the vector, and a large repository's windows
 * would otherwise hold every word set and summary (docs/BENCHMARKS.md "Similar code for Java").
 */
class LazyWindow implements CodeWindow {
  readonly id: string;
  private wordsMade: ReadonlySet<string> | undefined;
  private summaryMade: string | undefined;
  private summaryWordsMade: ReadonlySet<string> | undefined;

  constructor(
    readonly path: string,
    readonly startLine: number,
    readonly endLine: number,
    readonly text: string,
    private readonly kb: Pick<WindowSource, 'file' | 'itemsNamed'>,
  ) {
    this.id = `${path}#window:${startLine}-${endLine}`;
  }

  get words(): ReadonlySet<string> {
    return (this.wordsMade ??= wordSet(this.text));
  }

  /** Made from the knowledge base as it is when first read; a change to the file makes new windows. */
  get summary(): string {
    if (this.summaryMade === undefined) {
      const items = this.kb.file(this.path)?.items ?? [];
      const defined = items.filter((i) => i.range.startLine >= this.startLine && i.range.startLine <= this.endLine);
      this.summaryMade = summarizeCode(this.text, defined, (n) => this.kb.itemsNamed(n));
    }
    return this.summaryMade;
  }

  get summaryWords(): ReadonlySet<string> {
    return (this.summaryWordsMade ??= wordSet(this.summary));
  }

  /** Make the word sets and the summary now (the getters keep them). */
  make(): void {
    void this.summaryWords;
    void this.words;
  }

  /** Bytes held now (an estimate): the text, and what has been made of it. */
  bytes(): number {
    return (
      2 * (this.text.length + (this.summaryMade?.length ?? 0)) + 16 * ((this.wordsMade?.size ?? 0) + (this.summaryWordsMade?.size ?? 0))
    );
  }
}

export class CodeWindowIndex implements Disposable {
  readonly windowLines: number;
  readonly stride: number;
  private readonly vectors = new Map<string, Float32Array>();
  private readonly files = new Map<string, LazyWindow[]>();
  /** Re-embeds the windows of changed files soon after a change; runs take turns. */
  private readonly changes: ChangeScheduler;
  private windowList: CodeWindow[] = [];
  private matrix = new Float32Array(0);
  private fileRows = new Map<string, [number, number]>();
  private loaded = false;
  private storeRead = false;
  private storeStatus: WindowIndexReport['store'] = 'inMemory';
  lastReport: WindowIndexReport | undefined;

  constructor(
    private readonly kb: WindowSource,
    readonly encoder: DenseEncoder,
    private readonly options: WindowIndexOptions = {},
  ) {
    this.windowLines = Math.max(1, options.windowLines ?? DEFAULT_WINDOW.lines);
    this.stride = Math.max(1, options.strideLines ?? this.windowLines);
    this.changes = new ChangeScheduler(kb, {
      built: () => this.loaded,
      refresh: (signal) => this.prepare(signal),
      onError: (e) => log.warn(`window re-embedding failed: ${errorMessage(e)}`),
    });
  }

  /**
   * Whether the windows were built and embedded once; a refresh of changed files swaps them in when
   * done, so requests meanwhile search the windows as they were.
   */
  get ready(): boolean {
    return this.loaded;
  }

  get size(): number {
    return this.windowList.length;
  }

  get storePath(): string | undefined {
    const f = this.options.indexFolder;
    return f ? join(f, `windows-${this.encoder.name.replace(/[^A-Za-z0-9._-]/g, '_')}-${this.windowLines}x${this.stride}.bin`) : undefined;
  }

  /** Every window, grouped by path in path order. */
  windows(): readonly CodeWindow[] {
    return this.windowList;
  }

  /** Build every window (first call) or those of files changed since; one run at a time. */
  prepare(signal: AbortSignal): Promise<WindowIndexReport> {
    return this.changes.exclusive(async () => (this.lastReport = await this.run(signal)));
  }

  private async run(signal: AbortSignal): Promise<WindowIndexReport> {
    const start = performance.now();
    if (!this.storeRead) await this.readStore();
    const found = this.storeStatus;
    const changed = this.changes.take();
    const paths = this.loaded ? changed : this.kb.paths();
    const known = new Set(this.kb.paths());
    const read = this.options.readText ?? ((p: string) => readIndexedText(join(this.kb.repoRoot, p)));
    const touched = new Map<string, LazyWindow[]>();
    try {
      for (const path of paths) {
        throwIfAborted(signal);
        if (!known.has(path)) {
          touched.set(path, []);
          continue;
        }
        const text = await read(path).catch(() => undefined);
        touched.set(path, text === undefined ? [] : this.slice(path, text));
      }
      const need = new Map<string, string>();
      let reused = 0;
      for (const ws of touched.values()) {
        for (const w of ws) {
          const h = textHash(w.text);
          if (this.vectors.has(h)) reused++;
          else need.set(h, w.text);
        }
      }
      const todo = [...need.entries()].sort((a, b) => a[1].length - b[1].length);
      const size = Math.max(1, this.options.chunkSize ?? 32);
      for (let i = 0; i < todo.length; i += size) {
        throwIfAborted(signal);
        this.options.onProgress?.({ done: i, total: todo.length });
        if (this.options.pace) await this.options.pace(signal);
        const part = todo.slice(i, i + size);
        const texts = part.map(([, t]) => t);
        const vecs = await (this.options.embedWindows ? this.options.embedWindows(texts, signal) : this.encoder.embed(texts, signal));
        part.forEach(([h], j) => {
          const v = vecs[j];
          if (!v || v.length !== this.encoder.dim)
            throw new Error(`encoder ${this.encoder.name} returned a vector of length ${v?.length ?? 0}, expected ${this.encoder.dim}`);
          this.vectors.set(h, v);
        });
      }
      this.options.onProgress?.({ done: todo.length, total: todo.length });
      for (const [path, ws] of touched) {
        if (ws.length > 0) this.files.set(path, ws);
        else this.files.delete(path);
      }
      const first = !this.loaded;
      this.loaded = true;
      this.compile();
      if (this.options.wordSets?.()) await this.makeWordSets(signal);
      if (todo.length > 0 || !first || this.storeStatus !== 'loaded') await this.save();
      return {
        store: found,
        windows: this.windowList.length,
        embedded: todo.length,
        reused,
        elapsedMs: performance.now() - start,
        bytes: this.bytes(),
      };
    } catch (e) {
      // What was embedded stays cached; the files wait for the next run.
      this.changes.putBack(paths);
      throw e;
    }
  }

  private slice(path: string, text: string): LazyWindow[] {
    const lines = text.split('\n');
    const out: LazyWindow[] = [];
    for (let start = 0; start < lines.length; start += this.stride) {
      const end = Math.min(lines.length, start + this.windowLines) - 1;
      const body = lines.slice(start, end + 1).join('\n');
      if (body.trim() !== '') out.push(new LazyWindow(path, start, end, body, this.kb));
      if (end >= lines.length - 1) break;
    }
    return out;
  }

  /** Every window's word sets and summary, a file at a time, yielding between files. */
  private async makeWordSets(signal: AbortSignal): Promise<void> {
    for (const ws of this.files.values()) {
      throwIfAborted(signal);
      for (const w of ws) w.make();
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  private compile(): void {
    const dim = this.encoder.dim;
    const list: CodeWindow[] = [];
    const fileRows = new Map<string, [number, number]>();
    for (const path of [...this.files.keys()].sort()) {
      const ws = this.files.get(path)!;
      fileRows.set(path, [list.length, list.length + ws.length]);
      list.push(...ws);
    }
    const matrix = new Float32Array(list.length * dim);
    const used = new Set<string>();
    list.forEach((w, i) => {
      const h = textHash(w.text);
      used.add(h);
      const v = this.vectors.get(h);
      if (!v) return;
      matrix.set(v, i * dim);
      // The vector becomes a view of its row: one copy of the floats, and the store's buffer or an old matrix can go.
      this.vectors.set(h, matrix.subarray(i * dim, (i + 1) * dim));
    });
    for (const h of [...this.vectors.keys()]) if (!used.has(h)) this.vectors.delete(h);
    this.windowList = list;
    this.matrix = matrix;
    this.fileRows = fileRows;
  }

  private bytes(): number {
    let n = this.matrix.byteLength;
    for (const ws of this.files.values()) for (const w of ws) n += w.bytes() + 96;
    return n;
  }

  private async readStore(): Promise<void> {
    this.storeRead = true;
    const path = this.storePath;
    if (!path) return;
    this.storeStatus = await readVectorCache(path, this.encoder, this.vectors);
    if (typeof this.storeStatus === 'object') log.warn(`window vectors at ${path} are invalid (${this.storeStatus.invalid}); re-embedding`);
  }

  private async save(): Promise<void> {
    const path = this.storePath;
    if (!path) return;
    const rows: DenseRow[] = this.windowList.map((w) => ({ id: w.id, hash: textHash(w.text) }));
    try {
      await saveVectors(path, {
        encoder: this.encoder.name,
        fingerprint: this.encoder.fingerprint ?? '',
        dim: this.encoder.dim,
        rows,
        data: { layout: 'float32', vectors: this.matrix },
      });
      this.storeStatus = 'loaded';
    } catch (e) {
      log.warn(`could not save window vectors to ${path}: ${errorMessage(e)}`);
    }
  }

  /** Cosine top-k of the windows against a unit vector, skipping one file (the unfinished one). */
  searchVector(query: Float32Array, k: number, excludePath: string): WindowHit[] {
    const dim = this.encoder.dim;
    const [skipFrom, skipTo] = this.fileRows.get(excludePath) ?? [0, 0];
    const hits: WindowHit[] = [];
    let threshold = -Infinity;
    for (let i = 0; i < this.windowList.length; i++) {
      if (i >= skipFrom && i < skipTo) continue;
      let dot = 0;
      const base = i * dim;
      for (let d = 0; d < dim; d++) dot += this.matrix[base + d]! * query[d]!;
      if (dot > threshold || hits.length < k) {
        hits.push({ window: this.windowList[i]!, score: dot });
        if (hits.length > k) {
          hits.sort((a, b) => b.score - a.score);
          hits.length = k;
          threshold = hits[k - 1]!.score;
        }
      }
    }
    return hits.sort((a, b) => b.score - a.score);
  }

  /** Jaccard top-k of the windows' code words (or their summaries' words) against a word set. */
  searchWords(query: ReadonlySet<string>, k: number, excludePath: string, field: 'words' | 'summaryWords' = 'words'): WindowHit[] {
    const hits: WindowHit[] = [];
    if (query.size === 0) return hits;
    for (const w of this.windowList) {
      if (w.path === excludePath) continue;
      const words = w[field];
      if (words.size === 0) continue;
      let common = 0;
      for (const t of query) if (words.has(t)) common++;
      if (common === 0) continue;
      hits.push({ window: w, score: common / (query.size + words.size - common) });
    }
    return hits.sort((a, b) => b.score - a.score || a.window.id.localeCompare(b.window.id)).slice(0, k);
  }

  dispose(): void {
    this.changes.dispose();
  }
}

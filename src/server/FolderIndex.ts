// One workspace folder's index as the server holds it: its knowledge base and repository index, its
// state and the progress of its background builds (dense embeddings, ProCC's code windows), and
// what the status says of it. The WorkspaceIndexer opens, indexes and closes it.
import type { ReceiverTyping } from '../engine/pipeline';
import { fileURLToPath } from 'node:url';
import { relative, sep } from 'node:path';
import type { IndexReport, KnowledgeBase } from '../engine/kb/KnowledgeBase';
import { isOutsideRelative, SKIP_REASON_TEXT } from '../engine/kb/scan';
import type { Parsers } from '../engine/kb/parsers';
import type { RepoMethods } from '../engine/body/RepoMethods';
import type { RepositoryIndex } from '../engine/index/repositoryIndex';
import type { Retriever } from '../engine/retrieve/types';
import type { DenseProgress } from '../engine/retrieve/dense/denseRetrieve';
import type { SimilarRetrieval } from '../engine/similar/perspectives';
import type { SimilarMode } from '../engine/similar/chooseWindows';
import { DisposableStore, type Disposable } from '../engine/util/disposable';
import { errorMessage, isCancellationError } from '../engine/util/errors';
import { getLogger } from '../engine/util/logger';
import { MAX_SKIPPED_LISTED, type FolderIndexSummary } from '../protocol/protocol';

const log = getLogger('indexer');

export class FolderIndex implements Disposable {
  private current: FolderIndexSummary['state'] = 'pending';
  /** The readiness lease open while the folder is ready (none otherwise). */
  private readiness: AbortController | undefined;
  report: IndexReport | undefined;
  message: string | undefined;
  /** The dense path joins once its embeddings are ready (it would embed inside a request otherwise). */
  denseReady = false;
  /** The dense path's embedding progress while it runs (for the trace of requests meanwhile). */
  denseProgress: DenseProgress | undefined;
  /** Why the dense path is off for good (its embedding failed). */
  denseOff: string | undefined;
  /** Why ProCC's code windows are not used (their build failed). */
  similarFailed: string | undefined;
  private densePreparing: Promise<void> | undefined;
  private similarPreparing: Promise<void> | undefined;
  private readonly store = new DisposableStore();
  private saveTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private readonly closing = new AbortController();

  constructor(
    readonly uri: string,
    readonly root: string,
    readonly name: string,
    readonly kb: KnowledgeBase,
    readonly paths: RepositoryIndex,
    readonly parsers: Parsers,
  ) {
    this.store.add({ dispose: () => paths.dispose() });
    this.store.add(kb);
  }

  /** The body mode's view of the repository: its methods and the identifier -> using-methods index, kept current per file. */
  get methods(): RepoMethods {
    return this.paths.methods;
  }

  get state(): FolderIndexSummary['state'] {
    return this.current;
  }

  /** Entering 'ready' opens a new readiness lease; leaving it for any other state ends the one open. */
  set state(next: FolderIndexSummary['state']) {
    if (next === this.current) return;
    const was = this.current;
    // The state changes first: what a lease's end wakes reads the folder as it is now.
    this.current = next;
    if (was === 'ready') this.readiness?.abort();
    if (next === 'ready' && !this.disposed) this.readiness = new AbortController();
  }

  /**
   * Live from when the folder became ready until it leaves that state (indexing again, failed) or is
   * closed: what a request reads of the folder while its lease holds is of one index. Taken while the
   * folder is not ready, it is aborted already.
   */
  get lease(): AbortSignal {
    return this.current === 'ready' && this.readiness ? this.readiness.signal : AbortSignal.abort();
  }

  /** Receiver typing for checked completions. */
  get receivers(): ReceiverTyping {
    return this.paths.receivers;
  }

  /** The paths that are ready; a dense path still embedding stands in as one that says so in the trace. */
  get retrievers(): Retriever[] {
    const dense = this.paths.dense;
    if (!dense) return this.paths.retrievers;
    if (this.denseReady) return [...this.paths.retrievers, dense];
    const p = this.denseProgress;
    const why =
      this.denseOff ??
      (p
        ? `not ready: embedding ${p.done.toLocaleString('en-US')}/${p.total.toLocaleString('en-US')} items`
        : 'not ready: waiting for the knowledge base');
    return [...this.paths.retrievers, notReady(dense.name, why)];
  }

  /** Embed in the background (once at a time); the dense path joins the folder's paths when done. */
  prepareDense(signal: AbortSignal, done: (error?: unknown) => void): void {
    const dense = this.paths.dense;
    if (!dense || this.densePreparing) return;
    this.densePreparing = dense.prepare(signal).then(
      () => {
        this.denseReady = true;
        this.densePreparing = undefined;
        done();
      },
      (e: unknown) => {
        this.densePreparing = undefined;
        if (!isCancellationError(e)) this.denseOff = `off: ${errorMessage(e)}`;
        done(e);
      },
    );
  }

  /** ProCC's perspectives (their `ready` says whether the code windows are built). */
  get similar(): SimilarRetrieval | undefined {
    return this.paths.similar;
  }

  /** Build ProCC's code windows in the background (once at a time); requests use them when ready. False: none started. */
  prepareSimilar(signal: AbortSignal, done: (error?: unknown) => void): boolean {
    const windows = this.paths.windows;
    if (!windows || this.similarPreparing) return false;
    this.similarPreparing = windows.prepare(signal).then(
      () => {
        this.similarPreparing = undefined;
        this.similarFailed = undefined;
        done();
      },
      (e: unknown) => {
        this.similarPreparing = undefined;
        if (!isCancellationError(e)) this.similarFailed = errorMessage(e);
        done(e);
      },
    );
    return true;
  }

  /** Repo-relative path (forward slashes) of a file URI inside this folder, else undefined. */
  relPath(uri: string): string | undefined {
    let abs: string;
    try {
      abs = fileURLToPath(uri);
    } catch {
      return undefined;
    }
    const rel = relative(this.root, abs);
    // `..x.py` is a file of this folder; `../x.py` is not.
    if (!rel || isOutsideRelative(rel) || /^[a-zA-Z]:/.test(rel)) return undefined;
    return rel.split(sep).join('/');
  }

  /** `similar`: coderag.similar.mode (the windows are built only when it asks for similar code). */
  summary(similar: SimilarMode): FolderIndexSummary {
    const s = this.kb.summary();
    const items = Object.values(s.items).reduce((a, b) => a + b, 0);
    return {
      uri: this.uri,
      state: this.state,
      files: s.files,
      items,
      ...(this.report ? { elapsedMs: Math.round(this.report.elapsedMs) } : {}),
      ...(this.message ? { message: this.message } : {}),
      dense: this.denseSummary(),
      similar: this.similarSummary(similar),
      ...this.skippedSummary(),
    };
  }

  /** The files the scan or the work bounds left out, with why, as the status lists them. */
  private skippedSummary(): Pick<FolderIndexSummary, 'skipped' | 'skippedCount'> {
    const skipped = this.kb.skippedFiles();
    if (skipped.length === 0) return {};
    return {
      skipped: skipped.slice(0, MAX_SKIPPED_LISTED).map((s) => ({
        path: s.path,
        reason: s.reason,
        detail: s.detail !== undefined ? `${SKIP_REASON_TEXT[s.reason]}: ${s.detail}` : SKIP_REASON_TEXT[s.reason],
      })),
      skippedCount: skipped.length,
    };
  }

  private denseSummary(): NonNullable<FolderIndexSummary['dense']> {
    const dense = this.paths.dense;
    if (!dense) return { state: 'off', items: 0, message: 'the code encoder did not load' };
    if (this.denseReady) return { state: 'ready', items: dense.size };
    if (this.denseOff !== undefined) return { state: 'failed', items: 0, message: this.denseOff.replace(/^off: /, '') };
    // A folder whose indexing failed never starts its embedding run.
    if (this.state === 'failed') return { state: 'off', items: 0, message: 'the folder was not indexed' };
    return { state: 'building', items: 0 };
  }

  private similarSummary(mode: SimilarMode): NonNullable<FolderIndexSummary['similar']> {
    const windows = this.paths.windows;
    if (!windows) return { state: 'off', windows: 0, message: 'the code encoder did not load' };
    if (mode === 'off') return { state: 'off', windows: 0, message: 'coderag.similar.mode is off' };
    if (windows.ready) return { state: 'ready', windows: windows.size };
    if (this.similarFailed !== undefined) return { state: 'failed', windows: 0, message: this.similarFailed };
    if (mode === 'auto' && !this.similarPreparing)
      return { state: 'off', windows: 0, message: 'built when the embedded model first completes Java (coderag.similar.mode is auto)' };
    // The windows are built after the dense vectors, with the same encoder.
    const dense = this.denseSummary();
    if (dense.state === 'off' || dense.state === 'failed')
      return { state: 'off', windows: 0, message: dense.state === 'off' ? 'dense retrieval is off' : 'dense retrieval failed' };
    return { state: 'building', windows: 0 };
  }

  /** Aborted when the folder is closed (removed from the workspace, deleted, rebuilt, shut down): its indexing stops. */
  get closed(): AbortSignal {
    return this.closing.signal;
  }

  /** Saves are batched: many saves in a burst write the index once. */
  scheduleSave(): void {
    // A folder closed (shutdown, removed, rebuilt) writes nothing more.
    if (this.saveTimer || this.disposed) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = undefined;
      this.kb.save().catch((e: unknown) => log.warn(`saving the index of ${this.name} failed: ${errorMessage(e)}`));
    }, 2000);
  }

  dispose(): void {
    this.disposed = true;
    this.closing.abort();
    this.readiness?.abort();
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.store.dispose();
  }
}

/** A path that is not ready: it answers at once with why, so the trace lists it as skipped. */
function notReady(name: Retriever['name'], why: string): Retriever {
  return { name, retrieve: () => Promise.resolve({ results: [], skipped: why }) };
}

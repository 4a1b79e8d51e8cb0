// One knowledge base per workspace folder (multi-root: one index each), built in the background
// with work-done progress, kept current by didSave and watched-file events, rebuilt on request.
import { homedir } from 'node:os';
import { stat } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sep } from 'node:path';
import {
  DidChangeWatchedFilesNotification,
  FileChangeType,
  WatchKind,
  type ClientCapabilities,
  type Connection,
  type ServerCapabilities,
  type WorkDoneProgressReporter,
  type WorkspaceFolder,
} from 'vscode-languageserver/node';
import { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import { indexFolderFor } from '../engine/kb/store';
import { workspaceRootProblem, type ScanOptions } from '../engine/kb/scan';
import { langOfPath, sourceFileGlob, type Parsers } from '../engine/kb/parsers';
import type { DenseProgress } from '../engine/retrieve/dense/denseRetrieve';
import type { RepositoryIndex } from '../engine/index/repositoryIndex';
import { readsWordSets, type SimilarMode } from '../engine/similar/chooseWindows';
import { CancellationError, errorMessage, isCancellationError } from '../engine/util/errors';
import { getLogger } from '../engine/util/logger';
import { storageMessage } from '../engine/util/safeFile';
import { RebuildIndexRequest, type FolderIndexSummary, type RebuildIndexResult } from '../protocol/protocol';
import type { ServerConfig } from './config';
import { FolderIndex } from './FolderIndex';
import type { Feature } from './feature';
import type { StatusReporter } from './StatusReporter';
import type { Trust } from './trust';
import { localFolderPath } from './workspaceFolders';

const log = getLogger('indexer');

/** Background indexing ends in cancellation at shutdown; anything else was logged where it happened. */
function quietly(e: unknown): undefined {
  if (!isCancellationError(e)) log.error(`indexing stopped: ${errorMessage(e)}`);
  return undefined;
}

export interface RetrieversContext {
  indexFolder: string;
  /** Progress of the dense path's embedding run. */
  onDenseProgress: (p: DenseProgress) => void;
}

/** The repository index over one knowledge base (the Server decides which retrieval paths exist). */
type RetrieversFactory = (kb: KnowledgeBase, parsers: Parsers, context: RetrieversContext) => Promise<RepositoryIndex>;

interface IndexerHost {
  parsers: () => Promise<Parsers>;
  cacheRoot: () => string;
  retrievers: RetrieversFactory;
}

export class WorkspaceIndexer implements Feature {
  private connection: Connection | undefined;
  private config: ServerConfig | undefined;
  private folders = new Map<string, FolderIndex>();
  /** Folders not indexed at all (not a local folder, the file-system root, the home folder, failed to open), with the reason. */
  private refused = new Map<string, string>();
  private workspaceFolders: WorkspaceFolder[] = [];
  private canCreateProgress = false;
  private canWatch = false;
  private canFolderEvents = false;
  private readonly abort = new AbortController();
  private indexing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly host: IndexerHost,
    private readonly status: StatusReporter,
    private readonly trust: Trust,
  ) {}

  /** Whether the workspace is trusted (untrusted: nothing is indexed). */
  private get trusted(): boolean {
    return this.trust.trusted;
  }

  initialize(connection: Connection, caps: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities> {
    this.connection = connection;
    this.config = config;
    this.canCreateProgress = caps.window?.workDoneProgress === true;
    this.canWatch = caps.workspace?.didChangeWatchedFiles?.dynamicRegistration === true;
    connection.onRequest(RebuildIndexRequest.type, (params, token) => {
      const progress = params.workDoneToken !== undefined ? connection.window.attachWorkDoneProgress(params.workDoneToken) : undefined;
      const controller = new AbortController();
      const sub = token.onCancellationRequested(() => controller.abort());
      return this.rebuild(params.folderUri, params.full === true, progress, controller.signal).finally(() => sub.dispose());
    });
    connection.onDidChangeWatchedFiles((params) => {
      for (const change of params.changes) void this.onFileEvent(change.uri, change.type === FileChangeType.Deleted);
    });
    this.canFolderEvents = caps.workspace?.workspaceFolders === true;
    return { workspace: { workspaceFolders: { supported: true, changeNotifications: true } } };
  }

  setWorkspaceFolders(folders: WorkspaceFolder[]): void {
    this.workspaceFolders = folders;
  }

  async initialized(): Promise<void> {
    // Subscribed only now: before the initialize response the server may not send requests.
    if (this.canFolderEvents && this.connection) {
      this.connection.workspace.onDidChangeWorkspaceFolders((e) => {
        for (const removed of e.removed) {
          // Its indexing, if running, stops (FolderIndex.closed); one still queued finds it gone.
          this.folders.get(removed.uri)?.dispose();
          this.folders.delete(removed.uri);
          this.refused.delete(removed.uri);
        }
        const isRemoved = (f: WorkspaceFolder): boolean => e.removed.some((r) => r.uri === f.uri);
        // A folder both added and removed by one event is not in the workspace.
        const added = e.added.filter((f) => !isRemoved(f));
        this.workspaceFolders = [...this.workspaceFolders.filter((f) => !isRemoved(f)), ...added];
        this.publish();
        if (this.trusted) this.indexing = this.indexing.then(() => this.indexAll(added, undefined, this.abort.signal)).catch(quietly);
      });
    }
    if (this.canWatch && this.connection) {
      // Every indexed extension, and folders: a folder moved or deleted is one event for the folder
      // alone (editors fold its files' events into it), so created and deleted paths of any name come.
      const watchers = [
        { globPattern: sourceFileGlob(), kind: WatchKind.Change },
        { globPattern: '**/*', kind: WatchKind.Create | WatchKind.Delete },
      ];
      await this.connection.client
        .register(DidChangeWatchedFilesNotification.type, { watchers })
        .catch((e: unknown) => log.warn(`file watching unavailable: ${errorMessage(e)}`));
    }
    if (!this.trusted) {
      this.publish();
      return;
    }
    // Background: the request handlers answer while this runs.
    this.indexing = this.indexAll(this.workspaceFolders, undefined, this.abort.signal).catch(quietly);
  }

  /**
   * Build a folder's code windows for ProCC's similar code, only while coderag.similar.mode asks for
   * similar code: they cost an embedding run and memory (a text and a vector per window). Under `auto`
   * only when a request `demanded` them (wantSimilar), since most folders and models never use them.
   */
  private startSimilar(folderIndex: FolderIndex, demanded = false): boolean {
    const mode = this.config?.similar.mode ?? 'off';
    if (this.abort.signal.aborted || mode === 'off' || (mode === 'auto' && !demanded) || !folderIndex.denseReady) return false;
    return folderIndex.prepareSimilar(this.abort.signal, (err) => {
      if (err !== undefined && !isCancellationError(err)) log.warn(`similar code for ${folderIndex.name} is off: ${errorMessage(err)}`);
      else if (err === undefined)
        log.info(`similar code ready for ${folderIndex.name}: ${folderIndex.paths.windows?.size ?? 0} code windows`);
      if (!this.abort.signal.aborted) this.publish();
    });
  }

  /** A request wanted code windows the folder has not built (`auto`): build them in the background; later requests use them. */
  wantSimilar(folderIndex: FolderIndex): void {
    if (folderIndex.similarFailed !== undefined) return;
    if (this.startSimilar(folderIndex, true)) this.publish();
  }

  updateConfig(config: ServerConfig): void {
    const before = this.scanOptions();
    const similarWas = this.config?.similar.mode ?? 'off';
    this.config = config;
    const ahead = (m: SimilarMode): boolean => m !== 'off' && m !== 'auto';
    const now = config.similar.mode;
    // A mode that builds ahead starts every folder; one that reads word sets has them made (the next build makes them).
    if ((!ahead(similarWas) && ahead(now)) || (readsWordSets(now) && !readsWordSets(similarWas)))
      for (const f of this.folders.values()) this.startSimilar(f);
    // The folders' similar-code state follows the setting.
    if (similarWas !== now) this.publish();
    const after = this.scanOptions();
    if (JSON.stringify(before) === JSON.stringify(after) || !this.trusted || this.folders.size === 0) return;
    // Excluded globs and limits decide which files are in the index: re-scan the open folders now
    // (only new or changed files are parsed; files now left out drop their items).
    const open = this.workspaceFolders.filter((f) => this.folders.has(f.uri));
    this.indexing = this.indexing
      .catch(() => undefined)
      .then(() => this.indexAll(open, undefined, this.abort.signal))
      .catch(quietly);
  }

  private scanOptions(): ScanOptions {
    return { exclude: this.config?.exclude ?? [], maxFileBytes: this.config?.maxFileBytes, maxFiles: this.config?.maxFiles };
  }

  /** The folder index holding a document, the innermost when folders nest. */
  folderFor(uri: string): { folder: FolderIndex; relPath: string } | undefined {
    let best: { folder: FolderIndex; relPath: string } | undefined;
    for (const folder of this.folders.values()) {
      const rel = folder.relPath(uri);
      if (rel !== undefined && (!best || folder.root.length > best.folder.root.length)) best = { folder, relPath: rel };
    }
    return best;
  }

  /** Wait for the indexing in progress (tests, the CLI). */
  whenIdle(): Promise<unknown> {
    return this.indexing;
  }

  summaries(): FolderIndexSummary[] {
    return [
      ...[...this.folders.values()].map((f) => f.summary(this.similarMode())),
      ...[...this.refused].map(([uri, message]): FolderIndexSummary => ({ uri, state: 'failed', files: 0, items: 0, message })),
    ];
  }

  private similarMode(): SimilarMode {
    return this.config?.similar.mode ?? 'off';
  }

  private publish(): void {
    this.status.update({ folders: this.summaries() });
  }

  /** Whether the folder is (still) one of the workspace's. */
  private inWorkspace(uri: string): boolean {
    return this.workspaceFolders.some((f) => f.uri === uri);
  }

  /**
   * The folder's index, opened once; `fresh` starts it without the saved index (a full rebuild).
   * Undefined when the folder left the workspace while it was being opened.
   */
  private async openFolder(folder: WorkspaceFolder, root: string, fresh: boolean): Promise<FolderIndex | undefined> {
    const existing = this.folders.get(folder.uri);
    if (existing) {
      existing.kb.setScanOptions(this.scanOptions());
      return existing;
    }
    const parsers = await this.host.parsers();
    const indexFolder = indexFolderFor(this.host.cacheRoot(), root);
    const kb = await KnowledgeBase.open({
      repoRoot: root,
      indexFolder,
      parsers,
      ...this.scanOptions(),
      discardSavedIndex: fresh,
    });
    let last = 0;
    let index: FolderIndex | undefined;
    const paths = await this.host.retrievers(kb, parsers, {
      indexFolder,
      onDenseProgress: (p) => {
        if (index) index.denseProgress = p.done < p.total ? p : undefined;
        const now = performance.now();
        if (now - last < 200 && p.done < p.total) return;
        last = now;
        // Files parsed count as done: the folder's percentage over files and items alike.
        const files = kb.summary().files;
        const percent = Math.floor((100 * (files + p.done)) / Math.max(1, files + p.total));
        this.status.update({
          indexing:
            p.done < p.total
              ? { folder: `${folder.name} (embeddings)`, done: p.done, total: p.total, percent, dense: { done: p.done, total: p.total } }
              : undefined,
        });
      },
    });
    index = new FolderIndex(folder.uri, root, folder.name, kb, paths, parsers);
    if (!this.inWorkspace(folder.uri) || this.folders.has(folder.uri)) {
      // Removed meanwhile (or opened by a run beside this one): this index is never used.
      index.dispose();
      return this.folders.get(folder.uri);
    }
    this.folders.set(folder.uri, index);
    return index;
  }

  private async progressReporter(
    attached: WorkDoneProgressReporter | undefined,
    title: string,
  ): Promise<WorkDoneProgressReporter | undefined> {
    if (attached) {
      attached.begin(title, 0, undefined, false);
      return attached;
    }
    if (!this.canCreateProgress || !this.connection) return undefined;
    try {
      const reporter = await this.connection.window.createWorkDoneProgress();
      reporter.begin(title, 0, undefined, false);
      return reporter;
    } catch {
      return undefined;
    }
  }

  private async indexAll(
    folders: readonly WorkspaceFolder[],
    attached: WorkDoneProgressReporter | undefined,
    signal: AbortSignal,
    full = false,
  ): Promise<FolderIndexSummary[]> {
    // Stopped (shutdown) before it began: not even a progress bar.
    if (signal.aborted) throw new CancellationError();
    const progress = await this.progressReporter(attached, 'CodeRAG: indexing');
    const summaries: FolderIndexSummary[] = [];
    try {
      for (const wf of folders) {
        if (signal.aborted) throw new CancellationError();
        // Removed from the workspace before its turn: never opened, never listed.
        if (!this.inWorkspace(wf.uri)) continue;
        let index: FolderIndex | undefined;
        // Each folder on its own: one that is not a local folder, the file-system root or the home
        // folder (never indexed from an editor; the CLI has --force) is skipped, and says so.
        const { root, refusal } = await rootOf(wf);
        if (root === undefined) {
          log.warn(`${wf.name}: ${refusal}`);
          this.refused.set(wf.uri, refusal);
          this.status.update({ folders: this.summaries() });
          summaries.push({ uri: wf.uri, state: 'failed', files: 0, items: 0, message: refusal });
          continue;
        }
        this.refused.delete(wf.uri);
        try {
          if (full) {
            // The protocol's promise: drop the saved index and parse every file again.
            this.folders.get(wf.uri)?.dispose();
            this.folders.delete(wf.uri);
          }
          index = await this.openFolder(wf, root, full);
          if (!index) continue;
          index.state = 'indexing';
          this.publish();
          const name = wf.name;
          let lastReport = 0;
          // Removing the folder from the workspace stops its indexing, not the other folders'.
          const folderSignal = AbortSignal.any([signal, index.closed]);
          index.report = await index.kb.index((p) => {
            const now = performance.now();
            if (now - lastReport < 100 && p.done < p.total) return;
            lastReport = now;
            this.status.update({ indexing: { folder: name, done: p.done, total: p.total } });
            progress?.report(p.total > 0 ? Math.floor((100 * p.done) / p.total) : 0, `${name} ${p.done}/${p.total}`);
          }, folderSignal);
          for (const r of index.paths.retrievers) await r.prepare?.(folderSignal);
          if (this.folders.get(wf.uri) !== index) {
            index = undefined;
            continue;
          }
          // Deleted while it was being indexed: the files it lists are gone; the status says so.
          if (await this.dropIfGone(index)) {
            index = undefined;
            summaries.push({ uri: wf.uri, state: 'failed', files: 0, items: 0, message: this.refused.get(wf.uri) });
            continue;
          }
          index.state = 'ready';
          index.message = undefined;
          const folderIndex = index;
          folderIndex.prepareDense(this.abort.signal, (e) => {
            if (e !== undefined && !isCancellationError(e)) log.warn(`dense retrieval for ${folderIndex.name} is off: ${errorMessage(e)}`);
            else if (e === undefined)
              log.info(`dense retrieval ready for ${folderIndex.name}: ${folderIndex.paths.dense?.size ?? 0} items embedded`);
            this.status.update({ indexing: undefined, folders: this.summaries() });
            // ProCC's windows after the dense vectors, so the two do not compete for the encoder.
            this.startSimilar(folderIndex);
          });
          log.info(
            `indexed ${name}: ${index.report.files} files, ${index.report.parsed} parsed, in ${index.report.elapsedMs.toFixed(0)} ms`,
          );
        } catch (e) {
          if (isCancellationError(e) || signal.aborted) {
            // The folder was closed (removed from the workspace), not the run stopped: on to the next.
            if (!signal.aborted && index?.closed.aborted) {
              index = undefined;
              continue;
            }
            throw e;
          }
          log.error(`indexing ${wf.name} failed: ${errorMessage(e)}`);
          if (index) {
            index.state = 'failed';
            index.message = errorMessage(e);
          } else {
            // Not even opened: the status still lists the folder, with why.
            const message = `${wf.name}: ${errorMessage(e)}`;
            this.refused.set(wf.uri, message);
            summaries.push({ uri: wf.uri, state: 'failed', files: 0, items: 0, message });
          }
        } finally {
          this.status.update({ indexing: undefined, folders: this.summaries() });
        }
        if (index) summaries.push(index.summary(this.similarMode()));
      }
    } finally {
      progress?.done();
      this.status.update({ indexing: undefined, folders: this.summaries() }, true);
    }
    return summaries;
  }

  async rebuild(
    folderUri: string | undefined,
    full: boolean,
    progress: WorkDoneProgressReporter | undefined,
    signal: AbortSignal,
  ): Promise<RebuildIndexResult> {
    if (!this.trusted) return { folders: [] };
    const targets = this.workspaceFolders.filter((f) => folderUri === undefined || f.uri === folderUri);
    // Shutdown stops a rebuild as it stops the background indexing.
    const stop = AbortSignal.any([signal, this.abort.signal]);
    const run = this.indexing.catch(() => undefined).then(() => this.indexAll(targets, progress, stop, full));
    this.indexing = run.catch(() => undefined);
    return { folders: await run };
  }

  /** didSave: re-extract from the saved text. */
  async onSaved(uri: string, text: string): Promise<void> {
    const hit = this.folderFor(uri);
    if (!hit || !this.trusted || this.abort.signal.aborted) return;
    try {
      if (await hit.folder.kb.updateFile(hit.relPath, text)) hit.folder.scheduleSave();
    } catch (e) {
      log.warn(`updating ${hit.relPath} failed: ${errorMessage(e)}`);
    }
  }

  /**
   * A folder whose root is gone (deleted, moved, replaced by a file) is closed and listed as not
   * indexed, with why: its index described files that are not there. Returns whether it was.
   */
  private async dropIfGone(folder: FolderIndex): Promise<boolean> {
    const { refusal } = await rootOf({ uri: folder.uri, name: folder.name });
    if (refusal === undefined) return false;
    if (this.folders.get(folder.uri) === folder) {
      log.warn(`${folder.name}: ${refusal}`);
      folder.dispose();
      this.folders.delete(folder.uri);
      this.refused.set(folder.uri, refusal);
      this.publish();
    }
    return true;
  }

  private async onFileEvent(uri: string, deleted: boolean): Promise<void> {
    if (!this.trusted || this.abort.signal.aborted) return;
    // A deletion may have taken a workspace folder itself (or a folder above it).
    if (deleted) for (const folder of [...this.folders.values()]) await this.dropIfGone(folder);
    const hit = this.folderFor(uri);
    if (!hit) return;
    const kb = hit.folder.kb;
    try {
      const path = fileURLToPath(uri);
      const st = await stat(path).catch(() => undefined);
      let changed: boolean;
      if (st?.isDirectory() || (!st && kb.file(hit.relPath) === undefined && kb.holdsFilesUnder(hit.relPath))) {
        // A folder created, moved or deleted: what the index holds under it follows the disk.
        changed = await kb.updateFolder(hit.relPath, AbortSignal.any([this.abort.signal, hit.folder.closed]));
      } else if (langOfPath(hit.relPath) === undefined) {
        return;
      } else {
        changed = deleted ? await kb.removeFile(hit.relPath) : await kb.updateFile(hit.relPath);
      }
      if (changed) {
        hit.folder.scheduleSave();
        this.publish();
      }
    } catch (e) {
      if (!isCancellationError(e)) log.warn(`updating ${hit.relPath} failed: ${errorMessage(e)}`);
    }
  }

  async shutdown(): Promise<void> {
    this.abort.abort();
    await this.indexing.catch(() => undefined);
    await Promise.all([...this.folders.values()].map((f) => f.kb.save().catch(() => undefined)));
    for (const f of this.folders.values()) f.dispose();
    this.folders.clear();
  }
}

/**
 * The folder's local path, or why it is not indexed: not a local folder, the file-system root, the
 * home folder, missing, or a file (an index of nothing would read as "ready, 0 items").
 */
async function rootOf(folder: WorkspaceFolder): Promise<{ root: string; refusal?: undefined } | { root?: undefined; refusal: string }> {
  const local = localFolderPath(folder);
  if ('problem' in local) return { refusal: local.problem };
  const refusal = workspaceRootProblem(local.path, homedir());
  if (refusal !== undefined) return { refusal };
  try {
    if (!(await stat(local.path)).isDirectory())
      return { refusal: `${local.path} is a file, not a folder: not indexed; open a project folder` };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return {
      refusal:
        err.code === 'ENOENT'
          ? `${local.path} does not exist: not indexed (CodeRAG indexes it once it is opened again)`
          : `${storageMessage(err, local.path)}: not indexed`,
    };
  }
  return { root: local.path };
}

export function folderFromPath(path: string): WorkspaceFolder {
  return { uri: pathToFileURL(path).toString(), name: path.split(sep).filter(Boolean).pop() ?? path };
}

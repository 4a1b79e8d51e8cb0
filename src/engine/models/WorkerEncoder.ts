// An Encoder whose model runs on a worker thread (encoderWorkerMain.ts): index-time embedding of
// a repository's items (tens of thousands of synchronous ONNX runs) leaves the main thread free
// to answer completion requests. Vectors are the worker's encoder's; the thread stays up while
// the encoder is in use and keeps the process alive only while a request is pending.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CancellationError, throwIfAborted } from '../util/errors';
import { getLogger, type LogLevel } from '../util/logger';
import type { ModelPlacement } from './device';
import { ModelError } from './errors';
import type { ModelRegistryOptions } from './ModelRegistry';
import { newTimings } from './onnxSession';
import type { Encoder, ModelTimings } from './types';

const log = getLogger('models');

/** How to start the worker thread: a script file, or code for `new Worker(code, { eval: true })`. */
export interface WorkerEntry {
  script: string;
  eval?: boolean;
}

/** What the worker is started with (workerData). */
export interface WorkerStart {
  /** Registry options; functions (fetch, progress) do not cross threads. */
  registry: Omit<ModelRegistryOptions, 'fetch' | 'onDownloadProgress'>;
  /** The encoder's name or folder (default: the shipped one). */
  name?: string;
}

export type WorkerRequest =
  { kind: 'embed'; id: number; texts: string[]; items: boolean } | { kind: 'cancel'; id: number } | { kind: 'close' };

interface EncoderInfo {
  name: string;
  path: string;
  dim: number;
  maxLength: number;
  fingerprint?: string;
  placement?: ModelPlacement;
}

export type WorkerReply =
  | { kind: 'ready'; info: EncoderInfo }
  | { kind: 'failed'; message: string }
  | { kind: 'vectors'; id: number; flat: Float32Array; count: number }
  | { kind: 'error'; id: number; message: string; cancelled: boolean }
  | { kind: 'log'; level: LogLevel; tag: string; message: string };

/**
 * The worker entry next to this module: the bundle's `encoderWorker.js` in `bundleDir`, else the
 * TypeScript source run through tsx (tests and scripts run the sources); undefined when neither is
 * there (the caller embeds in-process).
 */
export function encoderWorkerEntry(bundleDir: string): WorkerEntry | undefined {
  const bundled = join(bundleDir, 'encoderWorker.js');
  if (existsSync(bundled)) return { script: bundled };
  const source = join(__dirname, 'encoderWorkerMain.ts');
  const tsx = tsxFor(source);
  return tsx ? { script: `require(${JSON.stringify(tsx)}); require(${JSON.stringify(source)});`, eval: true } : undefined;
}

/** tsx's CommonJS hook to run a TypeScript worker `source` of this folder (tests and scripts run the sources), if both are there. */
export function tsxFor(source: string): string | undefined {
  if (!existsSync(source)) return undefined;
  try {
    return require.resolve('tsx/cjs');
  } catch {
    return undefined;
  }
}

/** Starts a thread and waits until its encoder has loaded. */
function spawn(entry: WorkerEntry, start: WorkerStart): Promise<{ worker: Worker; info: EncoderInfo }> {
  const worker = new Worker(entry.script, { eval: entry.eval === true, workerData: start });
  return new Promise((resolve, reject) => {
    const onMessage = (msg: WorkerReply): void => {
      if (msg.kind === 'log') return relayLog(msg);
      worker.off('message', onMessage);
      worker.off('error', onError);
      if (msg.kind === 'ready') return resolve({ worker, info: msg.info });
      void worker.terminate();
      reject(
        new ModelError(
          'runtime',
          msg.kind === 'failed' ? msg.message : `the encoder thread answered ${msg.kind} before it was ready`,
          start.name,
        ),
      );
    };
    const onError = (e: Error): void => {
      worker.off('message', onMessage);
      reject(new ModelError('runtime', `the encoder thread did not start: ${e.message}`, start.name, { cause: e }));
    };
    worker.on('message', onMessage);
    worker.once('error', onError);
  });
}

interface WorkerEncoderOptions {
  /**
   * The thread ends after this long without a request (its model's memory is returned) and starts
   * again on the next one (about a second). Default: it stays.
   */
  idleMs?: number;
  /**
   * After a thread has embedded at least BULK_TEXTS texts (a repository's first index), it ends
   * after this shorter wait instead: its ONNX arena has grown to the longest batch of the run, and
   * the edits that follow need little. Default: idleMs.
   */
  idleAfterBulkMs?: number;
}

/** Texts a thread embeds before idleAfterBulkMs applies to it. */
export const BULK_TEXTS = 1000;

export class WorkerEncoder implements Encoder {
  readonly timings: ModelTimings = newTimings();
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void }>();
  private closed = false;
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Texts the running thread has been sent. */
  private textsOnThread = 0;
  /** Threads started so far (the first included), for the log and tests. */
  starts = 1;

  private constructor(
    private readonly entry: WorkerEntry,
    private readonly start: WorkerStart,
    private readonly info: EncoderInfo,
    worker: Worker,
    private readonly options: WorkerEncoderOptions,
  ) {
    this.attach(worker);
  }

  get name(): string {
    return this.info.name;
  }
  get path(): string {
    return this.info.path;
  }
  get dim(): number {
    return this.info.dim;
  }
  get maxLength(): number {
    return this.info.maxLength;
  }
  get fingerprint(): string | undefined {
    return this.info.fingerprint;
  }
  get placement(): ModelPlacement | undefined {
    return this.info.placement;
  }
  /** Whether a thread is running now. */
  get running(): boolean {
    return this.worker !== undefined;
  }

  /** Starts the thread and waits until its encoder has loaded (a load failure rejects, as the registry's would). */
  static async start(entry: WorkerEntry, start: WorkerStart, options: WorkerEncoderOptions = {}): Promise<WorkerEncoder> {
    const t0 = performance.now();
    const { worker, info } = await spawn(entry, start);
    const encoder = new WorkerEncoder(entry, start, info, worker, options);
    encoder.timings.loadMs = performance.now() - t0;
    encoder.scheduleIdle();
    return encoder;
  }

  private attach(worker: Worker): void {
    this.worker = worker;
    worker.on('message', (msg: WorkerReply) => this.onReply(msg));
    worker.on('error', (e) =>
      this.failAll(worker, new ModelError('runtime', `the encoder thread failed: ${e.message}`, this.info.name, { cause: e })),
    );
    worker.on('exit', () => this.failAll(worker, new ModelError('runtime', 'the encoder thread exited', this.info.name)));
    worker.unref();
  }

  /** The running thread, started again after an idle stop. */
  private thread(): Promise<Worker> {
    if (this.worker) return Promise.resolve(this.worker);
    this.starting ??= spawn(this.entry, this.start).then(
      ({ worker, info }) => {
        this.starting = undefined;
        if (info.fingerprint !== this.info.fingerprint) {
          void worker.terminate();
          throw new ModelError('runtime', 'the encoder thread loaded another build of the encoder', this.info.name);
        }
        this.starts++;
        this.attach(worker);
        return worker;
      },
      (e: unknown) => {
        this.starting = undefined;
        throw e;
      },
    );
    return this.starting;
  }

  embed(texts: string[], signal: AbortSignal): Promise<Float32Array[]> {
    return this.request(texts, false, signal);
  }

  embedItems(texts: string[], signal: AbortSignal): Promise<Float32Array[]> {
    return this.request(texts, true, signal);
  }

  private async request(texts: string[], items: boolean, signal: AbortSignal): Promise<Float32Array[]> {
    throwIfAborted(signal);
    if (this.closed) throw new ModelError('runtime', 'the encoder thread has been closed', this.name);
    if (texts.length === 0) return [];
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    const id = this.nextId++;
    const t0 = performance.now();
    // Counted as pending while a stopped thread starts again, so that the idle stop waits for it.
    let settle: { resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void } | undefined;
    const answer = new Promise<Float32Array[]>((resolve, reject) => (settle = { resolve, reject }));
    let worker: Worker | undefined;
    const onAbort = (): void => worker?.postMessage({ kind: 'cancel', id } satisfies WorkerRequest);
    const done = (): void => {
      signal.removeEventListener('abort', onAbort);
      this.pending.delete(id);
      if (this.pending.size === 0) {
        this.worker?.unref();
        this.scheduleIdle();
      }
      this.timings.calls += 1;
      this.timings.totalRunMs += performance.now() - t0;
    };
    this.pending.set(id, { resolve: (v) => (done(), settle!.resolve(v)), reject: (e) => (done(), settle!.reject(e)) });
    try {
      worker = await this.thread();
    } catch (e) {
      this.pending.get(id)?.reject(e);
      return answer;
    }
    if (signal.aborted) {
      this.pending.get(id)?.reject(new CancellationError());
      return answer;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    // A pending request keeps the process alive (a CLI run waits for its vectors).
    worker.ref();
    this.textsOnThread += texts.length;
    worker.postMessage({ kind: 'embed', id, texts, items } satisfies WorkerRequest);
    return answer;
  }

  private scheduleIdle(): void {
    const { idleMs, idleAfterBulkMs } = this.options;
    if (idleMs === undefined || this.closed || this.idleTimer) return;
    const wait = idleAfterBulkMs !== undefined && this.textsOnThread >= BULK_TEXTS ? Math.min(idleMs, idleAfterBulkMs) : idleMs;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      const worker = this.worker;
      if (!worker || this.pending.size > 0 || this.starting) return;
      this.worker = undefined;
      this.textsOnThread = 0;
      worker.postMessage({ kind: 'close' } satisfies WorkerRequest);
      setTimeout(() => void worker.terminate(), 2000).unref();
    }, wait);
    this.idleTimer.unref();
  }

  private onReply(msg: WorkerReply): void {
    if (msg.kind === 'log') return relayLog(msg);
    if (msg.kind !== 'vectors' && msg.kind !== 'error') return;
    const waiter = this.pending.get(msg.id);
    if (!waiter) return;
    if (msg.kind === 'error')
      return waiter.reject(msg.cancelled ? new CancellationError() : new ModelError('runtime', msg.message, this.name));
    const dim = this.info.dim;
    const out: Float32Array[] = [];
    for (let i = 0; i < msg.count; i++) out.push(msg.flat.subarray(i * dim, (i + 1) * dim));
    waiter.resolve(out);
  }

  /** A thread that failed or exited: its requests fail (a thread stopped when idle has none). */
  private failAll(worker: Worker, error: Error): void {
    // A thread stopped when idle (or replaced) exits with nothing of its own pending.
    if (this.worker !== worker) return;
    this.worker = undefined;
    for (const waiter of [...this.pending.values()]) waiter.reject(error);
  }

  async dispose(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = this.worker ?? (await this.starting?.catch(() => undefined));
    this.worker = undefined;
    if (!worker) return;
    // Held until it has exited: the caller awaits this.
    worker.ref();
    worker.postMessage({ kind: 'close' } satisfies WorkerRequest);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([new Promise((r) => worker.once('exit', r)), new Promise((r) => (timer = setTimeout(r, 2000)))]);
    clearTimeout(timer);
    await worker.terminate();
  }
}

function relayLog(msg: Extract<WorkerReply, { kind: 'log' }>): void {
  const text = `[encoder thread] ${msg.message}`;
  if (msg.level === 'error') log.error(text);
  else if (msg.level === 'warn') log.warn(text);
  else if (msg.level === 'info') log.info(text);
  else log.debug(text);
}

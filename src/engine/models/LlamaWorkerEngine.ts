// The local engine on its own thread (llamaWorkerMain.ts): on the language server's thread importing
// node-llama-cpp, parsing a GGUF's header and vocabulary and tokenizing a long prompt each held the
// event loop for 100-500 ms (docs/BENCHMARKS.md "Local engine: moving session and memory"). Here
// they run on a worker thread; an unload ends the thread, which hands its memory back. Checking's
// masks and the answer's end test stay on this thread: a step that needs them sends its
// log-probabilities here and gets the choice back.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CancellationError } from '../util/errors';
import { getLogger, type LogLevel } from '../util/logger';
import {
  greedy,
  LlamaModelError,
  type LlamaEngineOptions,
  type LlamaGenerated,
  type LlamaGenerateOptions,
  type LlamaModelInfo,
  type LlamaRead,
  type LocalEngine,
} from './LlamaEngine';

export type LlamaWorkerRequest =
  | { kind: 'info' | 'texts' | 'unload'; id: number }
  | { kind: 'warm'; id: number; prompt: string }
  | {
      kind: 'generate';
      id: number;
      prompt: string;
      maxNewTokens: number;
      stop: readonly string[];
      choose: boolean;
      until: boolean;
      active: boolean;
    }
  | { kind: 'cancel'; id: number }
  | { kind: 'answer'; step: number; answer: { id: number; logprob: number } | boolean };

export type LlamaWorkerReply =
  | { kind: 'info'; id: number; info: LlamaModelInfo; eosId: number | undefined }
  | { kind: 'texts'; id: number; texts: string[] }
  | { kind: 'read'; id: number; read: LlamaRead }
  | { kind: 'generated'; id: number; out: LlamaGenerated; places: { places: number; bytes: number } }
  | { kind: 'done'; id: number }
  | { kind: 'error'; id: number; message: string; cancelled: boolean; model: boolean }
  | { kind: 'choose'; id: number; step: number; text: string; ids: number[]; logits: Float32Array }
  | { kind: 'until'; id: number; step: number; text: string }
  | { kind: 'active'; id: number; step: number; text: string }
  | { kind: 'log'; level: LogLevel; tag: string; message: string };

/** How to start the thread: the bundle's script, or the TypeScript source through tsx (tests and scripts run the sources). */
interface WorkerEntry {
  script: string;
  eval?: boolean;
}

/** The worker entry beside this module; undefined when neither the bundle's nor the source's is there (the caller runs the engine here). */
export function llamaWorkerEntry(): WorkerEntry | undefined {
  const bundled = join(__dirname, 'llamaWorker.js');
  if (existsSync(bundled)) return { script: bundled };
  const source = join(__dirname, 'llamaWorkerMain.ts');
  if (!existsSync(source)) return undefined;
  let tsx: string;
  try {
    tsx = require.resolve('tsx/cjs');
  } catch {
    return undefined;
  }
  return { script: `require(${JSON.stringify(tsx)}); require(${JSON.stringify(source)});`, eval: true };
}

interface Pending {
  resolve(reply: LlamaWorkerReply): void;
  reject(e: Error): void;
  options?: LlamaGenerateOptions;
}

export class LlamaWorkerEngine implements LocalEngine {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private serial = 0;
  private loadedInfo: { info: LlamaModelInfo; eosId: number | undefined } | undefined;
  private loading: Promise<LlamaModelInfo> | undefined;
  private texts: Promise<readonly string[]> | undefined;
  private places = { places: 0, bytes: 0 };

  constructor(
    private readonly options: LlamaEngineOptions,
    private readonly entry: WorkerEntry,
  ) {}

  get modelPath(): string {
    return this.options.modelPath;
  }

  isLoaded(): boolean {
    return this.loadedInfo !== undefined;
  }

  get eosId(): number | undefined {
    return this.loadedInfo?.eosId;
  }

  /** The thread has no tokenizer to share synchronously: the client estimates. */
  tokenizeNow(): undefined {
    return undefined;
  }

  placeStats(): { places: number; bytes: number } {
    return this.places;
  }

  info(): Promise<LlamaModelInfo> {
    if (this.loadedInfo) return Promise.resolve(this.loadedInfo.info);
    this.loading ??= this.request({ kind: 'info', id: 0 }).then(
      (r) => {
        if (r.kind !== 'info') throw new LlamaModelError('the llama.cpp thread answered out of turn');
        this.loadedInfo = { info: r.info, eosId: r.eosId };
        return r.info;
      },
      (e: unknown) => {
        this.loading = undefined;
        throw e;
      },
    );
    return this.loading;
  }

  tokenTexts(): Promise<readonly string[]> {
    this.texts ??= this.request({ kind: 'texts', id: 0 }).then((r) => (r.kind === 'texts' ? r.texts : []));
    return this.texts;
  }

  async warm(prompt: string, signal: AbortSignal): Promise<LlamaRead> {
    const r = await this.request({ kind: 'warm', id: 0, prompt }, signal);
    if (r.kind !== 'read') throw new LlamaModelError('the llama.cpp thread answered out of turn');
    return r.read;
  }

  async generate(prompt: string, options: LlamaGenerateOptions, signal: AbortSignal): Promise<LlamaGenerated> {
    const r = await this.request(
      {
        kind: 'generate',
        id: 0,
        prompt,
        maxNewTokens: options.maxNewTokens,
        stop: options.stop ?? [],
        choose: options.logitsFilter !== undefined || options.chooseFromLogits !== undefined,
        until: options.until !== undefined,
        active: options.filterActive !== undefined,
      },
      signal,
      options,
    );
    if (r.kind !== 'generated') throw new LlamaModelError('the llama.cpp thread answered out of turn');
    this.places = r.places;
    return r.out;
  }

  /** Frees the model: its thread is asked to dispose of it, then ends (what it held goes back to the system). */
  async unload(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.request({ kind: 'unload', id: 0 }).catch(() => undefined);
    this.stop(worker, new CancellationError());
    await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(this.entry.script, { eval: this.entry.eval === true, workerData: this.options });
    worker.on('message', (msg: LlamaWorkerReply) => this.onMessage(worker, msg));
    worker.on('error', (e) => this.stop(worker, new LlamaModelError(`the llama.cpp thread failed: ${e.message}`)));
    worker.on('exit', (code) => this.stop(worker, new LlamaModelError(`the llama.cpp thread ended (exit code ${code})`)));
    return (this.worker = worker);
  }

  /** The thread is gone: what waited on it fails, and the next call starts a new one. */
  private stop(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.loadedInfo = undefined;
    this.loading = undefined;
    this.texts = undefined;
    this.places = { places: 0, bytes: 0 };
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  private request(
    message: LlamaWorkerRequest & { id: number },
    signal?: AbortSignal,
    options?: LlamaGenerateOptions,
  ): Promise<LlamaWorkerReply> {
    if (signal?.aborted) return Promise.reject(new CancellationError());
    const worker = this.start();
    const id = ++this.serial;
    return new Promise<LlamaWorkerReply>((resolve, reject) => {
      const onAbort = (): void => worker.postMessage({ kind: 'cancel', id } satisfies LlamaWorkerRequest);
      signal?.addEventListener('abort', onAbort, { once: true });
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
      };
      this.pending.set(id, {
        resolve: (r) => (done(), resolve(r)),
        reject: (e) => (done(), reject(e)),
        ...(options ? { options } : {}),
      });
      worker.postMessage({ ...message, id });
    });
  }

  private onMessage(worker: Worker, msg: LlamaWorkerReply): void {
    if (msg.kind === 'log') return void getLogger(msg.tag)[msg.level](msg.message);
    const pending = this.pending.get(msg.id);
    if (msg.kind === 'choose' || msg.kind === 'until' || msg.kind === 'active') return this.answer(worker, msg, pending?.options);
    if (!pending) return;
    if (msg.kind === 'error') {
      if (msg.cancelled) pending.reject(new CancellationError());
      else pending.reject(msg.model ? new LlamaModelError(msg.message) : new Error(msg.message));
    } else pending.resolve(msg);
  }

  /** A step of a generation that the main thread's rules decide: the masks and the greedy choice, or whether the answer is complete. */
  private answer(
    worker: Worker,
    msg: Extract<LlamaWorkerReply, { kind: 'choose' | 'until' | 'active' }>,
    options: LlamaGenerateOptions | undefined,
  ): void {
    let answer: { id: number; logprob: number } | boolean;
    if (msg.kind === 'until') answer = options?.until ? options.until(msg.text) === true : false;
    else if (msg.kind === 'active') answer = options?.filterActive ? options.filterActive(msg.text) === true : true;
    else {
      options?.logitsFilter?.(msg.text, msg.logits, msg.ids);
      answer = greedy(msg.logits);
    }
    worker.postMessage({ kind: 'answer', step: msg.step, answer } satisfies LlamaWorkerRequest);
  }
}

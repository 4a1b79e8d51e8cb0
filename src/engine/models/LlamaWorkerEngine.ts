// The local engine in its own process (llamaWorkerMain.ts): on the language server's thread importing
// node-llama-cpp, parsing a GGUF's header and vocabulary and tokenizing a long prompt each held the
// event loop for 100-500 ms, and on a worker thread 129 MB stayed in the server after the model was
// freed (docs/BENCHMARKS.md "Local engine: moving session and memory"). A child process takes its
// memory with it when an unload ends it, and a crash of llama.cpp ends only it. Checking's masks and
// the answer's end test stay in the server: a step that needs them sends its log-probabilities here
// and gets the choice back.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fork, type ChildProcess } from 'node:child_process';
import { CancellationError } from '../util/errors';
import { getLogger, type LogLevel } from '../util/logger';
import { tsxFor } from './WorkerEncoder';
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

/** How to start the process: the bundle's script, or the TypeScript source through tsx (tests and scripts run the sources). */
interface WorkerEntry {
  script: string;
  execArgv: string[];
}

/** The variable that carries the engine's options to the process (llamaWorkerMain.ts reads it). */
export const ENGINE_OPTIONS_VARIABLE = 'CODERAG_LLAMA_ENGINE';

/** The worker entry beside this module; undefined when neither the bundle's nor the source's is there (the caller runs the engine here). */
export function llamaWorkerEntry(): WorkerEntry | undefined {
  const bundled = join(__dirname, 'llamaWorker.js');
  if (existsSync(bundled)) return { script: bundled, execArgv: [] };
  const source = join(__dirname, 'llamaWorkerMain.ts');
  const tsx = tsxFor(source);
  return tsx ? { script: source, execArgv: ['--require', tsx] } : undefined;
}

interface Pending {
  resolve(reply: LlamaWorkerReply): void;
  reject(e: Error): void;
  options?: LlamaGenerateOptions;
}

export class LlamaWorkerEngine implements LocalEngine {
  readonly tokenizesHere = false;
  private worker: ChildProcess | undefined;
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

  /** The process has the tokenizer, not this one: the client estimates. */
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
        if (r.kind !== 'info') throw new LlamaModelError('the llama.cpp process answered out of turn');
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
    if (r.kind !== 'read') throw new LlamaModelError('the llama.cpp process answered out of turn');
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
    if (r.kind !== 'generated') throw new LlamaModelError('the llama.cpp process answered out of turn');
    this.places = r.places;
    return r.out;
  }

  /** Frees the model: its process is asked to dispose of it, then ends (what it held goes back to the system). */
  async unload(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await this.request({ kind: 'unload', id: 0 }).catch(() => undefined);
    this.stop(worker, new CancellationError());
    await new Promise<void>((resolve) => {
      if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
      const timer = setTimeout(() => worker.kill('SIGKILL'), 5000);
      worker.once('exit', () => (clearTimeout(timer), resolve()));
      worker.disconnect();
    });
  }

  private start(): ChildProcess {
    if (this.worker) return this.worker;
    // Its stdout is not the server's: on stdio the server's stdout is the LSP channel.
    const worker = fork(this.entry.script, [], {
      execArgv: this.entry.execArgv,
      env: { ...process.env, [ENGINE_OPTIONS_VARIABLE]: JSON.stringify(this.options) },
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const stderr: string[] = [];
    worker.stderr?.on('data', (d: Buffer) => {
      stderr.push(d.toString('utf8'));
      if (stderr.length > 20) stderr.shift();
    });
    worker.on('message', (msg: LlamaWorkerReply) => this.onMessage(worker, msg));
    worker.on('error', (e) => this.stop(worker, new LlamaModelError(`the llama.cpp process failed: ${e.message}`)));
    worker.on('exit', (code, signal) =>
      this.stop(
        worker,
        new LlamaModelError(
          `the llama.cpp process ended (${signal ?? `exit code ${code}`})${stderr.length ? `: ${stderr.join('').slice(-400)}` : ''}`,
        ),
      ),
    );
    return (this.worker = worker);
  }

  /** The process is gone: what waited on it fails, and the next call starts a new one. */
  private stop(worker: ChildProcess, error: Error): void {
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
      const onAbort = (): void => void worker.send({ kind: 'cancel', id } satisfies LlamaWorkerRequest);
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
      if (worker.connected) worker.send({ ...message, id });
      else reject(new LlamaModelError('the llama.cpp process is not running'));
    });
  }

  private onMessage(worker: ChildProcess, msg: LlamaWorkerReply): void {
    if (msg.kind === 'log') return void getLogger(msg.tag)[msg.level](msg.message);
    const pending = this.pending.get(msg.id);
    if (msg.kind === 'choose' || msg.kind === 'until' || msg.kind === 'active') return this.answer(worker, msg, pending?.options);
    if (!pending) return;
    if (msg.kind === 'error') {
      if (msg.cancelled) pending.reject(new CancellationError());
      else pending.reject(msg.model ? new LlamaModelError(msg.message) : new Error(msg.message));
    } else pending.resolve(msg);
  }

  /** A step of a generation that the server's rules decide: the masks and the greedy choice, or whether the answer is complete. */
  private answer(
    worker: ChildProcess,
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
    if (worker.connected) worker.send({ kind: 'answer', step: msg.step, answer } satisfies LlamaWorkerRequest);
  }
}

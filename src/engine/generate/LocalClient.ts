// A GGUF code model run by llama.cpp inside the language server (the `local` provider): no model
// server to install. Decoding is the embedded client's (it sees the logits, so checking masks the
// member names after `.`), over the engine of models/LlamaEngine.ts; the engine keeps the prompt's
// common prefix and the places it left, so warm-ups work as they do against a caching server.
import { basename } from 'node:path';
import { stat } from 'node:fs/promises';
import { modelFamilyOf, type ModelFamily } from '../prompt/templates';
import { errorMessage, throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import type { LocalEngine, LlamaModelInfo, LlamaRead } from '../models/LlamaEngine';
import { EmbeddedClient, type EmbeddedLM } from './EmbeddedClient';
import { ReadRate } from './readRate';
import {
  ModelClientError,
  isModelClientError,
  type GenerateRequest,
  type GenerateResult,
  type ModelCapabilities,
  type ModelClient,
  type ModelProblem,
} from './types';

const log = getLogger('model');

/** The prompt family a FIM prefix token names (llama.cpp finds the FIM tokens in the GGUF's vocabulary). */
export function familyOfFimPrefix(prefix: string | undefined): ModelFamily | undefined {
  if (!prefix) return undefined;
  if (prefix === '<|fim_prefix|>') return 'qwen2.5-coder';
  if (prefix === '<fim_prefix>') return 'starcoder2';
  if (prefix.includes('fim▁begin')) return 'deepseek-coder';
  if (prefix.includes('<PRE>')) return 'codellama';
  return undefined;
}

export interface LocalClientOptions {
  /** Unload the model after this long without a request (0: never). */
  idleUnloadMs: number;
  /**
   * Run as the embedded client runs the shipped model: its loop guard and copy prior, and whole definitions in the prompt.
   * A benchmark sets it to compare llama.cpp with the ONNX path on the shipped LM exported to GGUF, the engine being the
   * only difference.
   */
  shippedDecoding?: boolean;
}

/** The engine's view as the embedded client's LM: the same decoding, llama.cpp's logits. */
function embeddedLMOf(engine: LocalEngine, texts: readonly string[], info: LlamaModelInfo, onRead: (r: LlamaRead) => void): EmbeddedLM {
  return {
    async generate(prompt, options, signal) {
      const out = await engine.generate(prompt, options, signal);
      onRead(out.read);
      return { text: out.text, stoppedBy: out.stoppedBy, logprobs: out.logprobs };
    },
    tokenTexts: () => texts,
    // After an idle unload the next request loads the model again (prepare) before it counts; meanwhile an estimate.
    encode: (text) => engine.tokenizeNow(text) ?? { length: Math.ceil(text.length / 3) },
    contextTokens: info.contextTokens,
    ...(engine.eosId !== undefined ? { eosId: engine.eosId } : {}),
  };
}

export class LocalClient implements ModelClient {
  readonly backend = 'local' as const;
  // It sees the logits: checking masks its tokens. A code model completes from compact definitions as a server's does.
  readonly capabilities: ModelCapabilities;
  private readonly inner: EmbeddedClient;
  private info: LlamaModelInfo | undefined;
  private lastRead: LlamaRead | undefined;
  private readonly rate = new ReadRate();
  private idleTimer: NodeJS.Timeout | undefined;
  /** Calls in flight: the idle period starts when the last one ends (a request waiting behind a long read is not idle). */
  private busy = 0;

  constructor(
    private readonly engine: LocalEngine,
    private readonly options: LocalClientOptions,
  ) {
    this.capabilities = { decodeConstraint: true, ...(options.shippedDecoding ? { wholeKnowledge: true } : {}) };
    this.inner = new EmbeddedClient({
      model: this.model,
      label: 'the local model',
      // Both were fitted to the shipped model's failures; a code model runs as it would on a server.
      ...(options.shippedDecoding ? {} : { loopGuard: false, copyPrior: false }),
      load: async () => {
        const info = await this.loadEngine();
        const texts = await this.engine.tokenTexts();
        return embeddedLMOf(this.engine, texts, info, (r) => this.noteRead(r, 'request'));
      },
    });
  }

  get model(): string {
    return basename(this.engine.modelPath).replace(/\.gguf$/i, '');
  }

  /** From the model's fill-in-the-middle tokens once it is loaded; before, a guess from the file's name. */
  get family(): ModelFamily {
    if (!this.info) return modelFamilyOf(this.model);
    return familyOfFimPrefix(this.info.fimPrefix) ?? 'plain';
  }

  /** Where it runs, for the status: llama.cpp beside the language server, on the CPU or a GPU. */
  get endpoint(): string {
    const i = this.info;
    if (!i) return 'llama.cpp in the language server';
    return `llama.cpp in the language server (${i.gpu === false ? 'CPU' : i.gpu}, ${i.threads} thread${i.threads === 1 ? '' : 's'})`;
  }

  /** What the status adds of the loaded model: a file without fill-in-the-middle tokens completes from the code above only. */
  get note(): string | undefined {
    if (!this.info) return undefined;
    if (familyOfFimPrefix(this.info.fimPrefix) === undefined)
      return `${this.info.file} has no fill-in-the-middle tokens: it completes from the code before the cursor only`;
    return undefined;
  }

  get contextTokens(): number | undefined {
    return this.info?.contextTokens;
  }

  get readRate(): number | undefined {
    return this.rate.tokensPerSecond;
  }

  /**
   * Characters a token, as the engine counted the last prompts it read; where the engine's tokenizer is in another process, prompts are
   * fitted with it (before the first reading: 3, fewer than any code tokenizer's, so a prompt never overflows).
   */
  private charsPerToken = 3;

  countTokens = (text: string): number =>
    this.engine.tokenizesHere ? this.inner.countTokens(text) : Math.ceil(text.length / this.charsPerToken);

  /** A prompt read whole: its characters a token, kept a little under the reading so the estimate errs on the long side. */
  private calibrate(prompt: string, r: LlamaRead | undefined, withLastToken: boolean): void {
    const tokens = (r?.evaluated ?? 0) + (r?.cached ?? 0) + (withLastToken ? 1 : 0);
    if (!r || tokens < 64 || tokens >= (this.info?.contextTokens ?? Infinity) - 512) return;
    this.charsPerToken = Math.max(2, 0.95 * (prompt.length / tokens));
  }

  /** The model file exists; loading it is the first request's (a load failure is named then). */
  async check(signal: AbortSignal): Promise<ModelProblem | undefined> {
    throwIfAborted(signal);
    const exists = await stat(this.engine.modelPath).then(
      (s) => s.isFile(),
      () => false,
    );
    if (exists) return undefined;
    return {
      kind: 'modelMissing',
      message: `the model file ${this.engine.modelPath} does not exist`,
      model: this.model,
      endpoint: this.endpoint,
    };
  }

  async prepare(signal: AbortSignal): Promise<void> {
    await this.whileBusy(() => this.wrap(() => this.ready(signal)));
  }

  /** Loaded, the first time or again after an idle unload (the decoding's view of the model stays valid). */
  private async ready(signal: AbortSignal): Promise<void> {
    if (this.info && !this.engine.isLoaded()) await this.loadEngine();
    await this.inner.prepare(signal);
  }

  /** Loads the model file (shared by concurrent callers), saying what loaded where and how long it took. */
  private async loadEngine(): Promise<LlamaModelInfo> {
    const start = performance.now();
    const again = this.engine.isLoaded();
    const info = await this.engine.info();
    this.info = info;
    if (!again)
      log.info(
        `loaded ${info.file} (${info.architecture}, ${info.contextTokens}-token context) into ${this.endpoint} ` +
          `in ${Math.round(performance.now() - start)} ms`,
      );
    return info;
  }

  async generate(request: GenerateRequest, signal: AbortSignal): Promise<GenerateResult> {
    return this.whileBusy(async () => {
      this.lastRead = undefined;
      const out = await this.wrap(async () => {
        await this.ready(signal);
        return this.inner.generate(request, signal);
      });
      const read = this.readNow();
      this.calibrate(request.prompt, read, true);
      return { ...out, ...(read ? { read: { evaluated: read.evaluated, cached: read.cached, ms: read.ms } } : {}) };
    });
  }

  async warm(prompt: string, signal: AbortSignal): Promise<void> {
    await this.whileBusy(() =>
      this.wrap(async () => {
        await this.ready(signal);
        const read = await this.engine.warm(prompt, signal);
        this.noteRead(read, 'warm-up');
        this.calibrate(prompt, read, false);
      }),
    );
  }

  /** No idle unload while `work` runs; the idle period starts when it ends, however it ends. */
  private async whileBusy<T>(work: () => Promise<T>): Promise<T> {
    this.busy++;
    clearTimeout(this.idleTimer);
    try {
      return await work();
    } finally {
      this.busy--;
      this.touch();
    }
  }

  /** Frees the model now (the idle timer, or the provider changes). */
  async dispose(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    await this.engine.unload();
  }

  /** What the engine read for the request just answered. */
  private readNow(): LlamaRead | undefined {
    return this.lastRead;
  }

  private noteRead(r: LlamaRead, kind: 'request' | 'warm-up'): void {
    this.lastRead = r;
    // Warm-ups reach no trace: this line is how a benchmark (CODERAG_LOG=debug) counts what the engine read in this process.
    const restored = r.restored ? `, a saved place restored${r.loadMs !== undefined ? ` in ${Math.round(r.loadMs)} ms` : ''}` : '';
    log.debug(`local read (${kind}): ${r.evaluated} evaluated, ${r.cached} cached, ${Math.round(r.ms)} ms${restored}`);
    if (!r.restored) this.rate.record(r.evaluated, r.ms);
  }

  /** The idle period starts again. */
  private touch(): void {
    clearTimeout(this.idleTimer);
    if (this.options.idleUnloadMs <= 0 || this.busy > 0) return;
    this.idleTimer = setTimeout(() => void this.unloadIdle(), this.options.idleUnloadMs);
    this.idleTimer.unref();
  }

  private async unloadIdle(): Promise<void> {
    if (this.busy > 0 || !this.engine.isLoaded()) return;
    try {
      await this.engine.unload();
      log.info(`unloaded ${this.model} after ${Math.round(this.options.idleUnloadMs / 1000)} s without a request`);
    } catch (e) {
      log.warn(`unloading ${this.model} failed: ${errorMessage(e)}`);
    }
  }

  /** A load failure is this client's, named in its words. */
  private async wrap<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (isModelClientError(e)) throw new ModelClientError(e.kind, e.message, this.endpoint, this.model, e.status);
      throw e;
    }
  }
}

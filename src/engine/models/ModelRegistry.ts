// The one place models are resolved and opened: a name of a shipped model (models/), a model
// folder in the user's models folder, an absolute/relative folder path, or a Hugging Face id
// (downloaded once into cacheDir). Loaded models are cached; dispose() releases them all.

import { stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { raceCancellation } from '../util/abort';
import { getLogger } from '../util/logger';
import type { ModelDevice, ModelPlacement } from './device';
import { downloadModel, isHubId } from './download';
import type { DownloadProgress } from './download';
import { ModelError, isModelError } from './errors';
import { CAUSAL_LM_FILE, OnnxCausalLM } from './OnnxCausalLM';
import { ENCODER_FILE, OnnxEncoder } from './OnnxEncoder';
import { loadTokenizer, readJsonFile } from './tokenizer';
import type { CausalLM, Encoder } from './types';

const log = getLogger('models');

const DEFAULT_CAUSAL_LM = 'coderag-lm';
const DEFAULT_ENCODER = 'coderag-encoder';

type ModelKind = 'causalLM' | 'encoder';

const FILES: Record<ModelKind, string[]> = {
  causalLM: ['config.json', 'tokenizer.json', 'tokenizer_config.json', CAUSAL_LM_FILE],
  encoder: ['config.json', 'tokenizer.json', 'tokenizer_config.json', ENCODER_FILE],
};

export interface ModelRegistryOptions {
  /** Folder of the shipped models (the extension's models/). */
  modelsDir: string;
  /** Optional folder of user-provided model folders, searched before modelsDir. */
  userModelsDir?: string;
  /** Where Hugging Face downloads are kept (under the extension's global storage). */
  cacheDir?: string;
  /** Intra-op threads per ONNX session (default: all cores). */
  threads?: number;
  /** Execution provider of every model it opens (`coderag.models.device`, --device; default `auto`). */
  device?: ModelDevice;
  /** Rows per ONNX call for batched APIs (default 16). */
  batchSize?: number;
  /** Run one small inference after loading (default true) so the first real request is not slow. */
  warmup?: boolean;
  /**
   * The encoder opens a second, one-thread session for single texts (queries; OnnxEncoder), about
   * 10 MB more (default true). An encoder that only embeds batches (the items' thread) goes without.
   */
  singleRowSession?: boolean;
  onDownloadProgress?: (p: DownloadProgress) => void;
  /** Hugging Face endpoint (default https://huggingface.co); tests point it at a local server. */
  hubUrl?: string;
  revision?: string;
  /** A download fails when no bytes arrive for this long (default 30 s). */
  downloadStallTimeoutMs?: number;
  fetch?: typeof fetch;
}

interface ResolvedModel {
  name: string;
  dir: string;
  source: 'shipped' | 'user' | 'path' | 'hub';
}

/** A loaded model and the execution provider it runs on. */
interface LoadedModelPlacement {
  kind: ModelKind;
  name: string;
  placement: ModelPlacement;
}

export class ModelRegistry {
  private readonly loaded = new Map<string, Promise<CausalLM | Encoder>>();
  private readonly placed = new Map<string, LoadedModelPlacement>();
  private readonly aborter = new AbortController();
  private disposed = false;

  constructor(private readonly opts: ModelRegistryOptions) {}

  /** The causal LM named by a setting (default: the shipped coderag-lm). */
  causalLM(nameOrPath: string | undefined, signal: AbortSignal): Promise<CausalLM> {
    return this.get('causalLM', nameOrPath || DEFAULT_CAUSAL_LM, signal) as Promise<CausalLM>;
  }

  /** The code encoder named by a setting (default: the shipped coderag-encoder). */
  encoder(nameOrPath: string | undefined, signal: AbortSignal): Promise<Encoder> {
    return this.get('encoder', nameOrPath || DEFAULT_ENCODER, signal) as Promise<Encoder>;
  }

  /** Where a name would load from, downloading a Hugging Face model if needed. */
  async resolve(kind: ModelKind, nameOrPath: string, signal: AbortSignal): Promise<ResolvedModel> {
    const looksLikePath = isAbsolute(nameOrPath) || nameOrPath.startsWith('.') || nameOrPath.startsWith('~');
    if (looksLikePath) {
      const dir = resolve(nameOrPath.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
      if (!(await isDir(dir))) throw new ModelError('missing', `Model folder ${dir} does not exist.`, nameOrPath);
      return { name: nameOrPath, dir, source: 'path' };
    }
    for (const [base, source] of [
      [this.opts.userModelsDir, 'user'],
      [this.opts.modelsDir, 'shipped'],
    ] as const) {
      if (base && (await isDir(join(base, nameOrPath)))) return { name: nameOrPath, dir: join(base, nameOrPath), source };
    }
    if (isHubId(nameOrPath)) {
      if (!this.opts.cacheDir) {
        throw new ModelError('missing', `Model "${nameOrPath}" is not local and no download cache folder is configured.`, nameOrPath);
      }
      const dir = join(this.opts.cacheDir, 'hub', ...nameOrPath.split('/'));
      await downloadModel(
        nameOrPath,
        FILES[kind],
        dir,
        {
          hubUrl: this.opts.hubUrl ?? 'https://huggingface.co',
          revision: this.opts.revision ?? 'main',
          stallTimeoutMs: this.opts.downloadStallTimeoutMs ?? 30_000,
          onProgress: this.opts.onDownloadProgress,
          fetch: this.opts.fetch ?? fetch,
        },
        AbortSignal.any([this.aborter.signal, signal]),
      );
      return { name: nameOrPath, dir, source: 'hub' };
    }
    const where = [this.opts.userModelsDir, this.opts.modelsDir].filter(Boolean).join(' or ');
    throw new ModelError(
      'missing',
      `Model "${nameOrPath}" was not found in ${where}. Use a shipped model name, a model folder path, or a Hugging ` +
        `Face id like "owner/name".`,
      nameOrPath,
    );
  }

  private get(kind: ModelKind, nameOrPath: string, signal: AbortSignal): Promise<CausalLM | Encoder> {
    if (this.disposed) return Promise.reject(new ModelError('runtime', 'The model registry has been disposed.'));
    const key = `${kind}:${nameOrPath}`;
    let entry = this.loaded.get(key);
    if (!entry) {
      // The shared load ignores one caller's cancellation (others may wait on it); each caller
      // races its own signal below.
      entry = this.load(kind, nameOrPath);
      this.loaded.set(key, entry);
      entry.catch((e: unknown) => {
        if (this.loaded.get(key) === entry) this.loaded.delete(key);
        if (!isModelError(e)) log.error(`loading ${key} failed: ${String(e)}`);
      });
    }
    return raceCancellation(entry, signal);
  }

  private async load(kind: ModelKind, nameOrPath: string): Promise<CausalLM | Encoder> {
    // Shared by every caller: only the registry's dispose stops it.
    const model = await this.resolve(kind, nameOrPath, this.aborter.signal);
    for (const f of FILES[kind]) {
      const s = await stat(join(model.dir, f)).catch(() => undefined);
      if (!s) throw new ModelError('missing', `Model "${model.name}" (${model.dir}) is missing ${f}.`, model.name);
    }
    const config = await readJsonFile(join(model.dir, 'config.json'), model.name);
    const tokenizer = await loadTokenizer(model.dir, model.name);
    const common = {
      name: model.name,
      dir: model.dir,
      config,
      tokenizer,
      session: { threads: this.opts.threads, device: this.opts.device ?? 'auto' },
      batchSize: this.opts.batchSize,
      warmup: this.opts.warmup,
      singleRowSession: this.opts.singleRowSession,
    };
    const loaded =
      kind === 'causalLM'
        ? await OnnxCausalLM.load({ ...common, file: join(model.dir, CAUSAL_LM_FILE) })
        : await OnnxEncoder.load({ ...common, file: join(model.dir, ENCODER_FILE) });
    if (this.disposed) {
      await loaded.dispose();
      throw new ModelError('runtime', 'The model registry was disposed while loading.', model.name);
    }
    if (loaded.placement) this.placed.set(`${kind}:${nameOrPath}`, { kind, name: model.name, placement: loaded.placement });
    log.info(
      `loaded ${kind} ${model.name} from ${model.dir} (${model.source}) on ${loaded.placement?.provider ?? 'cpu'} in ` +
        `${loaded.timings.loadMs.toFixed(0)} ms, warm-up ${loaded.timings.warmupMs.toFixed(0)} ms`,
    );
    return loaded;
  }

  /** The device the registry's models are asked to run on. */
  get device(): ModelDevice {
    return this.opts.device ?? 'auto';
  }

  /** Where each loaded model runs (for the status tooltip, traces and `coderag models`). */
  placements(): LoadedModelPlacement[] {
    return [...this.placed.values()];
  }

  /** Releases every loaded model; pending downloads are aborted. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.aborter.abort();
    const all = [...this.loaded.values()];
    this.loaded.clear();
    this.placed.clear();
    await Promise.all(
      all.map((p) =>
        p.then(
          (m) => m.dispose(),
          () => undefined,
        ),
      ),
    );
  }
}

async function isDir(p: string): Promise<boolean> {
  return (await stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

// What the CLI commands that run the pipeline share: the shipped models, the repository's
// retrieval paths (prepared, with progress) and the reranker switch. The pipeline itself is built
// by the engine's one composition function (createPipeline).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import { indexFolderFor } from '../engine/kb/store';
import { ModelRegistry, type CausalLM, type Encoder, type ModelPlacement } from '../engine/models';
import { MODEL_DEFAULTS } from '../engine/pipeline';
import { createRepositoryIndex, type RepositoryIndex } from '../engine/index/repositoryIndex';
import type { Tokenize } from '../engine/body/tokens';
import { withRg1 } from '../bench/baselines/rg1Retrieve';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../engine/rerank/DistilledReranker';
import { ollamaReranker, openAiReranker } from '../engine/rerank/LlmReranker';
import { RerankerSwitch } from '../engine/rerank/RerankerSwitch';
import type { RerankerChoice } from '../engine/rerank/types';
import type { PathName } from '../engine/retrieve/types';
import type { NextLineModel } from '../engine/similar/perspectives';
import { errorMessage, UserError } from '../engine/util/errors';
import { assetsDir, cacheRoot, modelDevice, parsers, progressPrinter } from './context';

interface CliModels {
  registry: ModelRegistry;
  lm?: CausalLM;
  encoder?: Encoder;
}

/** The shipped models the probing query and the dense path use; one that does not load is a warning, and its stage falls back. */
export async function openModels(
  need: { lm: boolean; encoder: boolean },
  warn: (message: string) => void,
  signal: AbortSignal,
): Promise<CliModels> {
  const registry = new ModelRegistry({ modelsDir: join(assetsDir(), 'models'), threads: 2, device: modelDevice() });
  const out: CliModels = { registry };
  if (need.lm) {
    try {
      out.lm = await registry.causalLM(undefined, signal);
    } catch (e) {
      warn(`probing model not available (${errorMessage(e)}); the query falls back to a model-free strategy`);
    }
  }
  if (need.encoder) {
    try {
      out.encoder = await registry.encoder(undefined, signal);
    } catch (e) {
      warn(`dense retrieval skipped: code encoder not available (${errorMessage(e)})`);
    }
  }
  return out;
}

/** The repository's retrieval paths, prepared (the dense path embeds with progress on stderr); timings per path. */
export async function preparedPaths(
  kb: KnowledgeBase,
  repo: string,
  paths: readonly PathName[],
  encoder: Encoder | undefined,
  indexDir: string | undefined,
  signal: AbortSignal,
  similar?: { nextLine?: NextLineModel; wordSets?: boolean },
  /** The model's tokenizer for the body mode's method table (absent: word tokens). */
  tokenize?: Tokenize,
): Promise<{ paths: RepositoryIndex; prepareMs: Record<string, number> }> {
  const embedding = progressPrinter('embedding');
  const indexFolder = indexFolderFor(cacheRoot(indexDir), repo);
  const nextLine = similar?.nextLine;
  const engine = createRepositoryIndex(kb, await parsers(), {
    paths,
    ...(tokenize ? { tokenize } : {}),
    ...(encoder
      ? { dense: { encoder, indexFolder, onProgress: (x) => embedding.update({ done: x.done, total: x.total, path: '' }) } }
      : {}),
    // ProCC's code windows (the same encoder), when similar code is asked for.
    ...(encoder && similar
      ? {
          similar: {
            encoder,
            indexFolder,
            onProgress: (x: { done: number; total: number }) => embedding.update({ done: x.done, total: x.total, path: 'code windows' }),
            ...(nextLine ? { nextLine: () => nextLine } : {}),
            ...(similar.wordSets ? { wordSets: () => true } : {}),
          },
        }
      : {}),
  });
  // RG-1, a baseline the bench lends (`--paths rg1`), beside the engine's paths.
  const built = withRg1(engine, kb, paths);
  const prepareMs: Record<string, number> = {};
  try {
    for (const r of built.byName.values()) {
      const t = performance.now();
      await r.prepare?.(signal);
      prepareMs[r.name] = performance.now() - t;
    }
    if (built.windows) {
      const t = performance.now();
      await built.windows.prepare(signal);
      prepareMs.windows = performance.now() - t;
    }
  } catch (e) {
    built.dispose();
    throw e;
  } finally {
    embedding.done();
  }
  return { paths: built, prepareMs };
}

interface RerankerOptions {
  choice: RerankerChoice;
  ollamaHost?: string;
  openaiUrl?: string;
  model?: string;
  timeoutMs?: number;
  /** Folder of the distilled reranker (default: the shipped one). */
  distilledDir?: string;
}

/** A switch holding the chosen reranker, loaded; the distilled one must exist when chosen. */
export async function openRerankers(
  options: RerankerOptions,
): Promise<{ switcher: RerankerSwitch; placement?: ModelPlacement; dispose(): Promise<void> }> {
  const switcher = new RerankerSwitch(options.choice);
  let dispose = (): Promise<void> => Promise.resolve();
  let placement: ModelPlacement | undefined;
  const model = options.model ?? MODEL_DEFAULTS.rerankModel;
  if (options.choice === 'llm') {
    switcher.register(
      'llm',
      options.openaiUrl
        ? openAiReranker({ baseUrl: options.openaiUrl, model, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) })
        : ollamaReranker({
            host: options.ollamaHost ?? MODEL_DEFAULTS.ollamaHost,
            model,
            ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
          }),
    );
  } else if (options.choice === 'distilled') {
    const dir = resolve(options.distilledDir ?? join(assetsDir(), 'models', DEFAULT_RERANKER));
    if (!existsSync(dir))
      throw new UserError(`distilled reranker model not found at ${dir} (give --reranker-model DIR, or use --reranker llm)`);
    const loaded = await loadDistilledReranker(dir, DEFAULT_RERANKER, { threads: 2, device: modelDevice() });
    switcher.register('distilled', loaded.reranker);
    placement = loaded.scorer.placement;
    dispose = () => loaded.scorer.dispose();
  }
  return { switcher, ...(placement ? { placement } : {}), dispose: () => dispose().finally(() => switcher.dispose()) };
}

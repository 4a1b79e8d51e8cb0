// The language server's one composition root (CONTRIBUTING.md "Code rules", rule 4): builds the features, wires their
// collaborators by constructor, merges the configuration layers, owns the documents and models.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import {
  TextDocuments,
  TextDocumentSyncKind,
  type ClientCapabilities,
  type Connection,
  type InitializeParams,
  type InitializeResult,
  type ServerCapabilities,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { loadParsers, type Parsers } from '../engine/kb/parsers';
import { platformCacheRoot } from '../engine/kb/store';
import { ModelRegistry, type ModelRegistryOptions } from '../engine/models';
import type { CausalLM, Encoder, ModelPlacement } from '../engine/models';
import { WorkerEncoder, encoderWorkerEntry, type WorkerEntry } from '../engine/models/WorkerEncoder';
import type { DenseEncoder } from '../engine/retrieve/dense/denseRetrieve';
import { runsOn } from '../engine/models/device';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../engine/rerank/DistilledReranker';
import { createRepositoryIndex } from '../engine/index/repositoryIndex';
import { causalLMProber, embeddedLMOf } from '../engine/models/pipelineAdapters';
import type { NextLineModel } from '../engine/similar/perspectives';
import type { ChunkProber } from '../engine/query/probeQuery';
import { errorMessage } from '../engine/util/errors';
import { preloadRedaction } from '../engine/prompt/redact';
import { getLogger, setLogSink, type LogLevel } from '../engine/util/logger';
import { apiKeyProblem, GetStatusRequest, MemoryRequest, SetApiKeyNotification, type InitializationOptions } from '../protocol/protocol';
import { CompletionFeature } from './CompletionFeature';
import { LearningFeature } from './LearningFeature';
import { createSimilarBandit } from '../engine/similar/bandit';
import { readsWordSets } from '../engine/similar/similarStage';
import { mergeConfig, type ServerConfig } from './config';
import type { Feature } from './feature';
import { ForegroundActivity } from './ForegroundActivity';
import type { LifecycleGuard } from './lifecycle';
import { ModelFeature } from './ModelFeature';
import { RerankFeature } from './RerankFeature';
import { StatusReporter } from './StatusReporter';
import { TraceLog } from './TraceLog';
import { WorkspaceIndexer } from './WorkspaceIndexer';
import { initialWorkspaceFolders } from './workspaceFolders';

const log = getLogger('server');

/**
 * Background embedding in chunks of this many items, on the encoder's thread (WorkerEncoder), so
 * the main thread only waits; between chunks a completion request goes first (one chunk, about
 * 40 ms of the two cores with the 2-block encoder, may still finish beside it). Without the thread the ONNX runs are
 * synchronous on the main thread: chunks of at most DENSE_CHUNK_CHARS characters of item text hold
 * the event loop for 15-40 ms each instead of the 600 ms a 16-item batch of long items took.
 */
const DENSE_CHUNK_ITEMS = 32;
const DENSE_CHUNK_CHARS = 512;
const DENSE_CHUNK_ITEMS_IN_PROCESS = 16;
/**
 * ProCC's code windows (20 lines, about the encoder's 256 tokens each): 8 per run on the encoder's
 * thread; on the main thread one per run (a window is a DENSE_CHUNK_CHARS chunk or more).
 */
const WINDOW_CHUNK = 8;
const WINDOW_CHUNK_IN_PROCESS = 1;
/** The encoder's thread stops after this long without work (its ~50 MB come back); a save starts it again. */
const ENCODER_THREAD_IDLE_MS = 20_000;
/**
 * After a repository's first embedding run the thread stops sooner: with the ONNX arena it grew, it
 * held about 180 MB after the JDK's java.base (server RSS 637 MB when embedding ended, 460 MB five
 * seconds later; npm run bench:server).
 */
const ENCODER_THREAD_IDLE_AFTER_BULK_MS = 2_000;

export interface ServerHost {
  /** Folder holding grammars/ and models/ (dist/ for the bundles). */
  assetsDir: string;
  /** Default folder for persisted indexes when the client names none. */
  cacheRoot?: string;
  logLevel?: LogLevel;
}

/** The platform cache folder (CODERAG_CACHE_DIR overrides). */
export function defaultCacheRoot(): string {
  return platformCacheRoot(process.env, process.platform, homedir());
}

/** The process's memory in MB (coderag/getStatus and coderag/memory). */
function memoryMB(): { rssMB: number; heapUsedMB: number; heapTotalMB: number; externalMB: number; arrayBuffersMB: number } {
  const m = process.memoryUsage();
  const mb = (n: number): number => Math.round(n / 2 ** 20);
  return {
    rssMB: mb(m.rss),
    heapUsedMB: mb(m.heapUsed),
    heapTotalMB: mb(m.heapTotal),
    externalMB: mb(m.external),
    arrayBuffersMB: mb(m.arrayBuffers),
  };
}

export class Server {
  private readonly documents = new TextDocuments(TextDocument);
  private readonly status = new StatusReporter();
  /** Completion requests being served; background embedding waits for them. */
  private readonly foreground = new ForegroundActivity();
  private registry: ModelRegistry;
  /** Aborted at shutdown: the models' loads stop waiting then. */
  private readonly lifetime = new AbortController();
  /** Where the distilled reranker runs (it loads outside the registry). */
  private distilledPlacement: ModelPlacement | undefined;
  private readonly indexer: WorkspaceIndexer;
  private readonly models: ModelFeature;
  private readonly rerank: RerankFeature;
  private readonly completion: CompletionFeature;
  private readonly learning: LearningFeature;
  private readonly features: Feature[];
  private parsersPromise: Promise<Parsers> | undefined;
  private lmPromise: Promise<CausalLM> | undefined;
  private encoderPromise: Promise<Encoder | undefined> | undefined;
  private itemEncoderPromise: Promise<WorkerEncoder | undefined> | undefined;
  private prober: ChunkProber | undefined;
  /** ProCC's hypothetical line: the probing LM's greedy next line, once it is loaded. */
  private nextLine: NextLineModel | undefined;
  private cacheRoot: string;
  private initOptions: InitializationOptions = {};
  /** The OpenAI-compatible server's key, from the client's secret storage (never from settings). */
  private apiKey = '';
  /** The settings of the last configuration change (re-merged when the key changes). */
  private lastSettings: unknown;
  private config: ServerConfig;
  /** How late the event loop runs (a blocked loop delays every request); windows end at each getStatus. */
  private readonly loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private loopWindowStart = performance.now();

  constructor(
    private readonly connection: Connection,
    private readonly host: ServerHost,
    /** The connection's message strategy: what reaches the handlers below follows the LSP lifecycle. */
    private readonly lifecycle: LifecycleGuard,
  ) {
    this.cacheRoot = host.cacheRoot ?? defaultCacheRoot();
    this.config = mergeConfig().config;
    this.registry = new ModelRegistry({ modelsDir: join(host.assetsDir, 'models'), cacheDir: join(this.cacheRoot, 'models'), threads: 2 });
    const parsers = (): Promise<Parsers> => (this.parsersPromise ??= loadParsers(join(host.assetsDir, 'grammars')));
    this.indexer = new WorkspaceIndexer(
      {
        parsers,
        cacheRoot: () => this.cacheRoot,
        retrievers: async (kb, parsers, context) => {
          const encoder = await this.encoder();
          // The thread loads beside the parsing; the first chunk of items waits for it.
          const threadEntry = encoder ? encoderWorkerEntry(this.host.assetsDir) : undefined;
          const thread = encoder && threadEntry ? this.itemEncoder(encoder, threadEntry) : Promise.resolve(undefined);
          // Queries are embedded in-process (one short run, no queue); items on the encoder's thread.
          const dense: DenseEncoder | undefined = encoder && {
            name: encoder.name,
            dim: encoder.dim,
            ...(encoder.fingerprint !== undefined ? { fingerprint: encoder.fingerprint } : {}),
            embed: (texts, signal) => encoder.embed(texts, signal),
            embedItems: async (texts, signal) => {
              const worker = await thread;
              if (worker) return worker.embedItems(texts, signal);
              return encoder.embedItems ? encoder.embedItems(texts, signal) : encoder.embed(texts, signal);
            },
          };
          if (encoder && !threadEntry) log.info('no encoder thread entry next to the server: items are embedded on the main thread');
          const chunking = threadEntry
            ? { chunkSize: DENSE_CHUNK_ITEMS }
            : { chunkSize: DENSE_CHUNK_ITEMS_IN_PROCESS, chunkChars: DENSE_CHUNK_CHARS };
          return createRepositoryIndex(kb, parsers, {
            ...(dense
              ? {
                  dense: {
                    encoder: dense,
                    indexFolder: context.indexFolder,
                    onProgress: context.onDenseProgress,
                    ...chunking,
                    pace: (signal: AbortSignal) => this.foreground.yield(signal),
                  },
                }
              : {}),
            // ProCC's code windows: the same encoder (windows on its thread), built after the dense vectors, paced the same way.
            ...(dense && encoder
              ? {
                  similar: {
                    encoder: dense,
                    // Windows at the query length, on the encoder's thread (WorkerEncoder.embed runs there).
                    embedWindows: async (texts: string[], signal: AbortSignal) => {
                      const worker = await thread;
                      return worker ? worker.embed(texts, signal) : encoder.embed(texts, signal);
                    },
                    indexFolder: context.indexFolder,
                    chunkSize: threadEntry ? WINDOW_CHUNK : WINDOW_CHUNK_IN_PROCESS,
                    pace: (signal: AbortSignal) => this.foreground.yield(signal),
                    wordSets: () => readsWordSets(this.config.similar.mode),
                    nextLine: () => this.nextLine,
                  },
                }
              : {}),
          });
        },
      },
      this.status,
    );
    this.models = new ModelFeature(async () => embeddedLMOf(await this.causalLM()), this.status);
    this.rerank = new RerankFeature(this.status);
    // ProCC's bandit per workspace folder: the completion chooses with it, the client's outcomes reward it (learning keeps each choice).
    const traces = new TraceLog();
    this.learning = new LearningFeature({
      cacheRoot: () => this.cacheRoot,
      newBandit: (saved) => createSimilarBandit(saved),
    });
    const learning = this.learning;
    this.completion = new CompletionFeature(
      this.documents,
      this.indexer,
      this.models,
      this.rerank,
      () => this.prober,
      this.status,
      this.foreground,
      traces,
      {
        load: (root) => (root !== undefined ? learning.banditFor(root) : Promise.resolve(undefined)),
        loaded: (root) => (root !== undefined ? learning.loadedBandit(root) : undefined),
        loadedShowGate: (root) => (root !== undefined ? learning.loadedShowGate(root) : undefined),
        remember: (id, root, outcomes) => learning.remember(id, root, outcomes),
        banditReward: (id) => learning.banditReward(id),
      },
    );
    this.features = [this.indexer, this.models, this.rerank, this.completion, this.learning];
  }

  /** The shipped code encoder for dense retrieval; undefined (dense off, logged once) when it does not load. */
  private encoder(): Promise<Encoder | undefined> {
    this.encoderPromise ??= this.registry.encoder(undefined, this.lifetime.signal).then(
      (encoder) => {
        log.info(`code encoder ${encoder.name} loaded (dim ${encoder.dim}) on ${encoder.placement?.provider ?? 'cpu'}`);
        this.publishModelDevices();
        return encoder;
      },
      (e: unknown) => {
        log.warn(`the code encoder did not load (dense retrieval is off): ${errorMessage(e)}`);
        return undefined;
      },
    );
    return this.encoderPromise;
  }

  /**
   * The encoder's thread for index-time embedding (WorkerEncoder), started once; undefined (items
   * are embedded in-process, logged) when it cannot start or its build differs from `encoder`.
   */
  private itemEncoder(encoder: Encoder, entry: WorkerEntry): Promise<WorkerEncoder | undefined> {
    this.itemEncoderPromise ??= (async () => {
      try {
        const thread = await WorkerEncoder.start(
          entry,
          // It embeds batches of items and windows: no one-thread session for single texts.
          { registry: { ...this.registryOptions(), singleRowSession: false } },
          { idleMs: ENCODER_THREAD_IDLE_MS, idleAfterBulkMs: ENCODER_THREAD_IDLE_AFTER_BULK_MS },
        );
        if (thread.fingerprint !== encoder.fingerprint || thread.dim !== encoder.dim) {
          log.warn('the encoder thread loaded another build of the encoder: items are embedded on the main thread');
          await thread.dispose();
          return undefined;
        }
        return thread;
      } catch (e) {
        log.warn(`the encoder thread did not start (items are embedded on the main thread): ${errorMessage(e)}`);
        return undefined;
      }
    })();
    return this.itemEncoderPromise;
  }

  private registryOptions(): ModelRegistryOptions {
    return {
      modelsDir: join(this.host.assetsDir, 'models'),
      cacheDir: join(this.cacheRoot, 'models'),
      threads: 2,
      device: this.config.models.device,
    };
  }

  private causalLM(): Promise<CausalLM> {
    this.lmPromise ??= this.registry.causalLM(undefined, this.lifetime.signal).then(
      (lm) => {
        this.publishModelDevices();
        return lm;
      },
      (e: unknown) => {
        this.lmPromise = undefined;
        throw e;
      },
    );
    return this.lmPromise;
  }

  /** The status (tooltip) and every trace show where each loaded model runs. */
  private publishModelDevices(): void {
    const models = this.registry.placements().map((p) => runsOn(p.name, p.placement));
    if (this.distilledPlacement) models.push(runsOn(DEFAULT_RERANKER, this.distilledPlacement));
    this.status.update({ models });
  }

  /** Register the handlers and start listening. */
  start(): void {
    const connection = this.connection;
    const minLevel = this.host.logLevel ?? 'info';
    setLogSink((level, tag, message) => {
      const line = `[${tag}] ${message}`;
      if (level === 'error') connection.console.error(line);
      else if (level === 'warn') connection.console.warn(line);
      else if (level === 'info') connection.console.info(line);
      else connection.console.log(line);
    }, minLevel);
    this.status.attach(connection);
    this.lifecycle.attach(connection);
    connection.onInitialize((params) => this.initialize(params));
    connection.onInitialized(() => void this.initialized());
    connection.onDidChangeConfiguration((params) => {
      const settings = (params.settings as { coderag?: unknown } | undefined)?.coderag ?? params.settings;
      this.applyConfig(settings);
    });
    connection.onNotification(SetApiKeyNotification.type, (params) => {
      const key = typeof params?.apiKey === 'string' ? params.apiKey : '';
      const problem = apiKeyProblem(key);
      if (problem) log.warn(`the OpenAI-compatible API key was not changed: ${problem}`);
      else {
        this.apiKey = key;
        log.info(`the OpenAI-compatible API key was ${this.apiKey ? 'set' : 'cleared'}`);
      }
      this.applyConfig(this.lastSettings, false);
    });
    this.loopDelay.enable();
    connection.onRequest(GetStatusRequest.type, () => {
      const status = this.status.snapshot();
      return { ...status, stats: { ...status.stats, memory: memoryMB(), eventLoopDelayMs: this.takeLoopDelay() } };
    });
    connection.onRequest(MemoryRequest.type, (params) => {
      const gc = (globalThis as { gc?: () => void }).gc;
      const collected = Boolean(params?.collectGarbage && typeof gc === 'function');
      if (collected) gc!();
      return { ...memoryMB(), collected };
    });
    this.documents.onDidSave((e) => void this.indexer.onSaved(e.document.uri, e.document.getText()));
    connection.onShutdown(async () => {
      this.loopDelay.disable();
      this.lifetime.abort();
      for (const f of [...this.features].reverse()) await f.shutdown?.();
      this.status.dispose();
      await (await this.itemEncoderPromise)?.dispose().catch(() => undefined);
      await this.registry.dispose().catch(() => undefined);
    });
    this.documents.listen(connection);
    connection.listen();
  }

  /** Event-loop delay since the previous call (the histogram counts in nanoseconds). */
  private takeLoopDelay(): { max: number; p99: number; mean: number; windowMs: number } {
    const h = this.loopDelay;
    const ms = (ns: number): number => Math.round(ns / 1e4) / 100;
    const now = performance.now();
    const view =
      h.count > 0
        ? { max: ms(h.max), p99: ms(h.percentile(99)), mean: ms(h.mean), windowMs: Math.round(now - this.loopWindowStart) }
        : { max: 0, p99: 0, mean: 0, windowMs: Math.round(now - this.loopWindowStart) };
    h.reset();
    this.loopWindowStart = now;
    return view;
  }

  private initialize(params: InitializeParams): InitializeResult {
    this.initOptions = (params.initializationOptions ?? {}) as InitializationOptions;
    if (this.initOptions.cacheDir) this.cacheRoot = this.initOptions.cacheDir;
    if (typeof this.initOptions.openaiApiKey === 'string') {
      const problem = apiKeyProblem(this.initOptions.openaiApiKey);
      if (problem) log.warn(`the OpenAI-compatible API key is not used: ${problem}`);
      else this.apiKey = this.initOptions.openaiApiKey;
    }
    const trusted = this.initOptions.trusted !== false;
    const { config: merged, problems } = mergeConfig(this.initOptions.settings);
    const config = this.withApiKey(merged);
    this.config = config;
    for (const p of problems) log.warn(`setting ignored: ${p}`);
    this.status.update({ settingsProblems: problems });
    // No model is loaded before initialized(): open them on the configured device.
    void this.registry.dispose();
    this.registry = new ModelRegistry(this.registryOptions());
    const folders = initialWorkspaceFolders(params);
    this.indexer.setWorkspaceFolders(folders);
    this.indexer.trusted = trusted;
    this.completion.trusted = trusted;
    this.status.update({
      trusted,
      completionsEnabled: config.enable,
      folders: folders.map((f) => ({ uri: f.uri, state: trusted ? 'pending' : 'disabled' })),
    });
    const caps: ClientCapabilities = params.capabilities;
    let capabilities: ServerCapabilities = {
      textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: true } },
    };
    for (const feature of this.features) capabilities = { ...capabilities, ...feature.initialize(this.connection, caps, config) };
    log.info(
      `CodeRAG server starting: ${folders.map((f) => safePath(f.uri)).join(', ') || 'no folder'}; trusted ${trusted}; ` +
        `index cache ${this.cacheRoot}`,
    );
    return { capabilities, serverInfo: { name: 'coderag', version: '0.1.0' } };
  }

  private async initialized(): Promise<void> {
    // The redaction rules load in the background (the first completion need not wait for secretlint's preset).
    void preloadRedaction();
    try {
      await (this.parsersPromise ??= loadParsers(join(this.host.assetsDir, 'grammars')));
    } catch (e) {
      log.error(`loading the tree-sitter grammars failed: ${errorMessage(e)}`);
    }
    // A shutdown while the grammars loaded: no model loads and nothing indexes.
    if (this.lifecycle.phase === 'shutDown') return;
    // The probing model loads in the background; until then queries use the fallback strategy.
    this.causalLM().then(
      (lm) => {
        this.prober = causalLMProber(lm);
        // One in-process LM run at a time: the hypothetical line queues behind probing like a probe.
        this.nextLine = (prompt, maxNewTokens, signal) =>
          this.models.probeSlot.run((s) => lm.generate(prompt, { maxNewTokens }, s), signal);
        log.info(`probing model ${lm.name} loaded in ${lm.timings.loadMs.toFixed(0)} ms`);
      },
      (e: unknown) => log.warn(`the embedded model did not load (probing falls back to a model-free query): ${errorMessage(e)}`),
    );
    // The distilled reranker (CPU, ONNX) loads in the background; until then its choice keeps retrieval order.
    loadDistilledReranker(join(this.host.assetsDir, 'models', DEFAULT_RERANKER), DEFAULT_RERANKER, {
      threads: 1,
      device: this.config.models.device,
    }).then(
      async ({ reranker, scorer }) => {
        this.distilledPlacement = scorer.placement;
        this.publishModelDevices();
        // The feature owns the session from here and releases it at shutdown.
        await this.rerank.setDistilled({ reranker, dispose: () => scorer.dispose() });
        log.info(`distilled reranker ${reranker.name} loaded`);
      },
      (e: unknown) => log.warn(`the distilled reranker did not load (its choice keeps the retrieval order): ${errorMessage(e)}`),
    );
    for (const feature of this.features) {
      try {
        await feature.initialized?.();
      } catch (e) {
        log.error(`starting ${feature.constructor.name} failed: ${errorMessage(e)}`);
      }
    }
  }

  /** The merged settings with the key from the client's secret storage. */
  private withApiKey(config: ServerConfig): ServerConfig {
    return { ...config, openai: { ...config.openai, apiKey: this.apiKey } };
  }

  private applyConfig(settings: unknown, report = true): void {
    this.lastSettings = settings;
    const { config: merged, problems } = mergeConfig(this.initOptions.settings, settings);
    if (report) for (const p of problems) log.warn(`setting ignored: ${p}`);
    this.status.update({ settingsProblems: problems });
    const config = this.withApiKey(merged);
    if (config.models.device !== this.config.models.device)
      log.warn(
        `coderag.models.device is now ${config.models.device}: the models move when the server restarts (reload the ` +
          `window); they stay on ${this.registry.device} until then`,
      );
    this.config = config;
    for (const feature of this.features) feature.updateConfig?.(config);
  }

  get currentConfig(): ServerConfig {
    return this.config;
  }
}

function safePath(uri: string): string {
  try {
    return fileURLToPath(uri);
  } catch {
    return uri;
  }
}

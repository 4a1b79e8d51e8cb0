// The language server's one composition root (CONTRIBUTING.md "Code rules", rule 4): builds the features, wires their
// collaborators by constructor, merges the configuration layers, owns the documents and models.
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
import type { CausalLM, ModelPlacement } from '../engine/models';
import { runsOn } from '../engine/models/device';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../engine/rerank/DistilledReranker';
import { causalLMProber, embeddedLMOf } from '../engine/index/pipelineAdapters';
import type { NextLineModel } from '../engine/similar/perspectives';
import type { ChunkProber } from '../engine/query/probeQuery';
import { errorMessage } from '../engine/util/errors';
import { preloadRedaction } from '../engine/prompt/redact';
import { getLogger, setLogSink, type LogLevel } from '../engine/util/logger';
import { apiKeyProblem, GetStatusRequest, MemoryRequest, SetApiKeyNotification, type InitializationOptions } from '../protocol/protocol';
import { CompletionFeature } from './CompletionFeature';
import { DownloadFeature } from './DownloadFeature';
import { LearningFeature } from './LearningFeature';
import { createSimilarBandit } from '../engine/similar/bandit';
import { mergeConfig, type ServerConfig } from './config';
import { LoopDelay, memoryMB } from './diagnostics';
import { EncoderHost } from './EncoderHost';
import type { Feature } from './feature';
import { ForegroundActivity } from './ForegroundActivity';
import type { LifecycleGuard } from './lifecycle';
import { ModelFeature } from './ModelFeature';
import { RerankFeature } from './RerankFeature';
import { StatusReporter } from './StatusReporter';
import { TraceLog } from './TraceLog';
import { Trust } from './trust';
import { WorkspaceIndexer } from './WorkspaceIndexer';
import { initialWorkspaceFolders } from './workspaceFolders';

const log = getLogger('server');

interface ServerHost {
  /** Folder holding grammars/ and models/ (dist/ for the bundles). */
  assetsDir: string;
  /** Default folder for persisted indexes when the client names none. */
  cacheRoot?: string;
  logLevel?: LogLevel;
}

/** The platform cache folder (CODERAG_CACHE_DIR overrides). */
function defaultCacheRoot(): string {
  return platformCacheRoot(process.env, process.platform, homedir());
}

export class Server {
  private readonly documents = new TextDocuments(TextDocument);
  private readonly status = new StatusReporter();
  /** Completion requests being served; background embedding waits for them. */
  private readonly foreground = new ForegroundActivity();
  /** Built once the client's settings are known (initialize): they say which device the models open on. */
  private registry: ModelRegistry | undefined;
  private readonly encoders: EncoderHost;
  /** Set at initialize from the client's options; the indexer and the completion read it. */
  private readonly trust = new Trust();
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
  private readonly loopDelay = new LoopDelay();

  constructor(
    private readonly connection: Connection,
    private readonly host: ServerHost,
    /** The connection's message strategy: what reaches the handlers below follows the LSP lifecycle. */
    private readonly lifecycle: LifecycleGuard,
  ) {
    this.cacheRoot = host.cacheRoot ?? defaultCacheRoot();
    this.config = mergeConfig().config;
    const parsers = (): Promise<Parsers> => (this.parsersPromise ??= loadParsers(join(host.assetsDir, 'grammars')));
    this.encoders = new EncoderHost({
      assetsDir: host.assetsDir,
      registry: () => this.modelRegistry(),
      registryOptions: () => this.registryOptions(),
      lifetime: this.lifetime.signal,
      foreground: this.foreground,
      similarMode: () => this.config.similar.mode,
      nextLine: () => this.nextLine,
      onLoaded: () => this.publishModelDevices(),
    });
    this.indexer = new WorkspaceIndexer(
      {
        parsers,
        cacheRoot: () => this.cacheRoot,
        retrievers: this.encoders.repositoryIndex,
      },
      this.status,
      this.trust,
    );
    this.models = new ModelFeature(async () => embeddedLMOf(await this.causalLM()), this.status, {
      models: () => this.modelsDir(),
      states: () => join(this.cacheRoot, 'llama-states'),
    });
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
      this.trust,
    );
    // The local model's download: a verified new file makes the model side choose again (`auto` and `local` take it).
    const download = new DownloadFeature({ modelsDir: () => this.modelsDir(), onDownloaded: () => this.models.reload() });
    this.features = [this.indexer, this.models, this.rerank, this.completion, this.learning, download];
  }

  /** Downloaded model files: the client's folder, else `models` beside the client's index folder, else in the cache root. */
  private modelsDir(): string {
    const { modelsDir, cacheDir } = this.initOptions;
    return modelsDir ?? (cacheDir ? join(dirname(cacheDir), 'models') : join(this.cacheRoot, 'models'));
  }

  private registryOptions(): ModelRegistryOptions {
    return {
      modelsDir: join(this.host.assetsDir, 'models'),
      cacheDir: join(this.cacheRoot, 'models'),
      threads: 2,
      device: this.config.models.device,
    };
  }

  /** The model registry; asked for only once initialize has built it. */
  private modelRegistry(): ModelRegistry {
    if (!this.registry) throw new Error('a model was asked for before the client initialized the server');
    return this.registry;
  }

  private causalLM(): Promise<CausalLM> {
    this.lmPromise ??= this.modelRegistry()
      .causalLM(undefined, this.lifetime.signal)
      .then(
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
    const models = this.modelRegistry()
      .placements()
      .map((p) => runsOn(p.name, p.placement));
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
      return { ...status, stats: { ...status.stats, memory: memoryMB(), eventLoopDelayMs: this.loopDelay.take() } };
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
      await this.encoders.dispose();
      await this.registry?.dispose().catch(() => undefined);
    });
    this.documents.listen(connection);
    connection.listen();
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
    // No model is loaded before initialized(): the registry opens them on the configured device.
    this.registry = new ModelRegistry(this.registryOptions());
    const folders = initialWorkspaceFolders(params);
    this.indexer.setWorkspaceFolders(folders);
    this.trust.set(trusted);
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
          `window); they stay on ${this.modelRegistry().device} until then`,
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

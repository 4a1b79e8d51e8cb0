// The completion model: chosen from the settings at start and on change, checked (the server
// answers, the model is pulled), offered for pulling with progress, and its health kept in the
// status from every request's outcome. While the status shows a problem the server is checked again
// on a backing-off timer, so the status clears when it is back even when no request reaches it (a
// suggestion served from the cache). One model request in flight per server (the model slot).
import { availableParallelism } from 'node:os';
import type { ClientCapabilities, Connection, ServerCapabilities } from 'vscode-languageserver/node';
import type { EmbeddedLM } from '../engine/generate/EmbeddedClient';
import { EmbeddedClient } from '../engine/generate/EmbeddedClient';
import { ollamaClientOf, resolveModelClient, type ModelSettings } from '../engine/generate/createModelClient';
import { LocalClient } from '../engine/generate/LocalClient';
import { LatestWinsSlot } from '../engine/generate/modelSlot';
import { LlamaEngine } from '../engine/models/LlamaEngine';
import { LlamaWorkerEngine, llamaWorkerEntry } from '../engine/models/LlamaWorkerEngine';
import { WarmUps } from '../engine/generate/warmUps';
import type { ModelClient, ModelProblem } from '../engine/generate/types';
import type { GenerateOutcome } from '../engine/pipeline';
import { raceCancellation } from '../engine/util/abort';
import { errorMessage, isCancellationError } from '../engine/util/errors';
import { getLogger } from '../engine/util/logger';
import { PullModelRequest, type ModelState, type PullModelResult } from '../protocol/protocol';
import type { ServerConfig } from './config';
import type { Feature } from './feature';
import { isModelProblem, type StatusReporter } from './StatusReporter';
import { downloadedModelPath, downloadedModels } from '../engine/models/ggufDownload';

/** The checks while the model has a problem: first after this long, then twice as long each time, at most a minute. */
const RECHECK_FIRST_MS = 5_000;
const RECHECK_MAX_MS = 60_000;

const log = getLogger('model');

/** What the status says of a client, whatever its state. */
function statusBase(c: ModelClient): { backend: ModelClient['backend']; model: string; endpoint: string } {
  return { backend: c.backend, model: c.model, endpoint: c.endpoint };
}

function settingsOf(config: ServerConfig, localModelPath = config.local.modelPath): ModelSettings {
  return {
    provider: config.model.provider,
    family: config.model.family,
    timeoutMs: config.model.timeoutMs,
    ollama: config.ollama,
    openai: config.openai,
    local: { modelPath: localModelPath },
  };
}

/** Where the local provider's files live: downloaded models, and the places it saves. */
export interface LocalModelFolders {
  models: () => string;
  states: () => string;
}

/** Half the cores, at most 8: llama.cpp with more threads than cores runs many times slower. */
function localThreads(setting: number): number {
  return setting > 0 ? Math.floor(setting) : Math.max(1, Math.min(8, Math.floor(availableParallelism() / 2)));
}

export class ModelFeature implements Feature {
  readonly modelSlot = new LatestWinsSlot();
  /** In-process probing with the embedded LM: one run at a time, the newest request first. */
  readonly probeSlot = new LatestWinsSlot();
  private current: ModelClient;
  private resolving: Promise<void> = Promise.resolve();
  private settingsKey = '';
  private config: ServerConfig | undefined;
  private readonly abort = new AbortController();
  private recheckTimer: NodeJS.Timeout | undefined;
  private recheckDelay = RECHECK_FIRST_MS;
  /** New places' warm-ups and idle reads, through the model slot; the status says while the server reads. */
  readonly warmUps = new WarmUps(this.modelSlot, this.abort.signal, (warming) => this.status.update({ warming }, true));

  /** The local model's client, kept while its settings stay (it holds the loaded model). */
  private local: { key: string; client: LocalClient } | undefined;

  constructor(
    private readonly loadEmbedded: () => Promise<EmbeddedLM>,
    private readonly status: StatusReporter,
    private readonly folders?: LocalModelFolders,
  ) {
    this.current = new EmbeddedClient({ load: loadEmbedded });
  }

  /** The client of a local model file under the current settings: the one already made when they have not changed. */
  private localClient(config: ServerConfig, modelPath: string): LocalClient {
    const l = config.local;
    const options = {
      modelPath,
      threads: localThreads(l.threads),
      contextTokens: l.contextTokens,
      gpu: l.gpu === 'off' ? (false as const) : ('auto' as const),
      ...(this.folders ? { stateDir: this.folders.states() } : {}),
    };
    const key = JSON.stringify({ ...options, idle: l.idleUnloadMinutes });
    if (this.local?.key === key) return this.local.client;
    // On its own thread where the worker script is there (the bundle, or the sources through tsx), else on this one.
    const entry = llamaWorkerEntry();
    const engine = entry ? new LlamaWorkerEngine(options, entry) : new LlamaEngine(options);
    const client = new LocalClient(engine, { idleUnloadMs: l.idleUnloadMinutes * 60_000 });
    this.local = { key, client };
    return client;
  }

  /**
   * The verified download of the settings' URL and digest; without both, the only verified file in the models folder (several:
   * none, the settings must say which).
   */
  private async downloadedModel(config: ServerConfig): Promise<string | undefined> {
    if (!this.folders) return undefined;
    const dir = this.folders.models();
    const { downloadUrl: url, downloadSha256: sha256 } = config.local;
    if (url && sha256) return downloadedModelPath(dir, { url, sha256 });
    const all = await downloadedModels(dir);
    return all.length === 1 ? all[0]!.path : undefined;
  }

  /** Frees a local model no longer chosen. */
  private releaseLocal(): void {
    const held = this.local?.client;
    if (!held || held === this.current) return;
    this.local = undefined;
    void held.dispose().catch((e: unknown) => log.warn(`unloading the local model failed: ${errorMessage(e)}`));
  }

  initialize(connection: Connection, _caps: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities> {
    this.config = config;
    connection.onRequest(PullModelRequest.type, async (params, token): Promise<PullModelResult> => {
      const cfg = this.config;
      if (!cfg) return { ok: false, message: 'not initialised' };
      const ollama = ollamaClientOf(settingsOf(cfg));
      const model = params.model ?? ollama.model;
      const progress = params.workDoneToken !== undefined ? connection.window.attachWorkDoneProgress(params.workDoneToken) : undefined;
      const controller = new AbortController();
      const sub = token.onCancellationRequested(() => controller.abort());
      progress?.begin(`Pulling ${model}`, 0, undefined, true);
      try {
        await ollama.pull(
          (p) => progress?.report(p.total ? Math.floor((100 * (p.completed ?? 0)) / p.total) : 0, p.status),
          controller.signal,
          model,
        );
        this.settingsKey = '';
        this.refresh(cfg);
        await this.resolving;
        return { ok: true };
      } catch (e) {
        return { ok: false, message: isCancellationError(e) ? 'cancelled' : errorMessage(e) };
      } finally {
        progress?.done();
        sub.dispose();
      }
    });
    return {};
  }

  initialized(): Promise<void> {
    if (this.config) this.refresh(this.config);
    return Promise.resolve();
  }

  updateConfig(config: ServerConfig): void {
    this.config = config;
    this.refresh(config);
  }

  /** Resolve the client again when the model settings changed. */
  private refresh(config: ServerConfig): void {
    const key = JSON.stringify({ ...settingsOf(config), local: config.local });
    if (key === this.settingsKey) return;
    this.settingsKey = key;
    this.resolving = this.resolving.then(async () => {
      try {
        const localPath = config.local.modelPath || (await this.downloadedModel(config)) || '';
        const resolved = await resolveModelClient(settingsOf(config, localPath), this.loadEmbedded, this.abort.signal, (path) =>
          this.localClient(config, path),
        );
        this.current = resolved.client;
        this.releaseLocal();
        if (resolved.note) log.info(resolved.note);
        const c = resolved.client;
        const base = statusBase(c);
        if (resolved.problem) {
          log.warn(resolved.problem.message);
          this.status.update({ model: { ...base, state: resolved.problem.kind, message: resolved.problem.message } }, true);
        } else this.status.update({ model: { ...base, state: 'ok', ...(resolved.note ? { message: resolved.note } : {}) } }, true);
        this.followProblem(true);
      } catch (e) {
        if (!isCancellationError(e)) log.error(`choosing the model failed: ${errorMessage(e)}`);
      }
    });
  }

  /** Waits for a settings change being applied, until `signal` aborts: a request starting after it gets the chosen client. */
  async ready(signal: AbortSignal): Promise<void> {
    await raceCancellation(this.resolving, signal);
  }

  get clientNow(): ModelClient {
    return this.current;
  }

  /** Keep the status in step with what the last request's generate stage found (undefined: the request asked no model). */
  recordOutcome(generate: GenerateOutcome | undefined): void {
    const c = this.current;
    const base = statusBase(c);
    const prev = this.status.current.model;
    if (generate?.status === 'failed') {
      const state: ModelState = generate.kind === 'error' ? 'error' : generate.kind;
      if (prev.state !== state || prev.message !== generate.message) log.warn(`model ${c.model}: ${generate.message}`);
      this.status.update({ model: { ...base, state, message: generate.message } }, true);
    } else if (generate?.status === 'answered' && prev.state !== 'ok') {
      if (prev.state !== 'unknown') log.info(`model ${c.model} answers again`);
      this.status.update({ model: { ...base, state: 'ok' } }, true);
    } else if (generate?.status === 'answered' && c instanceof LocalClient && prev.endpoint !== base.endpoint) {
      // The local model has loaded: the status names where it runs (CPU or GPU), and what it lacks.
      const note = c.note;
      if (note) log.warn(note);
      this.status.update({ model: { ...base, state: 'ok', ...(note ? { message: note } : {}) } }, true);
    }
    this.followProblem(false);
  }

  /**
   * Keep one timer running while the status shows a model problem the client can check (a server;
   * the embedded model has nothing to come back), none otherwise. `fresh`: a new client, the
   * back-off starts again.
   */
  private followProblem(fresh: boolean): void {
    const problem = isModelProblem(this.status.current.model.state) && this.current.check !== undefined;
    if (fresh || !problem) {
      clearTimeout(this.recheckTimer);
      this.recheckTimer = undefined;
      this.recheckDelay = RECHECK_FIRST_MS;
    }
    if (!problem || this.recheckTimer || this.abort.signal.aborted) return;
    this.recheckTimer = setTimeout(() => void this.recheck(), this.recheckDelay);
    this.recheckTimer.unref();
    this.recheckDelay = Math.min(RECHECK_MAX_MS, this.recheckDelay * 2);
  }

  /**
   * One check of the client whose problem the status shows; the status clears when it passes.
   * recheckTimer stays set while the check runs, so no second one is scheduled meanwhile.
   */
  private async recheck(): Promise<void> {
    const client = this.current;
    let answer: { problem: ModelProblem | undefined } | undefined;
    try {
      answer = { problem: await client.check?.(this.abort.signal) };
    } catch (e) {
      if (isCancellationError(e)) return;
      log.warn(`checking model ${client.model} failed: ${errorMessage(e)}`);
    }
    this.recheckTimer = undefined;
    // A settings change chose another client meanwhile: its own check decides.
    if (client !== this.current) return;
    const prev = this.status.current.model;
    if (answer && !answer.problem && isModelProblem(prev.state)) {
      log.info(`model ${client.model} answers again (checked)`);
      this.status.update({ model: { ...statusBase(client), state: 'ok' } }, true);
    } else if (answer?.problem && answer.problem.kind !== prev.state)
      this.status.update({ model: { ...statusBase(client), state: answer.problem.kind, message: answer.problem.message } }, true);
    this.followProblem(false);
  }

  /** Settings are read again now (a model was downloaded). */
  reload(): void {
    this.settingsKey = '';
    if (this.config) this.refresh(this.config);
  }

  shutdown(): void {
    this.abort.abort();
    clearTimeout(this.recheckTimer);
    void this.local?.client.dispose().catch(() => undefined);
  }
}

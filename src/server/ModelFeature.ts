// The completion model: chosen from the settings at start and on change, checked (the server
// answers, the model is pulled), offered for pulling with progress, and its health kept in the
// status from every request's outcome. While the status shows a problem the server is checked again
// on a backing-off timer, so the status clears when it is back even when no request reaches it (a
// suggestion served from the cache). One model request in flight per server (the model slot).
import type { ClientCapabilities, Connection, ServerCapabilities } from 'vscode-languageserver/node';
import type { EmbeddedLM } from '../engine/generate/EmbeddedClient';
import { EmbeddedClient } from '../engine/generate/EmbeddedClient';
import { ollamaClientOf, resolveModelClient, type ModelSettings } from '../engine/generate/createModelClient';
import { LatestWinsSlot } from '../engine/generate/modelSlot';
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

/** The checks while the model has a problem: first after this long, then twice as long each time, at most a minute. */
const RECHECK_FIRST_MS = 5_000;
const RECHECK_MAX_MS = 60_000;

const log = getLogger('model');

/** What the status says of a client, whatever its state. */
function statusBase(c: ModelClient): { backend: ModelClient['backend']; model: string; endpoint: string } {
  return { backend: c.backend, model: c.model, endpoint: c.endpoint };
}

function settingsOf(config: ServerConfig): ModelSettings {
  return {
    provider: config.model.provider,
    family: config.model.family,
    timeoutMs: config.model.timeoutMs,
    ollama: config.ollama,
    openai: config.openai,
  };
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

  constructor(
    private readonly loadEmbedded: () => Promise<EmbeddedLM>,
    private readonly status: StatusReporter,
  ) {
    this.current = new EmbeddedClient({ load: loadEmbedded });
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
    const settings = settingsOf(config);
    const key = JSON.stringify(settings);
    if (key === this.settingsKey) return;
    this.settingsKey = key;
    this.resolving = this.resolving.then(async () => {
      try {
        const resolved = await resolveModelClient(settings, this.loadEmbedded, this.abort.signal);
        this.current = resolved.client;
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

  shutdown(): void {
    this.abort.abort();
    clearTimeout(this.recheckTimer);
  }
}

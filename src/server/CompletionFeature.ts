// textDocument/inlineCompletion: per document debounce, abort of the superseded request, the
// typing-through cache, one pipeline per workspace folder (built once, again when the settings
// change) behind one model slot, traces for `coderag/explain`.
import type { CancellationToken, ClientCapabilities, Connection, ServerCapabilities, TextDocuments } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { Lang } from '../engine/kb/types';
import { langOfPath } from '../engine/kb/parsers';
import type { LinUcb } from '../engine/similar/linUcb';
import type { SimilarArm } from '../engine/similar/types';
import {
  autoRouter,
  createPipeline,
  formatTraceMarkdown,
  LINE_MODE,
  modelTimeMs,
  resolveOptions,
  stageTimeMs,
  rerankerNow,
  similarModeFor,
  type Pipeline,
  type PipelineOptions,
  type RequestEnv,
  type StageOutcomes,
} from '../engine/pipeline';
import type { ChunkProber } from '../engine/query/probeQuery';
import { sleep, yieldTurn } from '../engine/util/abort';
import { CancellationError, errorMessage, isCancellationError } from '../engine/util/errors';
import { getLogger } from '../engine/util/logger';
import { withLineBreak } from '../engine/util/documentText';
import {
  ExplainRequest,
  InlineCompletionRequest,
  type ExplainResult,
  type InlineCompletionList,
  type InlineCompletionParams,
} from '../protocol/protocol';
import { CompletionCache } from './completionCache';
import { pipelineSettings, type ServerConfig } from './config';
import type { Feature } from './feature';
import type { ForegroundActivity } from './ForegroundActivity';
import type { ModelFeature } from './ModelFeature';
import type { RerankFeature } from './RerankFeature';
import type { StatusReporter } from './StatusReporter';
import type { FolderIndex } from './FolderIndex';
import type { WorkspaceIndexer } from './WorkspaceIndexer';
import { FolderPipelines } from './FolderPipelines';
import { CompletionStats } from './CompletionStats';
import type { Trust } from './trust';
import type { GateModel } from '../engine/gate/model';
import type { TraceLog } from './TraceLog';
import { cursorAt } from './positions';
import { PromptMemory } from '../engine/prompt/promptMemory';
import { redactSecrets } from '../engine/prompt/redact';

const log = getLogger('completion');

/** ProCC's bandit and the show gate's model of each workspace folder (its root; undefined for a file outside every folder). */
interface FolderBandits {
  /** Reads the folder's saved states (the bandit's and the gate's). */
  load(folderRoot: string | undefined): Promise<LinUcb<SimilarArm> | undefined>;
  loaded(folderRoot: string | undefined): LinUcb<SimilarArm> | undefined;
  /** The gate as the folder learned it, once loaded; undefined: the shipped weights. */
  loadedShowGate?(folderRoot: string | undefined): GateModel | undefined;
  /** Keep what a suggestion made in a workspace folder can teach (the bandit's choice, the gate's view) until its outcome arrives. */
  remember?(traceId: string, folderRoot: string, outcomes: Pick<StageOutcomes, 'similar' | 'gate'>): void;
  /** The reward the bandit learned from a suggestion, once its outcome arrived (Explain shows it). */
  banditReward?(traceId: string): number | undefined;
}

/**
 * A pause this long after the last request (none in flight) is idle time: the shared block takes the
 * items the place's ranking still wants, and the server reads them (llama.vim moves a chunk into its
 * ring after a second of idleness; a little less keeps up with a user who pauses between lines).
 */
export const IDLE_MS = 800;

/**
 * A read in idle time goes in pieces the server reads in about a second (a code model's token is about 3
 * characters): llama.cpp's server finishes the piece it is reading after its client has gone, so a request
 * that comes meanwhile waits that long at most. Before the server's speed is known, 300 characters (about
 * a second at 1.5B on one quiet CPU thread).
 */
const PIECE_SECONDS = 1;
const CHARS_PER_TOKEN = 3;
const PIECE_CHARS = { unknown: 300, least: 60, most: 1200 };

/** The characters of an idle read's piece for a server reading `tokensPerSecond`. */
export function pieceChars(tokensPerSecond: number | undefined): number {
  if (tokensPerSecond === undefined || !(tokensPerSecond > 0)) return PIECE_CHARS.unknown;
  return Math.round(Math.min(PIECE_CHARS.most, Math.max(PIECE_CHARS.least, tokensPerSecond * PIECE_SECONDS * CHARS_PER_TOKEN)));
}

/**
 * The prompts an idle read sends, each about `piece` characters longer than the last, from where `head`
 * leaves what the server read last (`lastHead`); each ends at a line's end, so its tokens are the longer one's.
 */
export function idleChunks(head: string, lastHead: string, piece = PIECE_CHARS.unknown): string[] {
  let from = 0;
  while (from < head.length && from < lastHead.length && head.charCodeAt(from) === lastHead.charCodeAt(from)) from++;
  const out: string[] = [];
  for (let at = head.indexOf('\n', from + piece); at >= 0 && at + 1 < head.length; at = head.indexOf('\n', at + 1 + piece))
    out.push(head.slice(0, at + 1));
  out.push(head);
  return out;
}

function langOf(doc: TextDocument): Lang | undefined {
  if (doc.languageId === 'python' || doc.languageId === 'java') return doc.languageId;
  return langOfPath(doc.uri);
}

export class CompletionFeature implements Feature {
  private config: ServerConfig | undefined;
  private options: PipelineOptions | undefined;
  private cache = new CompletionCache(1000);
  private readonly pending = new Map<string, AbortController>();
  private readonly pipelines = new FolderPipelines<FolderIndex>((folder, ready) => this.buildPipeline(folder, ready));
  /** Each workspace folder's place memory and shared block (by root; '' outside every folder), kept across its pipelines. */
  private readonly memories = new Map<string, PromptMemory>();
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly stats: CompletionStats;

  /**
   * `traces`: where each completion's trace is kept (explain). `bandits`: the LinUCB that
   * chooses ProCC's perspective for a workspace folder (its root; undefined for a file outside
   * every folder); the learning feature owns it, saves it and rewards it from what `remember` kept
   * of each completion. `load` reads its saved state off the event loop, `loaded` gives it once
   * read. Undefined: `bandit` mode uses its fixed fallback perspective (lexical).
   */
  constructor(
    private readonly documents: TextDocuments<TextDocument>,
    private readonly indexer: WorkspaceIndexer,
    private readonly models: ModelFeature,
    private readonly rerank: RerankFeature,
    private readonly prober: () => ChunkProber | undefined,
    private readonly status: StatusReporter,
    private readonly foreground: ForegroundActivity,
    private readonly traces: TraceLog,
    private readonly bandits: FolderBandits,
    private readonly trust: Trust,
  ) {
    this.stats = new CompletionStats(status, models.modelSlot);
  }

  /** Whether the workspace is trusted (untrusted: no completion, no idle read). */
  private get trusted(): boolean {
    return this.trust.trusted;
  }

  initialize(connection: Connection, _caps: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities> {
    this.updateConfig(config);
    connection.onRequest(InlineCompletionRequest.type, (params, token) => this.provide(params, token));
    connection.onRequest(ExplainRequest.type, (params): ExplainResult | null => {
      const entry = this.traces.get(params.traceId);
      if (!entry) return null;
      // The bandit's reward, once the suggestion's outcome arrived, is shown with the similar-code stage.
      const reward = this.bandits.banditReward?.(entry.trace.id);
      const trace =
        entry.trace.similar && reward !== undefined ? { ...entry.trace, similar: { ...entry.trace.similar, reward } } : entry.trace;
      return {
        trace,
        markdown: formatTraceMarkdown(trace, { ...(entry.server.models ? { models: entry.server.models } : {}) }),
        server: entry.server,
      };
    });
    // LSP 3.18 capability; vscode-languageserver 9 does not type it yet.
    return { inlineCompletionProvider: {} } as Partial<ServerCapabilities>;
  }

  updateConfig(config: ServerConfig): void {
    const changedModel =
      this.config !== undefined &&
      JSON.stringify([this.config.model, this.config.ollama, this.config.openai, this.config.prompt, this.config.suggestions]) !==
        JSON.stringify([config.model, config.ollama, config.openai, config.prompt, config.suggestions]);
    this.config = config;
    this.options = resolveOptions(pipelineSettings(config));
    // The pipelines hold the options: each is built again on its folder's next request.
    this.pipelines.clear();
    this.cache.resize(config.cache.size);
    // Completions of another model, or shown at another level of coderag.suggestions.show, are not what typing through should show.
    if (changedModel) this.cache.clear();
    // Settings sent again rebuild the pipelines and start the places anew (another model's blocks are no prefix of its prompts).
    this.memories.clear();
    this.status.update({ completionsEnabled: config.enable });
  }

  /**
   * The pipeline of a workspace folder: the auto router (body mode in an empty method body, else line
   * mode) once it is ready, line mode without retrieval before; what it keeps across the folder's
   * requests (the model slots, the places of work, the warm-ups).
   */
  private buildPipeline(folder: FolderIndex | undefined, ready: boolean): Pipeline {
    const repo = ready ? folder : undefined;
    const route = repo ? autoRouter({ parsers: repo.parsers }) : LINE_MODE;
    const options = this.options;
    if (!options) throw new Error('completion requested before the settings arrived');
    return createPipeline(
      options,
      {
        modelSlot: this.models.modelSlot,
        probeSlot: this.models.probeSlot,
        // The block and left edge of each place of work, kept across this folder's keystrokes, and the warm-up after a block changes.
        promptMemory: this.memoryOf(folder?.root),
        warmUps: this.models.warmUps,
        // Between stages one quiet turn: the backlog was read before the pipeline started.
        yieldTurn,
        offersSimilar: true,
      },
      route,
    );
  }

  /**
   * What one request is lent, resolved when it starts: the client the settings chose, the folder's
   * repository while it stays ready (its lease), the prober, the reranker chosen now, the folder's
   * bandit and gate.
   */
  private requestEnv(folder: FolderIndex | undefined, lang: Lang, options: PipelineOptions): RequestEnv {
    const model = this.models.clientNow;
    const ready = folder && folder.state === 'ready' ? folder : undefined;
    // Under `auto` a request whose mode wants similar code asks the folder to build its windows.
    if (ready?.similar && !ready.similar.ready && similarModeFor(options.similar.mode, lang, model.backend) !== 'off')
      this.indexer.wantSimilar(ready);
    const prober = this.prober();
    const reranker = rerankerNow(this.rerank.switcher);
    const bandit = this.bandits.loaded(folder?.root);
    const showGateModel = this.bandits.loadedShowGate?.(folder?.root);
    return {
      model,
      ...(ready
        ? {
            repo: {
              // Revoked when the folder starts indexing again mid-request: the stages after that lend nothing more of it.
              lease: ready.lease,
              retrievers: ready.retrievers,
              receivers: ready.receivers,
              ...(ready.similar ? { similar: ready.similar } : {}),
              ...(ready.methods ? { methods: ready.methods } : {}),
            },
          }
        : {}),
      ...(prober ? { prober } : {}),
      ...(reranker ? { reranker } : {}),
      ...(bandit ? { bandit } : {}),
      ...(showGateModel ? { showGateModel } : {}),
    };
  }

  /** The place memory of the folder at `root`, made on first use. */
  private memoryOf(root: string | undefined): PromptMemory {
    const key = root ?? '';
    let memory = this.memories.get(key);
    if (!memory) this.memories.set(key, (memory = new PromptMemory()));
    return memory;
  }

  /** After a request, wait for a pause, then let the place's waiting items into the shared block. */
  private scheduleIdle(memory: PromptMemory): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.whenIdle(memory), IDLE_MS);
    this.idleTimer.unref();
  }

  /**
   * Idle time: the prompt at the last place with the items its ranking wants appended to the shared
   * block, read by the server through the model slot; a request that comes meanwhile cuts the read,
   * and the block takes the items only once the server has read them.
   */
  private async whenIdle(memory: PromptMemory): Promise<void> {
    if (this.pending.size > 0 || !this.config?.enable || !this.trusted) return;
    const work = memory.idleWork();
    if (!work) return;
    const model = this.models.clientNow;
    const [head, last] = await Promise.all([redactSecrets(work.head), redactSecrets(work.lastHead)]);
    if (this.pending.size > 0) return;
    if (!(await this.models.warmUps.inIdle(model, idleChunks(head.text, last.text, pieceChars(model.readRate))))) return;
    if (work.commit()) {
      log.debug(`idle: ${work.appended} items joined the shared block`);
      this.scheduleIdle(memory);
    }
  }

  /** Pipelines built since start (one per folder and settings; tests read it). */
  get pipelinesBuilt(): number {
    return this.pipelines.built;
  }

  /** One inline-completion request; null when there is nothing to show or it was superseded. */
  async provide(params: InlineCompletionParams, token: CancellationToken): Promise<InlineCompletionList | null> {
    const t0 = performance.now();
    this.stats.request();
    const config = this.config;
    const options = this.options;
    if (!config || !options || !config.enable || !this.trusted) return null;
    const doc = this.documents.get(params.textDocument.uri);
    if (!doc) return null;
    const lang = langOf(doc);
    if (!lang) return null;
    // The engine reads LF line breaks and a cursor on a character boundary; a document past the
    // limits a file on disk has is completed from a window around the cursor, so nothing downstream
    // parses (or keys the cache on) megabytes per keystroke. The suggestion goes back with the
    // document's line break, at the cursor as clamped.
    const { prefix, suffix, lineBreak, position, windowed } = cursorAt(doc, params.position, { maxBytes: config.maxFileBytes });
    if (windowed) log.debug(`${doc.uri}: over the document limits (${windowed}); completing from a window around the cursor`);
    const hit = this.indexer.folderFor(doc.uri);
    const filePath = hit?.relPath ?? doc.uri;
    const range = { start: position, end: position };

    // Typing through a shown suggestion: no debounce, no model.
    const cached = this.cache.get(filePath, prefix, suffix);
    if (cached) {
      this.stats.cacheHit(performance.now() - t0);
      this.stats.publish();
      return { items: [{ insertText: withLineBreak(cached.text, lineBreak), range, traceId: cached.traceId, fromCache: true }] };
    }

    // A request ends the pause: what idle time was reading is cut by the model slot.
    clearTimeout(this.idleTimer);
    // The newest request of a document supersedes the one before it (debouncing or in flight).
    const key = doc.uri;
    this.pending.get(key)?.abort();
    const controller = new AbortController();
    this.pending.set(key, controller);
    const sub = token.onCancellationRequested(() => controller.abort());
    // Background embedding pauses until this request ends.
    const activity = this.foreground.begin();
    const signal = controller.signal;
    let debounceMs = 0;
    let checkpointMs = 0;
    try {
      const d0 = performance.now();
      if (config.debounceMs > 0) await sleep(config.debounceMs, signal);
      await this.settle(signal);
      debounceMs = performance.now() - d0;
      await this.models.ready(signal);
      const folder = hit?.folder;
      // Body mode (Rambo) where the cursor is in an empty method body of an indexed folder, line mode elsewhere.
      // The bandit's and the gate's saved states are read off the event loop: the first request of a folder waits for them.
      if (options.similar.mode === 'bandit' || options.gate.mode === 'on') await this.bandits.load(folder?.root);
      const pipeline = this.pipelines.for(folder);
      const request = { filePath, lang, prefix, suffix, ...(folder ? { repoName: folder.name } : {}) };
      const result = await pipeline.complete(request, signal, this.requestEnv(folder, lang, options));
      const { times } = result.outcomes;
      checkpointMs = times.checkpointMs ?? 0;
      this.models.recordOutcome(result.outcomes.generate);
      const handlerMs = performance.now() - t0;
      // The server's overhead: the handler's time outside the debounce, the model and the repository's knowledge stages.
      const overheadMs = Math.max(0, handlerMs - debounceMs - modelTimeMs(times) - stageTimeMs(times, 'knowledge'));
      this.stats.overhead(overheadMs);
      const item = result.items[0];
      const promptMs = stageTimeMs(times, 'assembly');
      const models = this.status.current.models;
      this.traces.keep(result.trace, {
        debounceMs,
        handlerMs,
        overheadMs,
        cache: 'miss',
        checkpointMs,
        promptMs,
        ...(models ? { models } : {}),
      });
      // Learning keeps what the bandit chose and the gate saw until the suggestion's outcome arrives, apart from Explain's traces.
      if (folder) this.bandits.remember?.(result.trace.id, folder.root, result.outcomes);
      this.stats.publish();
      if (!item) return null;
      this.cache.put(filePath, prefix, suffix, { text: item.text, traceId: result.trace.id });
      return { items: [{ insertText: withLineBreak(item.text, lineBreak), range, traceId: result.trace.id }] };
    } catch (e) {
      if (isCancellationError(e) || signal.aborted) {
        log.debug(`request superseded after ${(performance.now() - t0).toFixed(1)} ms (debounce ${debounceMs.toFixed(1)} ms)`);
        return null;
      }
      log.error(`completion failed: ${errorMessage(e)}`);
      return null;
    } finally {
      activity.dispose();
      sub.dispose();
      if (this.pending.get(key) === controller) this.pending.delete(key);
      if (this.pending.size === 0) this.scheduleIdle(this.memoryOf(hit?.folder?.root));
    }
  }

  /**
   * After a busy stretch (a model forward pass on a loaded machine) the timer can fire before the
   * messages that arrived meanwhile are read; let the queued messages through first, so a request
   * that is already superseded starts no work. Ends when no request arrived for three turns.
   */
  private async settle(signal: AbortSignal, quietTurns = 3): Promise<void> {
    let seen = this.stats.requests;
    for (let quiet = 0, turns = 0; quiet < quietTurns && turns < 1000; turns++) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal.aborted) throw new CancellationError();
      if (this.stats.requests === seen) quiet++;
      else {
        seen = this.stats.requests;
        quiet = 0;
      }
    }
  }

  shutdown(): void {
    clearTimeout(this.idleTimer);
    for (const c of this.pending.values()) c.abort();
    this.pending.clear();
  }
}

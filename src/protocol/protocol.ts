// The client <-> server protocol: LSP 3.18 inline completion (declared here because
// vscode-languageserver 9 only has it as a proposal) and CodeRAG's own requests and
// notifications, each a documented namespace with `method` and `type` (CONTRIBUTING.md "Code rules", rule 5).
// Types and constants only (and the environment the server process starts with): shared by src/client and src/server; imports nothing of
// theirs.
import {
  NotificationType,
  ProtocolRequestType,
  RequestType,
  RequestType0,
  type TextDocumentPositionParams,
  type WorkDoneProgressParams,
  type Range,
} from 'vscode-languageserver-protocol';
import type { CompletionTrace, StageTiming } from './trace.generated';

export type * from './trace.generated';

/**
 * Environment the editor starts the language server with (the benchmarks start it the same way).
 * glibc gives each thread that allocates its own malloc arena and keeps what is freed in them; the
 * server's threads (the encoder's thread, ONNX Runtime's pools) left about 100 MB more resident. With
 * two arenas, RSS after indexing the JDK's java.base fell from 943 to 845 MB at the same embedding
 * rate (npm run bench:server; docs/BENCHMARKS.md "Large repositories"). A fixed mmap threshold of 128 KB keeps
 * glibc from raising it after a large free, so that blocks from 128 KB up are mapped on their own
 * and given back when freed instead of staying in the arenas: 862 -> 688 MB after indexing
 * java.base, 640 -> 557 MB after the requests that followed. ONNX Runtime's arenas stay on with it:
 * without them every run mapped and unmapped its tensors (probing LM, one 256-token forward pass
 * 11.7 -> 25.3 ms; query stage median 41 ms in bench:server against 29 with them).
 */
export const SERVER_PROCESS_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * Node flags the editor starts the language server with (the benchmarks too). V8's young
 * generation grows to 16 MB semi-spaces under the allocation bursts of completion requests and
 * stays that size: on java.base the JS heap's committed size went from 128 to 179 MB over 200
 * requests with 119 MB in use. With 4 MB semi-spaces RSS after those requests was 411 MB against
 * 435-440 MB, at the same stage latencies (npm run bench:server; docs/BENCHMARKS.md "Large repositories").
 *
 * `--heap-growing-percent=20`: V8 lets the old generation grow to about 1.2x what survived the last
 * full collection before the next one (its own factor, chosen by GC speed, let it reach about 1.5x
 * and kept the pages). On java.base, two pairs of runs, RSS after 200 requests 392 / 392 MB without
 * it and 363 / 364 MB with it (growth from idle 13.0 / 12.6% against 4.3 / 6.1%); request time
 * median the same (39.1 / 39.0 ms in the quieter pair), p95 higher (68.9 -> 88.7 ms, 100 -> 130 ms).
 */
export const SERVER_EXEC_ARGV: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

// ---------------------------------------------------------------------------------------------
// LSP 3.18 textDocument/inlineCompletion

export const InlineCompletionTriggerKind = { Invoked: 1, Automatic: 2 } as const;
export type InlineCompletionTriggerKind = 1 | 2;

export interface InlineCompletionContext {
  triggerKind: InlineCompletionTriggerKind;
  /** The completion item the suggest widget has selected, when it is open. */
  selectedCompletionInfo?: { range: Range; text: string };
}

export interface InlineCompletionParams extends TextDocumentPositionParams, WorkDoneProgressParams {
  context: InlineCompletionContext;
}

export interface InlineCompletionItem {
  insertText: string | { kind: 'snippet'; value: string };
  filterText?: string;
  /** Replaced by insertText; we always return an empty range at the cursor (deterministic ghost text). */
  range?: Range;
  command?: { title: string; command: string; arguments?: unknown[] };
  /** CodeRAG extension: the trace of the completion this item came from (for `coderag/explain`). */
  traceId?: string;
  /** CodeRAG extension: served from the typing-through cache without a model call. */
  fromCache?: boolean;
}

export interface InlineCompletionList {
  items: InlineCompletionItem[];
}

export interface InlineCompletionOptions {
  workDoneProgress?: boolean;
}

/** `textDocument/inlineCompletion` (LSP 3.18): ghost-text completions at a position. */
export namespace InlineCompletionRequest {
  export const method = 'textDocument/inlineCompletion' as const;
  export const type = new ProtocolRequestType<
    InlineCompletionParams,
    InlineCompletionList | InlineCompletionItem[] | null,
    void,
    void,
    InlineCompletionOptions
  >(method);
}

// ---------------------------------------------------------------------------------------------
// Settings the client passes at start (initializationOptions)

export interface InitializationOptions {
  /** The workspace is trusted; when false the server indexes nothing and completes nothing. */
  trusted?: boolean;
  /** Folder for persisted indexes (the extension's global storage); default: the platform cache folder. */
  cacheDir?: string;
  /** Folder for downloaded model files (the extension's global storage); default: `models` beside `cacheDir`, else in the cache folder. */
  modelsDir?: string;
  /** The `coderag.*` settings (nested as `workspace.getConfiguration('coderag')` returns them). */
  settings?: unknown;
  /**
   * The OpenAI-compatible server's API key (VS Code keeps it in SecretStorage; other editors pass
   * it here). The `coderag.openai.apiKey` setting is ignored: a repository could set it.
   */
  openaiApiKey?: string;
}

// ---------------------------------------------------------------------------------------------
// Custom requests

/** A folder's background embedding run, which completions wait for: the dense path's items or ProCC's code windows. */
export interface BackgroundBuild {
  /**
   * off: not built (no code encoder, or its setting is off); building: waiting for the index or
   * embedding; ready: completions use it; failed: not used, `message` says why.
   */
  state: 'off' | 'building' | 'ready' | 'failed';
  message?: string;
}

export interface FolderIndexSummary {
  uri: string;
  state: 'pending' | 'indexing' | 'ready' | 'failed' | 'disabled';
  files?: number;
  items?: number;
  elapsedMs?: number;
  message?: string;
  /** Dense retrieval and its items embedded once ready (`indexing.dense` follows a run). Absent for a folder not opened. */
  dense?: BackgroundBuild & { items: number };
  /** ProCC's code windows for similar code (`coderag.similar.mode`), counted once ready. Absent for a folder not opened. */
  similar?: BackgroundBuild & { windows: number };
  /** Source files left out of the index and why (the first MAX_SKIPPED_LISTED; `skippedCount` counts all). Absent when none. */
  skipped?: SkippedFileSummary[];
  skippedCount?: number;
}

export interface SkippedFileSummary {
  /** Repo-relative path. */
  path: string;
  /** The reason's code (`tooLarge`, `notUtf8`, `longLines`, `tooManyItems`, ...). */
  reason: string;
  /** The reason in words, with the figure that decided it. */
  detail: string;
}

/** A folder's status lists this many skipped files at most: it is sent on every change. */
export const MAX_SKIPPED_LISTED = 20;

export interface RebuildIndexParams extends WorkDoneProgressParams {
  /** One workspace folder; omit for all. */
  folderUri?: string;
  /** Drop the saved index and parse every file again (default false: re-scan, re-parse changed files). */
  full?: boolean;
}

export interface RebuildIndexResult {
  folders: FolderIndexSummary[];
}

/** `coderag/rebuildIndex`: re-scan the workspace folders; reports work-done progress; resolves when done. */
export namespace RebuildIndexRequest {
  export const method = 'coderag/rebuildIndex' as const;
  export const type = new ProtocolRequestType<RebuildIndexParams, RebuildIndexResult, void, void, void>(method);
}

export type RerankerChoice = 'llm' | 'distilled' | 'none';

export interface SetRerankerParams {
  reranker: RerankerChoice;
}

export interface SetRerankerResult {
  reranker: RerankerChoice;
  /** Kinds with a reranker ready to use. */
  available: RerankerChoice[];
}

/** `coderag/setReranker`: choose the reranker for the next request (no restart). */
export namespace SetRerankerRequest {
  export const method = 'coderag/setReranker' as const;
  export const type = new ProtocolRequestType<SetRerankerParams, SetRerankerResult, void, void, void>(method);
}

export interface SetApiKeyParams {
  /** The new key; empty: none. */
  apiKey: string;
}

/**
 * Why a key cannot be used (it would not fit an HTTP header, and an error quoting the header would
 * print it), in words that never quote the key; undefined when it can. Keys are printable ASCII.
 */
export function apiKeyProblem(key: string): string | undefined {
  if (/[\r\n]/.test(key)) return 'the API key contains a line break (a paste that took the next line?); it was not set';
  if (/[^\x20-\x7e]/.test(key)) return 'the API key contains a control character or a character outside printable ASCII; it was not set';
  return undefined;
}

/** `coderag/setOpenAiApiKey`: the client's secret key changed (set or cleared); the next request uses it. */
export namespace SetApiKeyNotification {
  export const method = 'coderag/setOpenAiApiKey' as const;
  export const type = new NotificationType<SetApiKeyParams>(method);
}

export interface ExplainParams {
  /** A trace id from an item's `traceId`; omit for the last request that ran the pipeline. */
  traceId?: string;
}

/**
 * The engine's completion trace as it travels: CompletionTrace of src/engine/pipeline/trace.ts and the types it
 * reaches, generated into trace.generated.ts (`npm run gen:trace`) because this layer may not import the engine.
 */
export type CompletionTraceView = CompletionTrace;
export type StageTimingView = StageTiming;

/** The onnxruntime execution provider a local model runs on (`coderag.models.device`). */
export interface ModelDeviceStatus {
  model: string;
  /** The device asked for: auto, cpu, cuda, dml or coreml. */
  device: string;
  /** The provider it runs on. */
  provider: string;
  /** The explicit device that could not be used (the model runs on the CPU). */
  error?: string;
}

export interface ExplainResult {
  trace: CompletionTraceView;
  /** A readable view of the trace. */
  markdown: string;
  /** Time the server spent on the request: debounce wait, cache, pipeline. */
  server?: {
    debounceMs: number;
    handlerMs: number;
    overheadMs: number;
    cache: 'hit' | 'miss';
    checkpointMs?: number;
    promptMs?: number;
    /** Where each local model ran when the request was served. */
    models?: ModelDeviceStatus[];
  };
}

/** `coderag/explain`: the trace of a completion (chunks, candidates per path, rerank picks, prompt, timings). */
export namespace ExplainRequest {
  export const method = 'coderag/explain' as const;
  export const type = new ProtocolRequestType<ExplainParams, ExplainResult | null, void, void, void>(method);
}

export interface PullModelParams extends WorkDoneProgressParams {
  /** Default: the configured Ollama completion model. */
  model?: string;
}

export interface PullModelResult {
  ok: boolean;
  message?: string;
}

/** `coderag/pullModel`: `ollama pull` the completion model, with work-done progress. */
export namespace PullModelRequest {
  export const method = 'coderag/pullModel' as const;
  export const type = new ProtocolRequestType<PullModelParams, PullModelResult, void, void, void>(method);
}

/** Which GGUF file to download; each field defaults to its setting (`coderag.local.downloadUrl`, `coderag.local.downloadSha256`). */
export interface LocalModelSourceParams {
  url?: string;
  /** The file's SHA-256, 64 hex digits. */
  sha256?: string;
}

export interface LocalModelDownloadInfo {
  /** False: the source cannot be downloaded (`message` says why: a setting is empty or malformed). */
  ok: boolean;
  message?: string;
  host?: string;
  fileName?: string;
  /** The file's size when the server says (a HEAD request). */
  totalBytes?: number;
  /** The verified file, when it is downloaded already. */
  downloadedPath?: string;
}

/** `coderag/localModelDownloadInfo`: what a download would fetch (host, file name, size) for the consent question; writes nothing. */
export namespace LocalModelDownloadInfoRequest {
  export const method = 'coderag/localModelDownloadInfo' as const;
  export const type = new ProtocolRequestType<LocalModelSourceParams, LocalModelDownloadInfo, void, void, void>(method);
}

export interface DownloadLocalModelParams extends LocalModelSourceParams, WorkDoneProgressParams {}

export interface DownloadLocalModelResult {
  ok: boolean;
  /** The verified `.gguf` in the models folder. */
  path?: string;
  /** The request was cancelled: the partial file is kept and the next download resumes it. */
  cancelled?: boolean;
  message?: string;
}

/**
 * `coderag/downloadLocalModel`: downloads the GGUF file into the models folder once, with work-done
 * progress; it lands only when its SHA-256 matches. Cancelling keeps the partial file for a resume.
 */
export namespace DownloadLocalModelRequest {
  export const method = 'coderag/downloadLocalModel' as const;
  export const type = new ProtocolRequestType<DownloadLocalModelParams, DownloadLocalModelResult, void, void, void>(method);
}

// ---------------------------------------------------------------------------------------------
// Status

export type ModelState =
  | 'unknown'
  | 'ok'
  | 'unreachable'
  | 'closed'
  | 'timeout'
  | 'httpStatus'
  | 'rateLimited'
  | 'malformed'
  | 'modelMissing'
  | 'certificate'
  | 'failed'
  | 'error';

export interface ServerStats {
  requests: number;
  cacheHits: number;
  modelCalls: number;
  /** Most model calls seen in flight at once (the server allows one). */
  maxModelInFlight: number;
  /** Server time per request outside the model and the retrieval stages, over the last requests. */
  overheadMs?: { median: number; p95: number; samples: number };
  /** The server process's memory (on `coderag/getStatus`). */
  /**
   * external: memory of C++ objects bound to JS (ArrayBuffers, the parsers' WebAssembly memory); the rest of rss outside the JS heap is
   * native (model runtimes, the encoder's thread).
   */
  memory?: { rssMB: number; heapUsedMB: number; externalMB?: number; arrayBuffersMB?: number };
  /** Handler time of requests the typing-through cache answered. */
  cacheHitMs?: { median: number; p95: number; samples: number };
  /**
   * How late the server's event loop ran (a blocked loop delays every message) since the previous
   * `coderag/getStatus` (on `coderag/getStatus`; each one starts a new window).
   */
  eventLoopDelayMs?: { max: number; p99: number; mean: number; windowMs: number };
}

export interface ModelStatus {
  backend: string;
  model: string;
  endpoint: string;
  state: ModelState;
  /** What was found (the reason of a problem state, or a note such as the fallback in use). */
  message?: string;
  /** With a problem state: what the user can do about it (which server to start, which setting to change). */
  action?: string;
}

/** Indexing in progress: files parsed, then the dense path's items embedded (completions use the paths ready meanwhile). */
export interface IndexingProgress {
  folder: string;
  /** Files parsed of total while parsing; items embedded of total while embedding. */
  done: number;
  total: number;
  /** The whole folder's progress, 0-100: files and items to embed counted alike. */
  percent?: number;
  /** Set while the dense path embeds. */
  dense?: { done: number; total: number };
}

export interface StatusParams {
  /** The headline: what the status bar shows. */
  state: 'starting' | 'indexing' | 'ready' | 'modelProblem' | 'disabled' | 'untrusted';
  /** One line for people ("Indexing pyshop 120/300", "Ollama is not reachable at ..."). */
  message: string;
  indexing?: IndexingProgress;
  folders: FolderIndexSummary[];
  model: ModelStatus;
  reranker: { current: RerankerChoice; available: RerankerChoice[] };
  completionsEnabled: boolean;
  stats: ServerStats;
  /** Where each loaded local model runs. */
  models?: ModelDeviceStatus[];
  /**
   * The model server is reading a new place's repository context ahead of the next suggestions (a
   * warm-up, outside `coderag.model.timeoutMs`): the first suggestion at a new place comes when it ends.
   */
  warming?: boolean;
  /** Settings that were not used (out of range, wrong type, not in their list), each naming the value used instead. */
  settingsProblems?: string[];
}

/** `coderag/status` (server -> client): sent whenever the status changes (indexing progress, ready, model problems, reranker). */
export namespace StatusNotification {
  export const method = 'coderag/status' as const;
  export const type = new NotificationType<StatusParams>(method);
}

/** `coderag/getStatus`: the current status, on demand. */
export namespace GetStatusRequest {
  export const method = 'coderag/getStatus' as const;
  export const type = new RequestType0<StatusParams, void>(method);
}

export interface MemoryParams {
  /** Collect garbage first, where the server runs with `--expose-gc` (benchmarks); else ignored. */
  collectGarbage?: boolean;
}

export interface MemoryResult {
  rssMB: number;
  heapUsedMB: number;
  /** The JS heap the process holds (used plus free space V8 has not returned). */
  heapTotalMB: number;
  externalMB: number;
  arrayBuffersMB: number;
  /** Whether garbage was collected before measuring. */
  collected: boolean;
}

/** `coderag/memory`: the server process's memory, after a full collection when asked and possible (bench:server). */
export namespace MemoryRequest {
  export const method = 'coderag/memory' as const;
  export const type = new RequestType<MemoryParams, MemoryResult, void>(method);
}

// ---------------------------------------------------------------------------------------------
// Learning from what the user accepts (ProCC's bandit and the show gate)

export interface CompletionOutcomeParams {
  /** The trace of the suggestion (InlineCompletionItem.traceId). */
  traceId: string;
  outcome: 'accepted' | 'partial' | 'rejected';
  /** Characters of the suggestion that ended in the document. */
  acceptedChars: number;
  shownChars: number;
}

/**
 * `coderag/completionOutcome` (client -> server): what became of a shown suggestion. The server
 * rewards the similar-code perspective the bandit chose and steps the show gate (accepted 1, partly
 * accepted the share of characters, rejected 0), once per trace. Sent only while one of them learns:
 * `coderag.similar.mode` is `bandit` or `coderag.suggestions.show` is not `all`.
 */
export namespace CompletionOutcomeNotification {
  export const method = 'coderag/completionOutcome' as const;
  export const type = new NotificationType<CompletionOutcomeParams>(method);
}

export interface ResetLearningResult {
  /** Workspace folders whose learned state was reset. */
  folders: number;
}

/** `coderag/resetLearning`: forget what was learned from accepted suggestions in every workspace folder. */
export namespace ResetLearningRequest {
  export const method = 'coderag/resetLearning' as const;
  export const type = new RequestType0<ResetLearningResult, void>(method);
}

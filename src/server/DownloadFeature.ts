// The local model's download: the client asks what a download would fetch (for its consent
// question), then downloads the GGUF file into the models folder with work-done progress and
// cancellation. One download at a time; `onDownloaded` tells the model side a verified file landed.
import type { ClientCapabilities, Connection, ServerCapabilities, WorkDoneProgressReporter } from 'vscode-languageserver/node';
import {
  downloadedModelPath,
  downloadGguf,
  ggufDownloadInfo,
  ggufFileName,
  ggufSourceProblem,
  type GgufSource,
} from '../engine/models/ggufDownload';
import { errorMessage, isCancellationError } from '../engine/util/errors';
import { getLogger } from '../engine/util/logger';
import {
  DownloadLocalModelRequest,
  LocalModelDownloadInfoRequest,
  type DownloadLocalModelResult,
  type LocalModelDownloadInfo,
  type LocalModelSourceParams,
} from '../protocol/protocol';
import type { ServerConfig } from './config';
import type { Feature } from './feature';

const log = getLogger('download');

/** At most this often a progress report (a chunk arrives every few KB). */
const REPORT_EVERY_MS = 250;

export interface DownloadFeatureOptions {
  /** Where model files are kept (the extension's global storage). */
  modelsDir: () => string;
  /** A verified model file landed at `path` (not called when it was there already). */
  onDownloaded?: (path: string) => void;
  fetch?: typeof fetch;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}

/** Work-done progress that reports the bytes at most every REPORT_EVERY_MS, with the percentage when the size is known. */
function byteReporter(progress: WorkDoneProgressReporter | undefined): (loaded: number, total: number | undefined) => void {
  let last = 0;
  return (loaded, total) => {
    const now = Date.now();
    if (!progress || (now - last < REPORT_EVERY_MS && loaded !== total)) return;
    last = now;
    if (total) progress.report(Math.floor((100 * loaded) / total), `${megabytes(loaded)} of ${megabytes(total)}`);
    else progress.report(megabytes(loaded));
  };
}

export class DownloadFeature implements Feature {
  private config: ServerConfig | undefined;
  private running = false;
  /** Aborted at shutdown: a download in flight stops (its part is kept). */
  private readonly lifetime = new AbortController();

  constructor(private readonly opts: DownloadFeatureOptions) {}

  initialize(connection: Connection, _caps: ClientCapabilities, config: ServerConfig): Partial<ServerCapabilities> {
    this.config = config;
    connection.onRequest(LocalModelDownloadInfoRequest.type, async (params, token): Promise<LocalModelDownloadInfo> => {
      const source = this.sourceOf(params);
      const problem = ggufSourceProblem(source);
      if (problem) return { ok: false, message: problem };
      const controller = new AbortController();
      const sub = token.onCancellationRequested(() => controller.abort());
      try {
        const downloadedPath = await downloadedModelPath(this.opts.modelsDir(), source);
        const info = await ggufDownloadInfo(source, { fetch: this.opts.fetch }, controller.signal);
        return { ok: true, ...info, ...(downloadedPath ? { downloadedPath } : {}) };
      } catch (e) {
        return { ok: false, message: isCancellationError(e) ? 'cancelled' : errorMessage(e) };
      } finally {
        sub.dispose();
      }
    });
    connection.onRequest(DownloadLocalModelRequest.type, async (params, token): Promise<DownloadLocalModelResult> => {
      const source = this.sourceOf(params);
      const problem = ggufSourceProblem(source);
      if (problem) return { ok: false, message: problem };
      if (this.running) return { ok: false, message: 'a model download is already running' };
      this.running = true;
      const progress = params.workDoneToken !== undefined ? connection.window.attachWorkDoneProgress(params.workDoneToken) : undefined;
      const controller = new AbortController();
      const sub = token.onCancellationRequested(() => controller.abort());
      const onShutdown = (): void => controller.abort();
      this.lifetime.signal.addEventListener('abort', onShutdown, { once: true });
      try {
        const dir = this.opts.modelsDir();
        const fileName = ggufFileName(source.url);
        progress?.begin(`Downloading ${fileName}`, 0, undefined, true);
        log.info(`downloading ${new URL(source.url).host}/${fileName} into ${dir}`);
        const done = await downloadGguf(dir, source, { fetch: this.opts.fetch, onProgress: byteReporter(progress) }, controller.signal);
        if (!done.alreadyThere) this.opts.onDownloaded?.(done.path);
        return { ok: true, path: done.path };
      } catch (e) {
        if (isCancellationError(e))
          return { ok: false, cancelled: true, message: 'cancelled; the partial file is kept and the next download resumes it' };
        log.warn(errorMessage(e));
        return { ok: false, message: errorMessage(e) };
      } finally {
        this.running = false;
        progress?.done();
        sub.dispose();
        this.lifetime.signal.removeEventListener('abort', onShutdown);
      }
    });
    return {};
  }

  updateConfig(config: ServerConfig): void {
    this.config = config;
  }

  /** The request's URL and digest, each defaulting to its setting. */
  private sourceOf(params: LocalModelSourceParams | undefined): GgufSource {
    const local = this.config?.local;
    return { url: params?.url ?? local?.downloadUrl ?? '', sha256: params?.sha256 ?? local?.downloadSha256 ?? '' };
  }

  shutdown(): void {
    this.lifetime.abort();
  }
}

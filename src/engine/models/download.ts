// Downloads a Hugging Face model's files into a cache folder under the extension's storage,
// with progress, a stall timeout and cancellation; files land atomically (.part, then rename).

import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import { ModelError } from './errors';

const log = getLogger('models');

export interface DownloadProgress {
  model: string;
  file: string;
  loadedBytes: number;
  /** From content-length; undefined when the server does not say. */
  totalBytes?: number;
  done: boolean;
}

interface DownloadOptions {
  hubUrl: string;
  revision: string;
  /** Abort a file when no bytes arrive for this long. */
  stallTimeoutMs: number;
  onProgress?: (p: DownloadProgress) => void;
  fetch: typeof fetch;
}

export function isHubId(s: string): boolean {
  return /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(s) && !s.includes('..');
}

/** Ensures every file of `files` is present under `dest`, downloading the missing ones. */
export async function downloadModel(id: string, files: string[], dest: string, opts: DownloadOptions, signal?: AbortSignal): Promise<void> {
  for (const file of files) {
    const target = join(dest, file);
    const existing = await stat(target).catch(() => undefined);
    if (existing && existing.size > 0) continue;
    throwIfAborted(signal);
    await downloadFile(id, file, target, opts, signal);
  }
}

async function downloadFile(id: string, file: string, target: string, opts: DownloadOptions, signal?: AbortSignal): Promise<void> {
  const url = `${opts.hubUrl.replace(/\/$/, '')}/${id}/resolve/${encodeURIComponent(opts.revision)}/${file}`;
  const watch = stallWatch(opts.stallTimeoutMs, signal);
  const part = `${target}.part`;
  try {
    log.info(`downloading ${url}`);
    const res = await opts.fetch(url, { signal: watch.signal, redirect: 'follow' });
    if (!res.ok || !res.body) throw new Error(`HTTP ${res.status} ${res.statusText}`);
    const total = Number(res.headers.get('content-length')) || undefined;
    await mkdir(dirname(target), { recursive: true });
    const out = createWriteStream(part);
    let loaded = 0;
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        watch.bump();
        loaded += chunk.length;
        if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', () => r()));
        opts.onProgress?.({ model: id, file, loadedBytes: loaded, totalBytes: total, done: false });
      }
    } finally {
      await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
    }
    if (total !== undefined && loaded !== total) throw new Error(`got ${loaded} of ${total} bytes`);
    await rename(part, target);
    opts.onProgress?.({ model: id, file, loadedBytes: loaded, totalBytes: total, done: true });
  } catch (e) {
    await rm(part, { force: true }).catch(() => undefined);
    throwIfAborted(signal);
    const why = watch.stalled() ? `no data for ${opts.stallTimeoutMs} ms` : String((e as { cause?: unknown }).cause ?? e);
    throw new ModelError(
      'download',
      `Could not download ${file} of Hugging Face model "${id}" from ${url} (${why}). Check the network, or point the ` +
        `setting at a local model folder.`,
      id,
      { cause: e },
    );
  } finally {
    watch.stop();
  }
}

/** A download's abort signal: it fires when `signal` does or when no bytes arrived for `stallTimeoutMs` (`bump` on each chunk). */
export interface StallWatch {
  signal: AbortSignal;
  bump(): void;
  /** The download was aborted because no bytes arrived (not by the caller). */
  stalled(): boolean;
  stop(): void;
}

export function stallWatch(stallTimeoutMs: number, signal?: AbortSignal): StallWatch {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  if (signal?.aborted) controller.abort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  let stalled = false;
  const arm = (): NodeJS.Timeout => setTimeout(() => ((stalled = true), controller.abort()), stallTimeoutMs);
  let timer = arm();
  return {
    signal: controller.signal,
    bump: () => {
      clearTimeout(timer);
      timer = arm();
    },
    stalled: () => stalled,
    stop: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    },
  };
}

// One large file downloaded once and verified: the bytes go to `<target>.part`, resumed with an HTTP
// Range request when a part is there, hashed (SHA-256) as they arrive, and the part becomes `target`
// by an atomic rename only when its digest is the one given. An interrupted or cancelled download
// leaves only the part; a wrong digest deletes it.

import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { isCancellationError, throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import { stallWatch, type StallWatch } from './download';
import { ModelError } from './errors';

const log = getLogger('models');

export interface VerifiedDownloadOptions {
  /** The file's SHA-256, 64 hex digits. */
  sha256: string;
  /** A file larger than this is refused (by its announced size, else as its bytes arrive). */
  maxBytes: number;
  /** Abort when no bytes arrive for this long. */
  stallTimeoutMs: number;
  fetch: typeof fetch;
  /** Bytes of the file on disk so far (a resumed part included) and the file's size when the server says. */
  onProgress?: (loadedBytes: number, totalBytes: number | undefined) => void;
  /** After the digest matched, just before the part is renamed to the target. */
  beforeRename?: () => Promise<void>;
}

export interface VerifiedDownload {
  path: string;
  bytes: number;
  /** Bytes of an earlier part that this download kept (0: from the start). */
  resumedFrom: number;
}

/** The server's bytes do not continue the part: the part is deleted and the download starts from byte 0. */
class StartOver extends Error {}

/** The URL a download may use: http or https, no user name or password in it. Throws a ModelError that says why not. */
export function checkDownloadUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not echoed: the text may hold a token.
    throw new ModelError('download', 'The download URL is not a valid URL.');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new ModelError('download', `Only http and https downloads are allowed (got ${parsed.protocol}).`);
  if (parsed.username || parsed.password) throw new ModelError('download', 'The download URL must not hold a user name or password.');
  return parsed;
}

/** What logs and messages say of a URL: its host and file name (a query string may carry a token). */
export function downloadLabel(url: URL): string {
  const last = url.pathname.split('/').pop() ?? '';
  let file = last;
  try {
    file = decodeURIComponent(last);
  } catch {
    // A malformed escape: the name as it is written.
  }
  file ||= '(no file name)';
  return `${url.host}/${file}`;
}

/** Downloads `url` to `target` (see the header comment); resolves once `target` holds the verified file. */
export async function downloadVerified(
  url: string,
  target: string,
  opts: VerifiedDownloadOptions,
  signal?: AbortSignal,
): Promise<VerifiedDownload> {
  const parsed = checkDownloadUrl(url);
  const label = downloadLabel(parsed);
  const want = opts.sha256.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(want)) throw new ModelError('download', `The SHA-256 of ${label} must be 64 hex digits.`);
  const part = `${target}.part`;
  await mkdir(dirname(target), { recursive: true });
  // A part that does not continue into the file (another file's, a changed file) costs one fresh start.
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(signal);
    const have = attempt === 0 ? await hashPart(part, opts.maxBytes, signal) : { bytes: 0, hash: createHash('sha256') };
    if (attempt > 0) await rm(part, { force: true });
    try {
      const { bytes, resumedFrom } = await fetchInto(parsed, label, part, have, opts, signal);
      await opts.beforeRename?.();
      await rename(part, target);
      log.info(`downloaded ${label} (${bytes} bytes${resumedFrom > 0 ? `, resumed at ${resumedFrom}` : ''}), SHA-256 verified`);
      return { path: target, bytes, resumedFrom };
    } catch (e) {
      if (!(e instanceof StartOver) || attempt > 0) throw e;
      log.warn(`${label}: ${e.message}; starting over`);
    }
  }
}

/** The digest so far of the part already on disk (none: 0 bytes). A part over the limit is not resumed. */
async function hashPart(part: string, maxBytes: number, signal?: AbortSignal): Promise<{ bytes: number; hash: Hash }> {
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of createReadStream(part, { signal }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { bytes: 0, hash };
    throw e;
  }
  if (bytes > maxBytes) {
    await rm(part, { force: true });
    return { bytes: 0, hash: createHash('sha256') };
  }
  return { bytes, hash };
}

/** `Content-Range: bytes start-end/total` (or `bytes *\/total` of a 416). */
function contentRange(header: string | null): { start?: number; total?: number } | undefined {
  const m = /^bytes (?:(\d+)-\d+|\*)\/(\d+|\*)$/.exec(header?.trim() ?? '');
  if (!m) return undefined;
  return { start: m[1] !== undefined ? Number(m[1]) : undefined, total: m[2] !== '*' ? Number(m[2]) : undefined };
}

function gib(bytes: number): string {
  return `${(bytes / 2 ** 30).toFixed(1)} GiB`;
}

/** One request, its bytes appended to (206) or written over (200) the part; resolves with the file's size once its digest matched. */
async function fetchInto(
  url: URL,
  label: string,
  part: string,
  have: { bytes: number; hash: Hash },
  opts: VerifiedDownloadOptions,
  signal?: AbortSignal,
): Promise<Omit<VerifiedDownload, 'path'>> {
  const watch = stallWatch(opts.stallTimeoutMs, signal);
  let loaded = have.bytes;
  let total: number | undefined;
  try {
    const headers: Record<string, string> = have.bytes > 0 ? { range: `bytes=${have.bytes}-` } : {};
    const res = await opts.fetch(url, { headers, signal: watch.signal, redirect: 'follow' });
    let hash = have.hash;
    let append = false;
    if (res.status === 416 && have.bytes > 0) {
      // Nothing past the part: it is the whole file when the server says the file is that long.
      await res.body?.cancel();
      if (contentRange(res.headers.get('content-range'))?.total !== have.bytes)
        throw new StartOver('the server has no bytes past the part');
      total = have.bytes;
    } else if (res.status === 206 && have.bytes > 0) {
      const range = contentRange(res.headers.get('content-range'));
      if (range?.start !== have.bytes) {
        await res.body?.cancel();
        throw new StartOver(`the server answered the range from byte ${range?.start ?? '?'}, not ${have.bytes}`);
      }
      total = range.total;
      append = true;
    } else if (res.ok && res.status !== 206) {
      if (have.bytes > 0)
        log.info(`${label}: the server sent the whole file (HTTP ${res.status}), not the rest; the part is written again`);
      hash = createHash('sha256');
      loaded = 0;
      total = Number(res.headers.get('content-length')) || undefined;
    } else {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status} ${res.statusText}`);
    }
    if (total !== undefined && total > opts.maxBytes) {
      await res.body?.cancel();
      throw new ModelError('download', `${label} is ${gib(total)}, over the ${gib(opts.maxBytes)} a download may be; nothing was written.`);
    }
    opts.onProgress?.(loaded, total);
    if (res.status !== 416) loaded = await writeBody(res, label, part, append, loaded, hash, total, watch, opts);
    if (total !== undefined && loaded !== total) throw new Error(`the server sent ${loaded} of ${total} bytes`);
    const resumed = append || res.status === 416;
    const got = hash.digest('hex');
    if (got !== opts.sha256.toLowerCase()) {
      await rm(part, { force: true });
      if (resumed) throw new StartOver(`the resumed file's SHA-256 ${got} is not the expected one`);
      throw new ModelError(
        'download',
        `${label} is not the file expected: SHA-256 mismatch (expected ${opts.sha256.toLowerCase()}, got ${got}); the downloaded ` +
          `bytes were deleted.`,
      );
    }
    return { bytes: loaded, resumedFrom: resumed ? have.bytes : 0 };
  } catch (e) {
    throwIfAborted(signal);
    if (e instanceof StartOver || e instanceof ModelError) throw e;
    const why = watch.stalled()
      ? `no data for ${opts.stallTimeoutMs} ms`
      : isCancellationError(e)
        ? 'aborted'
        : String((e as { cause?: unknown }).cause ?? (e as Error).message ?? e);
    throw new ModelError(
      'download',
      `Could not download ${label} (${why}) after ${loaded}${total !== undefined ? ` of ${total}` : ''} bytes; the partial file is ` +
        `kept and the next download resumes it.`,
      undefined,
      { cause: e },
    );
  } finally {
    watch.stop();
  }
}

/** Streams the body into the part, hashing each chunk; resolves with the part's length. */
async function writeBody(
  res: Response,
  label: string,
  part: string,
  append: boolean,
  loaded: number,
  hash: Hash,
  total: number | undefined,
  watch: StallWatch,
  opts: VerifiedDownloadOptions,
): Promise<number> {
  if (!res.body) throw new Error('the answer has no body');
  const limit = total ?? opts.maxBytes;
  let over = false;
  const out = await open(part, append ? 'a' : 'w');
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      watch.bump();
      if (loaded + chunk.length > limit) {
        over = true;
        break; // leaving the loop cancels the body
      }
      hash.update(chunk);
      await out.write(chunk);
      loaded += chunk.length;
      opts.onProgress?.(loaded, total);
    }
    await out.sync();
  } finally {
    await out.close();
  }
  if (over) {
    await rm(part, { force: true });
    throw new ModelError('download', `${label}: the server sent more than ${limit} bytes; the downloaded bytes were deleted.`);
  }
  return loaded;
}

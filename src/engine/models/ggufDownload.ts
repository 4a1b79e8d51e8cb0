// The local provider's model file: one GGUF from the URL in the settings, downloaded once into the
// models folder (the extension's global storage) and verified against the SHA-256 given beside it.
// `<name>.gguf` appears only after its digest matched; `<name>.gguf.sha256` beside it (sha256sum's
// format) records which digest, so the provider's finder never returns a part or another version.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { errorMessage, throwIfAborted } from '../util/errors';
import { getLogger } from '../util/logger';
import { stallWatch } from './download';
import { checkDownloadUrl, downloadLabel, downloadVerified } from './verifiedDownload';

const log = getLogger('models');

/** No model file is larger than this (a 7B model at 16 bits is about 14 GiB). */
export const MAX_GGUF_BYTES = 16 * 2 ** 30;
const STALL_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 15_000;

/** Where the file comes from and its SHA-256 (the `coderag.local.downloadUrl` and `coderag.local.downloadSha256` settings). */
export interface GgufSource {
  url: string;
  sha256: string;
}

/** A verified model in the models folder. */
export interface DownloadedModel {
  path: string;
  sha256: string;
  bytes: number;
}

export interface GgufDownloadOptions {
  fetch?: typeof fetch;
  stallTimeoutMs?: number;
  maxBytes?: number;
  onProgress?: (loadedBytes: number, totalBytes: number | undefined) => void;
}

/** What a download will fetch, for the consent question: the host, the file name and its size when the server says. */
export interface GgufDownloadInfo {
  host: string;
  fileName: string;
  totalBytes?: number;
}

/** Why `source` cannot be downloaded, in words for the user; undefined when it can. */
export function ggufSourceProblem(source: GgufSource): string | undefined {
  if (!source.url.trim() || !source.sha256.trim())
    return 'set both coderag.local.downloadUrl (the GGUF file) and coderag.local.downloadSha256 (its SHA-256)';
  try {
    checkDownloadUrl(source.url.trim());
  } catch (e) {
    return `coderag.local.downloadUrl: ${errorMessage(e)}`;
  }
  if (!/^[0-9a-fA-F]{64}$/.test(source.sha256.trim())) return 'coderag.local.downloadSha256 must be 64 hex digits';
  return undefined;
}

/** The file a URL downloads to: its last path segment, in safe characters, ending in `.gguf`. */
export function ggufFileName(url: string): string {
  let last = '';
  try {
    last = decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  } catch {
    last = '';
  }
  const stem = last
    .replace(/\.gguf$/i, '')
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 120);
  return `${stem || 'model'}.gguf`;
}

function digestFile(path: string): string {
  return `${path}.sha256`;
}

/** The digest a verified file's record names, or undefined when there is none. */
async function recordedDigest(path: string): Promise<string | undefined> {
  const text = await readFile(digestFile(path), 'utf8').catch(() => undefined);
  const hex = text?.trim().split(/\s+/)[0]?.toLowerCase();
  return hex && /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

async function fileBytes(path: string): Promise<number | undefined> {
  const s = await stat(path).catch(() => undefined);
  return s?.isFile() && s.size > 0 ? s.size : undefined;
}

/**
 * The verified model file `source` downloaded to in `dir`, or undefined when it is not there (not
 * downloaded, only a part, or a file of another digest). What the local provider opens.
 */
export async function downloadedModelPath(dir: string, source: GgufSource): Promise<string | undefined> {
  const path = join(dir, ggufFileName(source.url));
  const recorded = await recordedDigest(path);
  if (recorded !== source.sha256.trim().toLowerCase()) return undefined;
  return (await fileBytes(path)) !== undefined ? path : undefined;
}

/** Every verified model file in `dir` (parts and files without a digest record left out), by name. */
export async function downloadedModels(dir: string): Promise<DownloadedModel[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const found: DownloadedModel[] = [];
  for (const name of names.filter((n) => n.endsWith('.gguf')).sort()) {
    const path = join(dir, name);
    const [sha256, bytes] = await Promise.all([recordedDigest(path), fileBytes(path)]);
    if (sha256 !== undefined && bytes !== undefined) found.push({ path, sha256, bytes });
  }
  return found;
}

async function sha256Of(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { signal }) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}

/** Writes the digest record atomically (a reader sees the old record or the new one). */
async function recordDigest(path: string, sha256: string): Promise<void> {
  const tmp = `${digestFile(path)}.tmp`;
  await writeFile(tmp, `${sha256}  ${basename(path)}\n`);
  await rename(tmp, digestFile(path));
}

/**
 * Downloads `source` into `dir` unless its verified file is there already; resolves with the file's
 * path. Resumes a part left by an earlier try. Throws a ModelError saying why (a wrong digest
 * deletes the bytes; an interrupted download keeps its part), or a cancellation when `signal` aborts.
 */
export async function downloadGguf(
  dir: string,
  source: GgufSource,
  opts: GgufDownloadOptions = {},
  signal?: AbortSignal,
): Promise<{ path: string; bytes: number; resumedFrom: number; alreadyThere: boolean }> {
  const url = source.url.trim();
  const sha256 = source.sha256.trim().toLowerCase();
  const found = await downloadedModelPath(dir, { url, sha256 });
  if (found) return { path: found, bytes: (await fileBytes(found)) ?? 0, resumedFrom: 0, alreadyThere: true };
  const target = join(dir, ggufFileName(url));
  // Renamed into place but stopped before its record was written: its digest decides.
  if (
    (await recordedDigest(target)) === undefined &&
    (await fileBytes(target)) !== undefined &&
    (await sha256Of(target, signal)) === sha256
  ) {
    await recordDigest(target, sha256);
    return { path: target, bytes: (await fileBytes(target)) ?? 0, resumedFrom: 0, alreadyThere: true };
  }
  const done = await downloadVerified(
    url,
    target,
    {
      sha256,
      maxBytes: opts.maxBytes ?? MAX_GGUF_BYTES,
      stallTimeoutMs: opts.stallTimeoutMs ?? STALL_TIMEOUT_MS,
      fetch: opts.fetch ?? fetch,
      onProgress: opts.onProgress,
      // The old record goes first, so no moment pairs the new file with another digest.
      beforeRename: () => rm(digestFile(target), { force: true }),
    },
    signal,
  );
  await recordDigest(target, sha256);
  return { ...done, alreadyThere: false };
}

/** The host, file name and (from a HEAD request, when the server answers one) size of what `source` downloads. */
export async function ggufDownloadInfo(
  source: GgufSource,
  opts: { fetch?: typeof fetch } = {},
  signal?: AbortSignal,
): Promise<GgufDownloadInfo> {
  const url = checkDownloadUrl(source.url.trim());
  const info: GgufDownloadInfo = { host: url.host, fileName: ggufFileName(url.href) };
  const watch = stallWatch(PROBE_TIMEOUT_MS, signal);
  try {
    const res = await (opts.fetch ?? fetch)(url, { method: 'HEAD', redirect: 'follow', signal: watch.signal });
    const size = Number(res.headers.get('content-length'));
    if (res.ok && size > 0) info.totalBytes = size;
  } catch (e) {
    throwIfAborted(signal);
    // The consent question goes without the size; the download itself says what failed.
    log.info(`no size for ${downloadLabel(url)}: ${errorMessage(e)}`);
  } finally {
    watch.stop();
  }
  return info;
}

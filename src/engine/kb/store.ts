// On-disk knowledge-base index per repository: versioned, checksummed, written atomically.
// A corrupt, truncated or foreign-version file is reported and never trusted.
import { promises as fs } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import type { FileExtraction } from './types';

/** Bump whenever the extraction output or this layout changes. */
export const INDEX_FORMAT_VERSION = 1;
const MAGIC = 'coderag-kb-index';

export interface StoredFile {
  hash: string;
  size: number;
  lines: number;
  extraction: FileExtraction;
}

export interface StoredIndex {
  repoRoot: string;
  savedAt: string;
  files: Record<string, StoredFile>;
}

export type LoadResult =
  | { status: 'ok'; index: StoredIndex }
  | { status: 'missing' }
  | { status: 'invalid'; reason: string };

interface Header {
  magic: string;
  version: number;
  sha256: string;
  bytes: number;
}

/** Folder for one repository's index under the cache root: `<name>-<hash of its absolute path>`. */
export function indexFolderFor(cacheRoot: string, repoRoot: string): string {
  const abs = resolve(repoRoot);
  const id = createHash('sha1').update(abs).digest('hex').slice(0, 12);
  const name = basename(abs).replace(/[^A-Za-z0-9._-]/g, '_') || 'root';
  return join(cacheRoot, `${name}-${id}`);
}

export function indexFilePath(indexFolder: string): string {
  return join(indexFolder, 'kb.index');
}

/** Write atomically: a temp file in the same folder, fsync, then rename over the old one. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await fs.mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  const handle = await fs.open(tmp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, path);
  } catch (e) {
    await fs.rm(tmp, { force: true });
    throw e;
  }
}

export async function saveIndex(indexFolder: string, index: StoredIndex): Promise<void> {
  const payload = Buffer.from(JSON.stringify(index), 'utf8');
  const header: Header = { magic: MAGIC, version: INDEX_FORMAT_VERSION, sha256: createHash('sha256').update(payload).digest('hex'), bytes: payload.length };
  await writeFileAtomic(indexFilePath(indexFolder), Buffer.concat([Buffer.from(JSON.stringify(header) + '\n', 'utf8'), payload]));
}

export async function loadIndex(indexFolder: string): Promise<LoadResult> {
  let raw: Buffer;
  try {
    raw = await fs.readFile(indexFilePath(indexFolder));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return { status: 'invalid', reason: `unreadable: ${(e as Error).message}` };
  }
  const newline = raw.indexOf(0x0a);
  if (newline < 0) return { status: 'invalid', reason: 'truncated (no header)' };
  let header: Header;
  try {
    header = JSON.parse(raw.subarray(0, newline).toString('utf8')) as Header;
  } catch {
    return { status: 'invalid', reason: 'corrupt header' };
  }
  if (header.magic !== MAGIC) return { status: 'invalid', reason: 'not a CodeRAG index' };
  if (header.version !== INDEX_FORMAT_VERSION) return { status: 'invalid', reason: `index format version ${header.version}, expected ${INDEX_FORMAT_VERSION}` };
  const payload = raw.subarray(newline + 1);
  if (payload.length !== header.bytes) return { status: 'invalid', reason: `truncated (${payload.length} of ${header.bytes} bytes)` };
  if (createHash('sha256').update(payload).digest('hex') !== header.sha256) return { status: 'invalid', reason: 'checksum mismatch (corrupt contents)' };
  try {
    const index = JSON.parse(payload.toString('utf8')) as StoredIndex;
    if (typeof index !== 'object' || index === null || typeof index.files !== 'object') return { status: 'invalid', reason: 'malformed contents' };
    return { status: 'ok', index };
  } catch {
    return { status: 'invalid', reason: 'malformed contents' };
  }
}

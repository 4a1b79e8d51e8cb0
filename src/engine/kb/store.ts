// On-disk knowledge-base index per repository: versioned, checksummed, written atomically.
// A corrupt, truncated or foreign-version file is reported and never trusted.
import { createHash } from 'node:crypto';
import { basename, join, resolve } from 'node:path';
import { payloadProblem, readFramedFile, writeFramedFile } from '../util/framedFile';

export { writeFileAtomic } from '../util/framedFile';
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

export async function saveIndex(indexFolder: string, index: StoredIndex): Promise<void> {
  await writeFramedFile(indexFilePath(indexFolder), { magic: MAGIC, version: INDEX_FORMAT_VERSION }, Buffer.from(JSON.stringify(index), 'utf8'));
}

export async function loadIndex(indexFolder: string): Promise<LoadResult> {
  const read = await readFramedFile<Header>(indexFilePath(indexFolder));
  if (read.status !== 'ok') return read;
  const { header, payload } = read;
  if (header.magic !== MAGIC) return { status: 'invalid', reason: 'not a CodeRAG index' };
  if (header.version !== INDEX_FORMAT_VERSION) return { status: 'invalid', reason: `index format version ${header.version}, expected ${INDEX_FORMAT_VERSION}` };
  const problem = payloadProblem(header, payload);
  if (problem) return { status: 'invalid', reason: problem };
  try {
    const index = JSON.parse(payload.toString('utf8')) as StoredIndex;
    if (typeof index !== 'object' || index === null || typeof index.files !== 'object') return { status: 'invalid', reason: 'malformed contents' };
    return { status: 'ok', index };
  } catch {
    return { status: 'invalid', reason: 'malformed contents' };
  }
}

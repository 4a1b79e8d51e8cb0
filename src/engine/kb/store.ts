// On-disk knowledge-base index per repository: versioned, checksummed, written atomically.
// A corrupt, truncated or foreign-version file is reported and never trusted.
import { createHash } from 'node:crypto';
import { eventLoopYielder } from '../util/yielder';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { payloadProblem, readFramedFile, sweepStaleTemps, writeFramedFile } from '../util/framedFile';
import { getLogger } from '../util/logger';

export { writeFileAtomic } from '../util/framedFile';
import type { FileExtraction } from './types';
import { ITEM_KINDS } from './types';

/** Bump whenever the extraction output or this layout changes. */
export const INDEX_FORMAT_VERSION = 2;
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

type LoadResult = { status: 'ok'; index: StoredIndex } | { status: 'missing' } | { status: 'invalid'; reason: string };

interface Header {
  magic: string;
  version: number;
}

/**
 * The platform's cache folder for CodeRAG: CODERAG_CACHE_DIR when set, else %LOCALAPPDATA% on
 * Windows, ~/Library/Caches on macOS, $XDG_CACHE_HOME or ~/.cache elsewhere. An empty or relative
 * XDG_CACHE_HOME counts as unset, as the XDG Base Directory spec says (it would otherwise put the
 * index in a `coderag` folder inside whatever folder the process runs in).
 */
export function platformCacheRoot(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string {
  if (env.CODERAG_CACHE_DIR) return resolve(env.CODERAG_CACHE_DIR);
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'coderag', 'Cache');
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'coderag');
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(home, '.cache'), 'coderag');
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

/**
 * Written file by file, handing the event loop back every ~25 ms: one JSON.stringify of the JDK's
 * java.base index (90 MB), its bytes and checksum held the server for about 570 ms. The bytes are
 * JSON of the StoredIndex, as one JSON.stringify would write them (loadIndex reads either).
 */
export async function saveIndex(indexFolder: string, index: StoredIndex): Promise<void> {
  const header = { magic: MAGIC, version: INDEX_FORMAT_VERSION };
  // Not a map of files (a caller's or a test's malformed index): written as it is.
  if (typeof index.files !== 'object' || index.files === null || Array.isArray(index.files))
    return writeFramedFile(indexFilePath(indexFolder), header, Buffer.from(JSON.stringify(index), 'utf8'));
  // The parts stay strings (JS heap) and are written into one buffer: thousands of mid-sized
  // buffers freed at once left the allocator's heap holding about 40 MB after the save.
  const parts: string[] = [`{"repoRoot":${JSON.stringify(index.repoRoot)},"savedAt":${JSON.stringify(index.savedAt)},"files":{`];
  const pause = eventLoopYielder();
  for (const [path, file] of Object.entries(index.files)) {
    await pause();
    parts.push(`${parts.length > 1 ? ',' : ''}${JSON.stringify(path)}:${JSON.stringify(file)}`);
  }
  parts.push('}}');
  let total = 0;
  for (const part of parts) {
    await pause();
    total += Buffer.byteLength(part, 'utf8');
  }
  const payload = Buffer.allocUnsafe(total);
  const checksum = createHash('sha256');
  let at = 0;
  for (const part of parts) {
    await pause();
    const n = payload.write(part, at, 'utf8');
    checksum.update(payload.subarray(at, at + n));
    at += n;
  }
  await writeFramedFile(indexFilePath(indexFolder), header, payload, checksum.digest('hex'));
}

const log = getLogger('kb');

/** The saved index, after the temp files of interrupted saves in its folder (kb.index, dense vectors) are swept. */
export async function loadIndex(indexFolder: string): Promise<LoadResult> {
  const swept = await sweepStaleTemps(indexFolder);
  if (swept.length > 0) log.info(`removed ${swept.length} temp file(s) of interrupted saves in ${indexFolder}: ${swept.join(', ')}`);
  const read = await readFramedFile<Header>(indexFilePath(indexFolder));
  if (read.status !== 'ok') return read;
  const { header, payload } = read;
  if (header.magic !== MAGIC) return { status: 'invalid', reason: 'not a CodeRAG index' };
  if (header.version !== INDEX_FORMAT_VERSION)
    return { status: 'invalid', reason: `index format version ${header.version}, expected ${INDEX_FORMAT_VERSION}` };
  const problem = payloadProblem(header, payload);
  if (problem) return { status: 'invalid', reason: problem };
  let index: unknown;
  try {
    index = JSON.parse(payload.toString('utf8'));
  } catch {
    return { status: 'invalid', reason: 'malformed contents' };
  }
  // A valid checksum says the bytes are what was written, not that their shape is what this code
  // reads (another version's writer, a hand edit): every field read later is checked here.
  const shape = indexShapeProblem(index);
  if (shape) return { status: 'invalid', reason: `malformed contents: ${shape}` };
  return { status: 'ok', index: index as StoredIndex };
}

type Check = (v: unknown) => boolean;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString: Check = (v) => typeof v === 'string';
const isBoolean: Check = (v) => typeof v === 'boolean';
const isCount: Check = (v) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const oneOf =
  (...values: readonly string[]): Check =>
  (v) =>
    typeof v === 'string' && values.includes(v);
const optional =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
const isRange: Check = (v) => isObject(v) && isCount(v.startLine) && isCount(v.endLine);
const isLang = oneOf('python', 'java');

/** The first field of `value` that is missing or of the wrong type, as `where.field`; undefined when all are right. */
function fieldsProblem(value: unknown, where: string, fields: Record<string, Check>): string | undefined {
  if (!isObject(value)) return `${where} is not an object`;
  for (const [name, check] of Object.entries(fields)) if (!check(value[name])) return `${where}.${name} is missing or of the wrong type`;
  return undefined;
}

function listProblem(value: unknown, where: string, fields: Record<string, Check>): string | undefined {
  if (!Array.isArray(value)) return `${where} is not a list`;
  for (let i = 0; i < value.length; i++) {
    const problem = fieldsProblem(value[i], `${where}[${i}]`, fields);
    if (problem) return problem;
  }
  return undefined;
}

const ITEM_FIELDS: Record<string, Check> = {
  id: isString,
  kind: oneOf(...ITEM_KINDS),
  lang: isLang,
  path: isString,
  name: isString,
  qualifiedName: isString,
  signature: isString,
  docstring: isString,
  range: isRange,
  className: optional(isString),
  text: isString,
};

const CLASS_FIELDS: Record<string, Check> = {
  name: isString,
  qualifiedName: isString,
  lang: isLang,
  path: isString,
  kind: oneOf('class', 'interface', 'enum', 'record'),
  header: isString,
  bases: (v) => Array.isArray(v) && v.every(isString),
  docstring: isString,
  range: isRange,
};

const IMPORT_FIELDS: Record<string, Check> = {
  module: isString,
  name: optional(isString),
  alias: optional(isString),
  isStatic: optional(isBoolean),
  wildcard: optional(isBoolean),
  line: isCount,
};

/** Why a parsed index does not have the shape of a StoredIndex (undefined when it does). */
function indexShapeProblem(index: unknown): string | undefined {
  if (!isObject(index)) return 'not an object';
  if (!isObject(index.files)) return 'files is not an object';
  for (const [path, file] of Object.entries(index.files)) {
    const where = `files[${JSON.stringify(path)}]`;
    const problem =
      fieldsProblem(file, where, { hash: isString, size: isCount, lines: isCount, extraction: isObject }) ??
      fieldsProblem((file as StoredFile).extraction, `${where}.extraction`, {
        path: (v) => v === path,
        lang: isLang,
        items: Array.isArray,
        classes: Array.isArray,
        imports: Array.isArray,
        packageName: optional(isString),
        hasSyntaxErrors: isBoolean,
      }) ??
      listProblem((file as StoredFile).extraction.items, `${where}.extraction.items`, ITEM_FIELDS) ??
      listProblem((file as StoredFile).extraction.classes, `${where}.extraction.classes`, CLASS_FIELDS) ??
      listProblem((file as StoredFile).extraction.imports, `${where}.extraction.imports`, IMPORT_FIELDS);
    if (problem) return problem;
  }
  return undefined;
}

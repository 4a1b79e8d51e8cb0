// Workspace scan: which files enter the knowledge base, and why the others do not.
// Respects .gitignore files (nested ones too), caps file size, skips secrets, binaries,
// non-UTF-8 text and symlink loops. Nothing here parses.
import { promises as fs, readdirSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { Lang } from './types';
import { langOfPath } from './parsers';
import { throwIfAborted } from '../util/errors';

export type SkipReason = 'tooLarge' | 'binary' | 'notUtf8' | 'secret' | 'symlinkLoop' | 'unreadable';

export interface SkippedFile {
  path: string;
  reason: SkipReason;
  detail?: string;
}

export interface SourceFile {
  /** Repo-relative, forward slashes. */
  path: string;
  absPath: string;
  lang: Lang;
  size: number;
}

export interface ScanOptions {
  /** Files larger than this are skipped (default 1 MiB). */
  maxFileBytes?: number;
  /** Extra gitignore-style patterns to exclude (the user's excluded globs). */
  exclude?: readonly string[];
}

export interface ScanResult {
  files: SourceFile[];
  skipped: SkippedFile[];
}

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;

/** Folders never worth indexing, whatever .gitignore says. */
const ALWAYS_EXCLUDED = ['.git/', '.hg/', '.svn/', 'node_modules/', '__pycache__/', '.venv/', '.tox/', '.mypy_cache/'];

const SECRET_PATTERNS: RegExp[] = [/^\.env(\..*)?$/i, /\.pem$/i, /\.key$/i, /^id_rsa/i, /\.p12$/i, /credentials/i, /\.pfx$/i, /^id_(dsa|ecdsa|ed25519)/i];

/** Secret-bearing files never enter the knowledge base, whatever their extension. */
export function isSecretFile(fileName: string): boolean {
  return SECRET_PATTERNS.some((re) => re.test(fileName));
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

interface IgnoreLayer {
  /** Repo-relative folder the .gitignore lives in ('' for the root). */
  base: string;
  matcher: Ignore;
}

function ignoredBy(layers: readonly IgnoreLayer[], relPath: string, isDir: boolean): boolean {
  for (const layer of layers) {
    const local = layer.base === '' ? relPath : relPath.slice(layer.base.length + 1);
    if (local === '' || local.startsWith('..')) continue;
    if (layer.matcher.ignores(isDir ? `${local}/` : local)) return true;
  }
  return false;
}

/** List the Python and Java files of a repository that may enter the knowledge base. */
export async function scanRepository(repoRoot: string, options: ScanOptions = {}, signal?: AbortSignal): Promise<ScanResult> {
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  const files: SourceFile[] = [];
  const skipped: SkippedFile[] = [];
  const rootLayer: IgnoreLayer = { base: '', matcher: ignore().add(ALWAYS_EXCLUDED).add([...(options.exclude ?? [])]) };
  const visitedDirs = new Set<string>();

  // Synchronous file-system calls are much faster than a thread-pool hop per entry;
  // the walk yields to the event loop every few folders so a server stays responsive.
  let foldersSinceYield = 0;
  const walk = async (absDir: string, layers: IgnoreLayer[]): Promise<void> => {
    throwIfAborted(signal);
    if (++foldersSinceYield >= 20) {
      foldersSinceYield = 0;
      await yieldToEventLoop();
    }
    let real: string;
    try {
      real = realpathSync(absDir);
    } catch (e) {
      skipped.push({ path: toPosix(relative(repoRoot, absDir)) || '.', reason: 'unreadable', detail: (e as Error).message });
      return;
    }
    const relDir = toPosix(relative(repoRoot, absDir));
    if (visitedDirs.has(real)) {
      skipped.push({ path: relDir, reason: 'symlinkLoop', detail: `already visited as ${real}` });
      return;
    }
    visitedDirs.add(real);
    let entries: Dirent[];
    try {
      entries = readdirSync(absDir, { withFileTypes: true });
    } catch (e) {
      skipped.push({ path: relDir || '.', reason: 'unreadable', detail: (e as Error).message });
      return;
    }
    let here = layers;
    if (entries.some((e) => e.name === '.gitignore' && (e.isFile() || e.isSymbolicLink()))) {
      try {
        const text = readFileSync(join(absDir, '.gitignore'), 'utf8');
        here = [...layers, { base: relDir, matcher: ignore().add(text) }];
      } catch {
        // An unreadable .gitignore ignores nothing.
      }
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const abs = join(absDir, entry.name);
      const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        try {
          const st = statSync(abs);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch (e) {
          // A dangling link, or a link cycle the OS refuses to resolve.
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ELOOP') skipped.push({ path: rel, reason: 'symlinkLoop', detail: 'link resolves to itself' });
          continue;
        }
      }
      if (ignoredBy(here, rel, isDir)) continue;
      if (isDir) {
        await walk(abs, here);
        continue;
      }
      if (!isFile) continue;
      if (isSecretFile(entry.name)) {
        skipped.push({ path: rel, reason: 'secret' });
        continue;
      }
      const lang = langOfPath(entry.name);
      if (!lang) continue;
      let size: number;
      try {
        size = statSync(abs).size;
      } catch (e) {
        skipped.push({ path: rel, reason: 'unreadable', detail: (e as Error).message });
        continue;
      }
      if (size > maxBytes) {
        skipped.push({ path: rel, reason: 'tooLarge', detail: `${size} bytes > ${maxBytes}` });
        continue;
      }
      files.push({ path: rel, absPath: abs, lang, size });
    }
  };

  await walk(repoRoot, [rootLayer]);
  return { files, skipped };
}

export type ReadSourceResult = { ok: true; text: string; hash: string } | { ok: false; reason: SkipReason; detail: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decode a source file's bytes: binary and non-UTF-8 content is refused, never guessed. */
export function decodeSource(bytes: Uint8Array): ReadSourceResult {
  const probe = bytes.subarray(0, Math.min(bytes.length, 8192));
  if (probe.includes(0)) return { ok: false, reason: 'binary', detail: 'contains NUL bytes' };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: 'notUtf8', detail: 'not valid UTF-8' };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { ok: true, text, hash: contentHash(bytes) };
}

export function contentHash(data: Uint8Array | string): string {
  return createHash('sha1').update(data).digest('hex');
}

export async function readSource(absPath: string): Promise<ReadSourceResult> {
  try {
    // Sync read: source files are small (size-capped) and a thread-pool hop costs more than the read.
    return decodeSource(readFileSync(absPath));
  } catch (e) {
    return { ok: false, reason: 'unreadable', detail: (e as Error).message };
  }
}

export type PathVerdict = { index: true; lang: Lang } | { index: false; reason: SkipReason | 'ignored' | 'notSource' };

/** Decide for one repo-relative path (a watcher event, a saved document) what scanRepository would. */
export async function checkPath(repoRoot: string, relPath: string, options: ScanOptions = {}): Promise<PathVerdict> {
  const parts = relPath.split('/');
  const fileName = parts[parts.length - 1] ?? relPath;
  const layers: IgnoreLayer[] = [{ base: '', matcher: ignore().add(ALWAYS_EXCLUDED).add([...(options.exclude ?? [])]) }];
  for (let i = 0; i < parts.length; i++) {
    const base = parts.slice(0, i).join('/');
    try {
      const text = await fs.readFile(join(repoRoot, base, '.gitignore'), 'utf8');
      layers.push({ base, matcher: ignore().add(text) });
    } catch {
      // No .gitignore at this level.
    }
  }
  for (let i = 1; i < parts.length; i++) {
    if (ignoredBy(layers, parts.slice(0, i).join('/'), true)) return { index: false, reason: 'ignored' };
  }
  if (ignoredBy(layers, relPath, false)) return { index: false, reason: 'ignored' };
  if (isSecretFile(fileName)) return { index: false, reason: 'secret' };
  const lang = langOfPath(fileName);
  if (!lang) return { index: false, reason: 'notSource' };
  return { index: true, lang };
}

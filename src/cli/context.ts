// What every CLI command shares: asset locations, the cache folder, opening a repository's knowledge base.
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadParsers, type Parsers } from '../engine/kb/parsers';
import { KnowledgeBase, type IndexProgress } from '../engine/kb/KnowledgeBase';
import { indexFolderFor, platformCacheRoot } from '../engine/kb/store';
import { errorMessage, UserError } from '../engine/util/errors';
import { readRegularFile } from '../engine/util/safeFile';
import { lfText } from '../engine/util/documentText';
import { parseModelDevice, type ModelDevice } from '../engine/models/device';
import { UsageError } from './command';

/** The bundled CLI lives in dist/, next to the copied grammars/ and models/. */
export function assetsDir(): string {
  return __dirname;
}

/** The user's cache folder for indexes: --index-dir, else CODERAG_CACHE_DIR, else the platform cache folder. */
export function cacheRoot(indexDirOption?: string): string {
  if (indexDirOption) return resolve(indexDirOption);
  return platformCacheRoot(process.env, process.platform, homedir());
}

export function requireRepo(path: string | undefined): string {
  if (!path) throw new UserError('a repository folder is required');
  const abs = resolve(path);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new UserError(`repository folder not found: ${path}`);
  return abs;
}

/** A file the CLI completes or retrieves at: larger than this is refused (the window it would use is a few KB). */
const MAX_CURSOR_FILE_BYTES = 256 * 1024 * 1024;

/**
 * The text of the file a command works at, read as every file is (kb/scan, util/safeFile): a FIFO,
 * a device or a folder in its place is a clear error at once, never a read that hangs (and with it
 * Ctrl-C, which a blocked synchronous read never lets through).
 */
export async function readCursorFile(abs: string): Promise<string> {
  try {
    return lfText((await readRegularFile(abs, MAX_CURSOR_FILE_BYTES)).toString('utf8'));
  } catch (e) {
    throw new UserError(`cannot read ${errorMessage(e)}`);
  }
}

let parsersPromise: Promise<Parsers> | undefined;
export function parsers(): Promise<Parsers> {
  parsersPromise ??= loadParsers(join(assetsDir(), 'grammars'));
  return parsersPromise;
}

interface OpenOptions {
  indexDir?: string;
  exclude?: string[];
  maxFileBytes?: number;
  maxFiles?: number;
}

export async function openKnowledgeBase(repoRoot: string, options: OpenOptions): Promise<KnowledgeBase> {
  return KnowledgeBase.open({
    repoRoot,
    indexFolder: indexFolderFor(cacheRoot(options.indexDir), repoRoot),
    parsers: await parsers(),
    exclude: options.exclude,
    maxFileBytes: options.maxFileBytes,
    maxFiles: options.maxFiles,
  });
}

/** Progress on stderr: a rewritten line on a terminal, a line every few seconds otherwise. */
export function progressPrinter(label: string): { update(p: IndexProgress): void; done(): void } {
  const tty = process.stderr.isTTY === true;
  let last = 0;
  let shown = false;
  return {
    update(p) {
      const now = Date.now();
      if (p.total < 50 || now - last < (tty ? 100 : 2000)) return;
      last = now;
      shown = true;
      const line = `${label} ${p.done}/${p.total} ${p.path}`;
      if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns ?? 100) - 1)}`);
      else process.stderr.write(`${line}\n`);
    },
    done() {
      if (tty && shown) process.stderr.write('\r\x1b[K');
    },
  };
}

let device: ModelDevice = 'auto';

/**
 * Takes the global `--device auto|cpu|cuda|dml|coreml` (or `--device=...`) out of a command's
 * arguments: every model a command opens runs on that execution provider (default auto).
 */
export function takeDeviceOption(argv: string[]): string[] {
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (a === '--device' || a.startsWith('--device=')) {
      const value = a === '--device' ? argv[++i] : a.slice('--device='.length);
      if (value === undefined || value === '') throw new UsageError('--device needs a value: auto, cpu, cuda, dml or coreml');
      try {
        device = parseModelDevice(value);
      } catch (e) {
        throw new UsageError(`--${e instanceof Error ? e.message : String(e)}`);
      }
      continue;
    }
    rest.push(a);
  }
  return rest;
}

/** The execution provider the command's models are asked to run on (`--device`). */
export function modelDevice(): ModelDevice {
  return device;
}

// A checksummed file: one JSON header line (with the payload's length and SHA-256), then the payload.
// Written atomically; the reader reports why a file cannot be trusted instead of throwing.
import { promises as fs } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { errorMessage, UserError } from './errors';
import { readRegularFile, isFileReadError, storageMessage, MAX_READ_BYTES } from './safeFile';

/** A file could not be written: the message names the file system's reason in words (ENOSPC, EROFS, EACCES…), `code` the errno. */
class StorageError extends UserError {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

export function isStorageError(e: unknown): e is StorageError {
  return e instanceof StorageError;
}

/**
 * mkdir -p that reports the real cause: Node's recursive mkdir answers ENOENT on a read-only file
 * system; the first missing folder, made alone, gives EROFS (or EACCES) instead.
 */
async function makeFolder(dir: string): Promise<void> {
  try {
    await fs.mkdir(dir, { recursive: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    let missing = dir;
    for (let up = dirname(missing); up !== missing; missing = up, up = dirname(up)) {
      if (
        await fs.stat(up).then(
          () => true,
          () => false,
        )
      )
        break;
    }
    await fs.mkdir(missing);
    throw e;
  }
}

/** The temp file an atomic write of `path` goes through: `<path>.<pid>.<8 hex>.tmp` (TEMP_NAME matches it). */
function tempPathFor(path: string): string {
  return `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** The project's own temp names (tempPathFor), and nothing a user would name a file. */
const TEMP_NAME = /^[^/\\]+\.\d+\.[0-9a-f]{8}\.tmp$/;

/** Temp files this old are from a save that was interrupted (a live save renames its own within seconds). */
const STALE_TEMP_MS = 10 * 60 * 1000;

/**
 * Remove the temp files interrupted saves left in `folder` (a kill, a crash, a power cut between
 * write and rename): only regular files named as tempPathFor names them and unchanged for
 * `minAgeMs`, so the live temp of a concurrent run is never touched. Never throws; returns the
 * names removed.
 */
export async function sweepStaleTemps(folder: string, minAgeMs = STALE_TEMP_MS, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await fs.readdir(folder);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!TEMP_NAME.test(name)) continue;
    const path = join(folder, name);
    try {
      const st = await fs.lstat(path);
      if (!st.isFile() || now - st.mtimeMs < minAgeMs) continue;
      await fs.rm(path);
      removed.push(name);
    } catch {
      // Gone meanwhile (another run swept it) or not ours to remove: left as it is.
    }
  }
  return removed;
}

/**
 * Write atomically: a temp file in the same folder, fsync, then rename over the old one. On any
 * failure (a full disk, a read-only folder) the temp file is removed and a StorageError says why.
 */
export async function writeFileAtomic(
  path: string,
  /** The contents, or its parts in order (written one after the other, never joined in memory). */
  data: string | Uint8Array | readonly Uint8Array[],
  io: { writeFile?: (handle: fs.FileHandle, data: string | Uint8Array) => Promise<void> } = {},
): Promise<void> {
  const tmp = tempPathFor(path);
  let created = false;
  try {
    await makeFolder(dirname(path));
    const handle = await fs.open(tmp, 'w');
    created = true;
    try {
      // Each writeFile goes on from where the last one ended.
      for (const part of typeof data === 'string' || data instanceof Uint8Array ? [data] : data)
        await (io.writeFile ? io.writeFile(handle, part) : handle.writeFile(part));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, path);
  } catch (e) {
    // A temp file left on a full disk keeps it full: every later save (and others') fails too.
    if (created) await fs.rm(tmp, { force: true }).catch(() => undefined);
    const err = e as NodeJS.ErrnoException;
    throw new StorageError(`cannot write ${path}: ${storageMessage(err, err.path === tmp || err.path === path ? '' : err.path)}`, err.code);
  }
}

interface FrameCheck {
  bytes: number;
  sha256: string;
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * Write `header` (plus the payload's length and checksum) and `payload` atomically; `checksum`: the payload's SHA-256 when the caller has
 * it already.
 */
export async function writeFramedFile(path: string, header: object, payload: Buffer, checksum?: string): Promise<void> {
  const full = { ...header, bytes: payload.length, sha256: checksum ?? sha256(payload) };
  // Written after the header, not copied behind it: a copy of a large payload held the event loop.
  await writeFramedLine(path, JSON.stringify(full), [payload]);
}

/**
 * Write a framed file whose header line the caller has written itself (`headerJson`: the JSON of
 * the header with its `bytes` and `sha256` fields), followed by the payload's `parts`.
 */
export async function writeFramedLine(path: string, headerJson: string, parts: readonly Uint8Array[]): Promise<void> {
  await writeFileAtomic(path, [Buffer.from(headerJson + '\n', 'utf8'), ...parts]);
}

type FramedRead<H> =
  { status: 'ok'; header: H & FrameCheck; payload: Buffer } | { status: 'missing' } | { status: 'invalid'; reason: string };

/** Split a framed file into its parsed header and payload; the caller checks the header's fields, then payloadProblem(). */
export async function readFramedFile<H>(path: string, maxBytes = MAX_READ_BYTES): Promise<FramedRead<H>> {
  let raw: Buffer;
  try {
    // Not fs.readFile: a FIFO in its place would hang the reader, a link to /dev/zero grow without end.
    raw = await readRegularFile(path, maxBytes);
  } catch (e) {
    if (isFileReadError(e) && e.code === 'ENOENT') return { status: 'missing' };
    return { status: 'invalid', reason: `unreadable: ${errorMessage(e)}` };
  }
  const newline = raw.indexOf(0x0a);
  if (newline < 0) return { status: 'invalid', reason: 'truncated (no header)' };
  let header: H & FrameCheck;
  try {
    header = JSON.parse(raw.subarray(0, newline).toString('utf8')) as H & FrameCheck;
  } catch {
    return { status: 'invalid', reason: 'corrupt header' };
  }
  if (typeof header !== 'object' || header === null) return { status: 'invalid', reason: 'corrupt header' };
  return { status: 'ok', header, payload: raw.subarray(newline + 1) };
}

/** Why the payload does not match its header's length and checksum, or undefined when it does. */
export function payloadProblem(header: FrameCheck, payload: Buffer): string | undefined {
  if (payload.length !== header.bytes) return `truncated (${payload.length} of ${header.bytes} bytes)`;
  if (sha256(payload) !== header.sha256) return 'checksum mismatch (corrupt contents)';
  return undefined;
}

// A checksummed file: one JSON header line (with the payload's length and SHA-256), then the payload.
// Written atomically; the reader reports why a file cannot be trusted instead of throwing.
import { promises as fs } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { dirname } from 'node:path';

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

export interface FrameCheck {
  bytes: number;
  sha256: string;
}

function sha256(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Write `header` (plus the payload's length and checksum) and `payload` atomically; `checksum`: the payload's SHA-256 when the caller has it already. */
export async function writeFramedFile(path: string, header: object, payload: Buffer, checksum?: string): Promise<void> {
  const full = { ...header, bytes: payload.length, sha256: checksum ?? sha256(payload) };
  await writeFileAtomic(path, Buffer.concat([Buffer.from(JSON.stringify(full) + '\n', 'utf8'), payload]));
}

export type FramedRead<H> = { status: 'ok'; header: H & FrameCheck; payload: Buffer } | { status: 'missing' } | { status: 'invalid'; reason: string };

/** Split a framed file into its parsed header and payload; the caller checks the header's fields, then payloadProblem(). */
export async function readFramedFile<H>(path: string): Promise<FramedRead<H>> {
  let raw: Buffer;
  try {
    raw = await fs.readFile(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
    return { status: 'invalid', reason: `unreadable: ${(e as Error).message}` };
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

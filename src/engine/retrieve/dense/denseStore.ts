// On-disk dense vectors of one knowledge base (CodeRAG section 2.2.1, dense path): a file in the
// KB's index folder, `dense-<encoder>.bin`, holding a JSON header line (format version, encoder
// name, dim, the row ids with their text hashes, a checksum) and then the rows as little-endian
// float32. Written atomically; a corrupt, truncated or foreign file is reported and never trusted.
import { promises as fs } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { writeFileAtomic } from '../../kb/store';

/** Bump whenever the layout or the text the vectors are computed from changes. */
export const DENSE_FORMAT_VERSION = 1;
const MAGIC = 'coderag-dense-vectors';

export interface DenseRow {
  id: string;
  /** Hash of the text the vector was computed from (textHash). */
  hash: string;
}

export interface StoredVectors {
  encoder: string;
  dim: number;
  rows: DenseRow[];
  /** rows.length * dim values, row-major. */
  vectors: Float32Array;
}

interface Header {
  magic: string;
  version: number;
  encoder: string;
  dim: number;
  rows: Array<[string, string]>;
  bytes: number;
  sha256: string;
}

export type VectorLoadResult = { status: 'ok'; stored: StoredVectors } | { status: 'missing' } | { status: 'invalid'; reason: string };

/** `dense-<encoder>.bin`, the encoder name made file-safe. */
export function denseFilePath(indexFolder: string, encoderName: string): string {
  return join(indexFolder, `dense-${encoderName.replace(/[^A-Za-z0-9._-]/g, '_')}.bin`);
}

export function textHash(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 20);
}

export async function saveVectors(path: string, stored: StoredVectors): Promise<void> {
  const payload = Buffer.from(stored.vectors.buffer, stored.vectors.byteOffset, stored.rows.length * stored.dim * 4);
  const header: Header = {
    magic: MAGIC,
    version: DENSE_FORMAT_VERSION,
    encoder: stored.encoder,
    dim: stored.dim,
    rows: stored.rows.map((r) => [r.id, r.hash]),
    bytes: payload.length,
    sha256: createHash('sha256').update(payload).digest('hex'),
  };
  await writeFileAtomic(path, Buffer.concat([Buffer.from(JSON.stringify(header) + '\n', 'utf8'), payload]));
}

/** Read a vector file; `expect` names the encoder and dim it must have been written for. */
export async function loadVectors(path: string, expect: { encoder: string; dim: number }): Promise<VectorLoadResult> {
  let raw: Buffer;
  try {
    raw = await fs.readFile(path);
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
  if (typeof header !== 'object' || header === null || header.magic !== MAGIC) return { status: 'invalid', reason: 'not a CodeRAG vector file' };
  if (header.version !== DENSE_FORMAT_VERSION) return { status: 'invalid', reason: `format version ${header.version}, expected ${DENSE_FORMAT_VERSION}` };
  if (header.encoder !== expect.encoder) return { status: 'invalid', reason: `written by encoder "${header.encoder}", expected "${expect.encoder}"` };
  if (header.dim !== expect.dim) return { status: 'invalid', reason: `dimension ${header.dim}, expected ${expect.dim}` };
  if (!Array.isArray(header.rows)) return { status: 'invalid', reason: 'malformed header' };
  const payload = raw.subarray(newline + 1);
  if (payload.length !== header.bytes || payload.length !== header.rows.length * header.dim * 4) return { status: 'invalid', reason: `truncated (${payload.length} of ${header.bytes} bytes)` };
  if (createHash('sha256').update(payload).digest('hex') !== header.sha256) return { status: 'invalid', reason: 'checksum mismatch (corrupt contents)' };
  // Copy: the payload's offset in the file buffer need not be 4-byte aligned.
  const vectors = new Float32Array(payload.length / 4);
  Buffer.from(vectors.buffer).set(payload);
  const rows: DenseRow[] = [];
  for (const r of header.rows) {
    if (!Array.isArray(r) || typeof r[0] !== 'string' || typeof r[1] !== 'string') return { status: 'invalid', reason: 'malformed header' };
    rows.push({ id: r[0], hash: r[1] });
  }
  return { status: 'ok', stored: { encoder: header.encoder, dim: header.dim, rows, vectors } };
}

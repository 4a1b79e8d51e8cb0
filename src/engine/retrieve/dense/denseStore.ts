// On-disk dense vectors of one knowledge base (CodeRAG section 2.2.1, dense path): a file in the
// KB's index folder, `dense-<encoder>.bin`, holding a JSON header line (format version, encoder
// name and build fingerprint, dim, the row ids with their text hashes, a checksum) and then the rows as little-endian
// float32. Written atomically; a corrupt, truncated or foreign file is reported and never trusted.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { payloadProblem, readFramedFile, writeFramedFile } from '../../util/framedFile';

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
  /** The encoder build the vectors came from (Encoder.fingerprint; '' when it has none). */
  fingerprint: string;
  dim: number;
  rows: DenseRow[];
  /** rows.length * dim values, row-major. */
  vectors: Float32Array;
}

interface Header {
  magic: string;
  version: number;
  encoder: string;
  fingerprint?: string;
  dim: number;
  rows: Array<[string, string]>;
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
    fingerprint: stored.fingerprint,
    dim: stored.dim,
    rows: stored.rows.map((r) => [r.id, r.hash]),
  };
  await writeFramedFile(path, header, payload);
}

/** Read a vector file; `expect` names the encoder, its build (fingerprint, default '') and the dim it must have been written for. */
export async function loadVectors(path: string, expect: { encoder: string; dim: number; fingerprint?: string }): Promise<VectorLoadResult> {
  const read = await readFramedFile<Header>(path);
  if (read.status !== 'ok') return read;
  const { header, payload } = read;
  if (header.magic !== MAGIC) return { status: 'invalid', reason: 'not a CodeRAG vector file' };
  if (header.version !== DENSE_FORMAT_VERSION) return { status: 'invalid', reason: `format version ${header.version}, expected ${DENSE_FORMAT_VERSION}` };
  if (header.encoder !== expect.encoder) return { status: 'invalid', reason: `written by encoder "${header.encoder}", expected "${expect.encoder}"` };
  if ((header.fingerprint ?? '') !== (expect.fingerprint ?? '')) return { status: 'invalid', reason: `written by another build of encoder "${header.encoder}" (fingerprint ${header.fingerprint || 'none'}, expected ${expect.fingerprint || 'none'})` };
  if (header.dim !== expect.dim) return { status: 'invalid', reason: `dimension ${header.dim}, expected ${expect.dim}` };
  if (!Array.isArray(header.rows)) return { status: 'invalid', reason: 'malformed header' };
  if (payload.length !== header.rows.length * header.dim * 4) return { status: 'invalid', reason: `truncated (${payload.length} of ${header.rows.length * header.dim * 4} bytes)` };
  const problem = payloadProblem(header, payload);
  if (problem) return { status: 'invalid', reason: problem };
  // Copy: the payload's offset in the file buffer need not be 4-byte aligned.
  const vectors = new Float32Array(payload.length / 4);
  Buffer.from(vectors.buffer).set(payload);
  const rows: DenseRow[] = [];
  for (const r of header.rows) {
    if (!Array.isArray(r) || typeof r[0] !== 'string' || typeof r[1] !== 'string') return { status: 'invalid', reason: 'malformed header' };
    rows.push({ id: r[0], hash: r[1] });
  }
  return { status: 'ok', stored: { encoder: header.encoder, fingerprint: header.fingerprint ?? '', dim: header.dim, rows, vectors } };
}

/** What reading a vector cache found: vectors loaded, no file yet, or a file that could not be used (and why). */
export type VectorCacheStatus = 'loaded' | 'missing' | { invalid: string };

/**
 * Fill `into` (text hash -> vector, each a view into the loaded matrix) from the vector file at
 * `path`, written for this encoder build and dimension; an invalid file is reported, not thrown.
 */
export async function readVectorCache(path: string, encoder: { name: string; dim: number; fingerprint?: string }, into: Map<string, Float32Array>): Promise<VectorCacheStatus> {
  const result = await loadVectors(path, { encoder: encoder.name, dim: encoder.dim, fingerprint: encoder.fingerprint ?? '' });
  if (result.status === 'missing') return 'missing';
  if (result.status === 'invalid') return { invalid: result.reason };
  const { rows, vectors, dim } = result.stored;
  rows.forEach((r, i) => into.set(r.hash, vectors.subarray(i * dim, (i + 1) * dim)));
  return 'loaded';
}

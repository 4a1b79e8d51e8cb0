// On-disk dense vectors of one knowledge base (CodeRAG section 2.2.1, dense path): a file in the
// KB's index folder, `dense-<encoder>.bin`, holding a JSON header line (format version, encoder
// name and build fingerprint, dim, layout, the row ids with their text hashes, a checksum) and then
// the rows: little-endian float32 (layout float32, ProCC's windows), or one float32 scale per row
// followed by the int8 codes (layout int8, the dense path's items; int8Rows.ts). Written atomically;
// a corrupt, truncated or foreign file is reported and never trusted. Format 1 files (float32, from
// before the int8 layout) are still read.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { payloadProblem, readFramedFile, writeFramedLine } from '../../util/framedFile';
import { eventLoopYielder } from '../../util/yielder';
import { quantizeInto } from './int8Rows';

/** Bump whenever the layout or the text the vectors are computed from changes. */
const DENSE_FORMAT_VERSION = 2;
/** Older formats this reader still understands (1: float32 rows, no layout field). */
const READABLE_VERSIONS = [1, DENSE_FORMAT_VERSION];
const MAGIC = 'coderag-dense-vectors';

export interface DenseRow {
  id: string;
  /** Hash of the text the vector was computed from (textHash). */
  hash: string;
}

/** The rows' values: float32 (rows.length * dim, row-major), or int8 codes with one scale per row. */
type VectorData = { layout: 'float32'; vectors: Float32Array } | { layout: 'int8'; codes: Int8Array; scales: Float32Array };

interface StoredVectors {
  encoder: string;
  /** The encoder build the vectors came from (Encoder.fingerprint; '' when it has none). */
  fingerprint: string;
  dim: number;
  rows: DenseRow[];
  data: VectorData;
}

interface Header {
  magic: string;
  version: number;
  encoder: string;
  fingerprint?: string;
  dim: number;
  /** Absent in format 1: float32. */
  layout?: VectorData['layout'];
  rows: Array<[string, string]>;
}

type VectorLoadResult = { status: 'ok'; stored: StoredVectors } | { status: 'missing' } | { status: 'invalid'; reason: string };

/** `dense-<encoder>.bin`, the encoder name made file-safe. */
export function denseFilePath(indexFolder: string, encoderName: string): string {
  return join(indexFolder, `dense-${encoderName.replace(/[^A-Za-z0-9._-]/g, '_')}.bin`);
}

/**
 * The first 20 hex digits of the text's SHA-1. Written from the digest's first 10 bytes, a flat
 * 20-character string: `.slice(0, 20)` of the 40-digit one made a slice that kept all 40 alive
 * for as long as the key lives (one per knowledge-base item).
 */
export function textHash(text: string): string {
  return createHash('sha1').update(text).digest().toString('hex', 0, 10);
}

/** Bytes of the payload for `rows` rows of `dim` values in `layout`. */
function payloadBytes(layout: VectorData['layout'], rows: number, dim: number): number {
  return layout === 'float32' ? rows * dim * 4 : rows * 4 + rows * dim;
}

/** Header rows per piece of the header line, and payload bytes per update of its checksum, between two hands of the event loop back. */
const SAVE_ROWS_PER_PIECE = 2048;
const SAVE_CHECKSUM_BYTES = 1024 * 1024;

/**
 * Written in pieces, handing the event loop back every ~25 ms: the header line (a row id and hash
 * per item), the payload's checksum and one buffer of both in one go held the server 264 ms after
 * embedding 71,067 items on a busy 2-core machine. The file is the one a single JSON.stringify of
 * the header would frame.
 */
export async function saveVectors(path: string, stored: StoredVectors): Promise<void> {
  const n = stored.rows.length;
  const { data } = stored;
  const parts: Uint8Array[] =
    data.layout === 'float32'
      ? [Buffer.from(data.vectors.buffer, data.vectors.byteOffset, n * stored.dim * 4)]
      : [
          Buffer.from(data.scales.buffer, data.scales.byteOffset, n * 4),
          Buffer.from(data.codes.buffer, data.codes.byteOffset, n * stored.dim),
        ];
  const header: Omit<Header, 'rows'> = {
    magic: MAGIC,
    version: DENSE_FORMAT_VERSION,
    encoder: stored.encoder,
    fingerprint: stored.fingerprint,
    dim: stored.dim,
    layout: data.layout,
  };
  const pause = eventLoopYielder();
  const rows: string[] = [];
  for (let i = 0; i < n; i += SAVE_ROWS_PER_PIECE) {
    await pause();
    rows.push(
      stored.rows
        .slice(i, i + SAVE_ROWS_PER_PIECE)
        .map((r) => JSON.stringify([r.id, r.hash]))
        .join(','),
    );
  }
  const checksum = createHash('sha256');
  let bytes = 0;
  for (const part of parts) {
    for (let at = 0; at < part.length; at += SAVE_CHECKSUM_BYTES) {
      await pause();
      checksum.update(part.subarray(at, at + SAVE_CHECKSUM_BYTES));
    }
    bytes += part.length;
  }
  await pause();
  // Key for key what JSON.stringify({ ...header, rows, bytes, sha256 }) writes (writeFramedFile's frame).
  const head = JSON.stringify(header);
  const headerJson = `${head.slice(0, -1)},"rows":[${rows.join(',')}],"bytes":${bytes},"sha256":${JSON.stringify(checksum.digest('hex'))}}`;
  await writeFramedLine(path, headerJson, parts);
}

/** Read a vector file; `expect` names the encoder, its build (fingerprint, default '') and the dim it must have been written for. */
export async function loadVectors(path: string, expect: { encoder: string; dim: number; fingerprint?: string }): Promise<VectorLoadResult> {
  const read = await readFramedFile<Header>(path);
  if (read.status !== 'ok') return read;
  const { header, payload } = read;
  if (header.magic !== MAGIC) return { status: 'invalid', reason: 'not a CodeRAG vector file' };
  if (!READABLE_VERSIONS.includes(header.version))
    return { status: 'invalid', reason: `format version ${header.version}, expected ${DENSE_FORMAT_VERSION}` };
  if (header.encoder !== expect.encoder)
    return { status: 'invalid', reason: `written by encoder "${header.encoder}", expected "${expect.encoder}"` };
  if ((header.fingerprint ?? '') !== (expect.fingerprint ?? ''))
    return {
      status: 'invalid',
      reason:
        `written by another build of encoder "${header.encoder}" (fingerprint ${header.fingerprint || 'none'}, ` +
        `expected ${expect.fingerprint || 'none'})`,
    };
  if (header.dim !== expect.dim) return { status: 'invalid', reason: `dimension ${header.dim}, expected ${expect.dim}` };
  if (!Array.isArray(header.rows)) return { status: 'invalid', reason: 'malformed header' };
  const layout = header.layout ?? 'float32';
  if (layout !== 'float32' && layout !== 'int8') return { status: 'invalid', reason: `unknown layout ${String(layout)}` };
  const n = header.rows.length;
  const expected = payloadBytes(layout, n, header.dim);
  if (payload.length !== expected) return { status: 'invalid', reason: `truncated (${payload.length} of ${expected} bytes)` };
  const problem = payloadProblem(header, payload);
  if (problem) return { status: 'invalid', reason: problem };
  // Copies: the payload's offset in the file buffer need not be 4-byte aligned.
  let data: VectorData;
  if (layout === 'float32') {
    const vectors = new Float32Array(n * header.dim);
    Buffer.from(vectors.buffer).set(payload);
    data = { layout, vectors };
  } else {
    const scales = new Float32Array(n);
    Buffer.from(scales.buffer).set(payload.subarray(0, n * 4));
    const codes = new Int8Array(n * header.dim);
    Buffer.from(codes.buffer).set(payload.subarray(n * 4));
    data = { layout, codes, scales };
  }
  const rows: DenseRow[] = [];
  for (const r of header.rows) {
    if (!Array.isArray(r) || typeof r[0] !== 'string' || typeof r[1] !== 'string') return { status: 'invalid', reason: 'malformed header' };
    rows.push({ id: r[0], hash: r[1] });
  }
  return { status: 'ok', stored: { encoder: header.encoder, fingerprint: header.fingerprint ?? '', dim: header.dim, rows, data } };
}

/** What reading a vector cache found: vectors loaded, no file yet, or a file that could not be used (and why). */
type VectorCacheStatus = 'loaded' | 'missing' | { invalid: string };

type CacheEncoder = { name: string; dim: number; fingerprint?: string };

/** The vector file at `path` as written for this encoder build and dimension, or why it cannot be used. */
async function storedFor(path: string, encoder: CacheEncoder): Promise<StoredVectors | Exclude<VectorCacheStatus, 'loaded'>> {
  const result = await loadVectors(path, { encoder: encoder.name, dim: encoder.dim, fingerprint: encoder.fingerprint ?? '' });
  if (result.status === 'missing') return 'missing';
  if (result.status === 'invalid') return { invalid: result.reason };
  return result.stored;
}

/**
 * Fill `into` (text hash -> vector, each a view into the loaded matrix) from the float32 vector file
 * at `path`, written for this encoder build and dimension; an invalid file (or one of another
 * layout) is reported, not thrown.
 */
export async function readVectorCache(path: string, encoder: CacheEncoder, into: Map<string, Float32Array>): Promise<VectorCacheStatus> {
  const stored = await storedFor(path, encoder);
  if (stored === 'missing' || 'invalid' in stored) return stored;
  const { rows, data, dim } = stored;
  if (data.layout !== 'float32') return { invalid: `layout ${data.layout}, expected float32` };
  rows.forEach((r, i) => into.set(r.hash, data.vectors.subarray(i * dim, (i + 1) * dim)));
  return 'loaded';
}

/** One row's int8 codes (a view) and scale. */
export interface CodedRow {
  codes: Int8Array;
  scale: number;
}

/**
 * Fill `into` (text hash -> int8 row) from the vector file at `path`, as readVectorCache does; a
 * float32 file (format 1, written before the int8 layout) is quantized as it is read, so an
 * upgrade does not embed the repository again.
 */
export async function readCodedCache(path: string, encoder: CacheEncoder, into: Map<string, CodedRow>): Promise<VectorCacheStatus> {
  const stored = await storedFor(path, encoder);
  if (stored === 'missing' || 'invalid' in stored) return stored;
  const { rows, data, dim } = stored;
  let codes: Int8Array;
  let scales: Float32Array;
  if (data.layout === 'int8') ({ codes, scales } = data);
  else {
    codes = new Int8Array(rows.length * dim);
    scales = new Float32Array(rows.length);
    for (let i = 0; i < rows.length; i++) scales[i] = quantizeInto(data.vectors.subarray(i * dim, (i + 1) * dim), codes, i * dim);
  }
  rows.forEach((r, i) => into.set(r.hash, { codes: codes.subarray(i * dim, (i + 1) * dim), scale: scales[i]! }));
  return 'loaded';
}

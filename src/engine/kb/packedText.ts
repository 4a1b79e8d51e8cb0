// The knowledge base's cold text, compressed: an item's stub (`text`) and docstring are read when
// an index is built (sparse terms, dense hashes, usages) and for the few items a request uses, yet
// they were most of the server's JS heap on a large repository (the JDK's java.base: 42 MB of
// stubs and 10.5 MB of docstrings among 71,045 items). A file's texts are deflated in blocks of
// consecutive items (54 MB -> 10.7 MB in 5,019 blocks on java.base) and read back through the
// items' `text` and `docstring` getters; the texts of the blocks read last stay decoded. Each
// knowledge base has its own PackedTexts: its decoded blocks, inflate buffer and byte slabs.
//
// Blocks are inflated by fflate into one buffer (inflateSync's `out`): zlib's inflateRawSync
// allocates a fresh native output buffer per call, which either left the allocator's heap about
// 30 MB larger (16 KB chunks freed only at a later collection) or, with chunks large enough to be
// mapped, made a pass over java.base's 71,045 items five times slower. fflate replaced a decoder
// of the project's own (util/inflate.ts) that did the same: on java.base's sources cut into such
// blocks (5,341 blocks, 52 MB inflated) a pass took 1,255 ms median with fflate, 1,492 ms with it
// (`node --expose-gc --import tsx scripts/benchInflate.ts <java.base>`, 9 passes, shared machine).
import { deflateRawSync } from 'node:zlib';
import { inflateSync } from 'fflate';
import { ITEM_KINDS, type FileExtraction, type ItemKind, type KbItem, type Lang, type LineRange } from './types';

/**
 * Bytes of decoded text kept for the next reads, per knowledge base (the blocks read last; at
 * least one). A request reads the texts of its 31 candidates, from blocks that other requests in
 * the repository read too. Dev line cases, retrieval and rerank (`eval compare --methods
 * df+s+d+dr --no-generate`), blocks inflated per request, Java / Python: 7.9 / 3.3 with the 64
 * blocks kept before (0.59 / 0.25 ms), 1.0 / 0.1 with 4 MB (0.07 / 0.01 ms). The dev
 * repositories' blocks hold 5-10K characters each; java.base's 5,019 blocks 52 MB.
 */
export const DECODED_BYTES = 4 * 1024 * 1024;

/**
 * Where packed bytes are kept: slices of 1 MB slabs. zlib's answer is a view of its 16 KB output
 * chunk (3,089 small files of java.base held 50 MB that way), and an exact copy of each, small
 * allocations among zlib's freed working memory, kept the allocator's heap larger.
 */
const SLAB_BYTES = 1024 * 1024;

/** One knowledge base's packed texts: the blocks read last, decoded, and where blocks are inflated and kept. */
export class PackedTexts {
  /** Decoded blocks, most recently used last. */
  readonly decoded = new Map<TextBlock, string[]>();
  /** Inflated bytes of the decoded blocks. */
  decodedBytes = 0;
  /** Where blocks are inflated: one buffer, grown to the largest block. */
  private scratch = Buffer.alloc(64 * 1024);
  private slab = new Uint8Array(0);
  private slabUsed = 0;

  /** A copy of `bytes` in the current slab (a large one on its own). */
  keep(bytes: Uint8Array): Uint8Array {
    if (bytes.length > SLAB_BYTES / 4) return new Uint8Array(bytes);
    if (this.slabUsed + bytes.length > this.slab.length) {
      this.slab = new Uint8Array(SLAB_BYTES);
      this.slabUsed = 0;
    }
    const kept = this.slab.subarray(this.slabUsed, this.slabUsed + bytes.length);
    kept.set(bytes);
    this.slabUsed += bytes.length;
    return kept;
  }

  /** The UTF-8 segments of a block's deflated bytes (`bounds`: byte offsets of the segments). */
  inflate(data: Uint8Array, bounds: Uint32Array): string[] {
    const size = bounds[bounds.length - 1]!;
    if (this.scratch.length < size) this.scratch = Buffer.alloc(Math.max(size, 2 * this.scratch.length));
    const n = inflateSync(data, { out: this.scratch }).length;
    if (n !== size) throw new Error(`packed text block inflated to ${n} bytes, expected ${size}`);
    const texts: string[] = [];
    for (let k = 0; k + 1 < bounds.length; k++) texts.push(this.scratch.toString('utf8', bounds[k], bounds[k + 1]));
    return texts;
  }
}

/** Some consecutive items' texts and docstrings, deflated; segment 2i is item i's text, 2i + 1 its docstring. */
class TextBlock {
  private constructor(
    private readonly store: PackedTexts,
    private readonly data: Uint8Array,
    /** Byte offsets of the segments in the inflated bytes: 2n + 1 bounds for n items. */
    private readonly bounds: Uint32Array,
  ) {}

  static of(store: PackedTexts, segments: readonly string[]): TextBlock {
    const bounds = new Uint32Array(segments.length + 1);
    let at = 0;
    for (let i = 0; i < segments.length; i++) {
      at += Buffer.byteLength(segments[i]!, 'utf8');
      bounds[i + 1] = at;
    }
    const raw = Buffer.from(segments.join(''), 'utf8');
    // Level 1: java.base packed in about 0.3 s (level 6: 0.85 s) to 9.2 MB (7.6 MB) with one block per file.
    return new TextBlock(store, store.keep(deflateRawSync(raw, { level: 1 })), bounds);
  }

  segment(i: number): string {
    const decoded = this.store.decoded;
    let texts = decoded.get(this);
    if (texts) {
      // Most recently used last; a pass over the items reads one block's items in a row.
      if (i > 1) return texts[i]!;
      decoded.delete(this);
    } else {
      texts = this.store.inflate(this.data, this.bounds);
      this.store.decodedBytes += this.bytes;
      while (this.store.decodedBytes > DECODED_BYTES && decoded.size > 0) {
        const oldest = decoded.keys().next().value!;
        decoded.delete(oldest);
        this.store.decodedBytes -= oldest.bytes;
      }
    }
    decoded.set(this, texts);
    return texts[i]!;
  }

  /** Bytes of the inflated block. */
  get bytes(): number {
    return this.bounds[this.bounds.length - 1]!;
  }
}

/** The kind as the module's own constant string (an item's may be a copy: one per item). */
function canonicalKind(kind: ItemKind): ItemKind {
  return ITEM_KINDS.find((k) => k === kind) ?? kind;
}

/** A knowledge-base item whose text and docstring live in its file's TextBlock. */
class PackedItem implements KbItem {
  id: string;
  kind: ItemKind;
  lang: Lang;
  path: string;
  name: string;
  qualifiedName: string;
  signature: string;
  range: LineRange;
  className?: string;

  constructor(
    item: KbItem,
    private readonly block: TextBlock,
    private readonly at: number,
    shared: (value: string) => string,
  ) {
    this.id = item.id;
    this.kind = canonicalKind(item.kind);
    this.lang = item.lang === 'java' ? 'java' : 'python';
    this.path = shared(item.path);
    this.name = item.name;
    this.qualifiedName = item.qualifiedName;
    this.signature = item.signature;
    this.range = item.range;
    if (item.className !== undefined) this.className = shared(item.className);
  }

  get text(): string {
    return this.block.segment(2 * this.at);
  }

  get docstring(): string {
    return this.block.segment(2 * this.at + 1);
  }

  /** The plain item, fields in extraction order: what a saved index holds. */
  toJSON(): KbItem {
    const plain: KbItem = {
      id: this.id,
      kind: this.kind,
      lang: this.lang,
      path: this.path,
      name: this.name,
      qualifiedName: this.qualifiedName,
      signature: this.signature,
      docstring: this.docstring,
      range: this.range,
      text: this.text,
    };
    if (this.className !== undefined) plain.className = this.className;
    return plain;
  }
}

/**
 * A block's text before it is closed: a read inflates the whole block, so one block for a file of
 * thousands of items would make reading one of them inflate the whole file.
 */
const BLOCK_TEXT_CHARS = 16 * 1024;

/** The extraction with its items' texts packed into blocks of consecutive items in `store` (the extraction is not changed). */
export function packExtraction(extraction: FileExtraction, store: PackedTexts): FileExtraction {
  if (extraction.items.length === 0) return extraction;
  const items: KbItem[] = [];
  // One string per distinct path and class name of the file: every item repeats them, each its own copy as extracted.
  const seen = new Map<string, string>();
  const shared = (value: string): string => {
    const had = seen.get(value);
    if (had !== undefined) return had;
    seen.set(value, value);
    return value;
  };
  let start = 0;
  let chars = 0;
  extraction.items.forEach((item, i) => {
    chars += item.text.length + item.docstring.length;
    if (chars < BLOCK_TEXT_CHARS && i < extraction.items.length - 1) return;
    const group = extraction.items.slice(start, i + 1);
    const block = TextBlock.of(
      store,
      group.flatMap((it) => [it.text, it.docstring]),
    );
    group.forEach((it, k) => items.push(new PackedItem(it, block, k, shared)));
    start = i + 1;
    chars = 0;
  });
  return { ...extraction, items };
}

// The knowledge base's cold text, compressed: an item's stub (`text`) and docstring are read when
// an index is built (sparse terms, dense hashes, usages) and for the few items a request uses, yet
// they were most of the server's JS heap on a large repository (the JDK's java.base: 42 MB of
// stubs and 10.5 MB of docstrings among 71,045 items). A file's texts are deflated in blocks of
// consecutive items (54 MB -> 10.7 MB in 5,019 blocks on java.base) and read back through the
// items' `text` and `docstring` getters; the texts of the blocks read last stay decoded.
import { deflateRawSync } from 'node:zlib';
import { inflateRawInto } from '../util/inflate';
import { ITEM_KINDS, type FileExtraction, type ItemKind, type KbItem, type Lang, type LineRange } from './types';

/** Blocks whose texts stay decoded for the next reads (a block holds up to about 16K characters). */
const CACHE_BLOCKS = 64;

const decoded = new Map<TextBlock, string[]>();

/**
 * Where blocks are inflated: one buffer, grown to the largest block. Nothing native is allocated
 * per read (see util/inflate.ts for what zlib's inflate cost here).
 */
let scratch = Buffer.alloc(64 * 1024);

/**
 * Where packed bytes are kept: slices of 1 MB slabs. zlib's answer is a view of its 16 KB output
 * chunk (3,089 small files of java.base held 50 MB that way), and an exact copy of each, small
 * allocations among zlib's freed working memory, kept the allocator's heap larger.
 */
const SLAB_BYTES = 1024 * 1024;
let slab = new Uint8Array(0);
let slabUsed = 0;

function keep(bytes: Uint8Array): Uint8Array {
  if (bytes.length > SLAB_BYTES / 4) return new Uint8Array(bytes);
  if (slabUsed + bytes.length > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  const kept = slab.subarray(slabUsed, slabUsed + bytes.length);
  kept.set(bytes);
  slabUsed += bytes.length;
  return kept;
}

/** Some consecutive items' texts and docstrings, deflated; segment 2i is item i's text, 2i + 1 its docstring. */
class TextBlock {
  private constructor(
    private readonly data: Uint8Array,
    /** Byte offsets of the segments in the inflated bytes: 2n + 1 bounds for n items. */
    private readonly bounds: Uint32Array,
  ) {}

  static of(segments: readonly string[]): TextBlock {
    const bounds = new Uint32Array(segments.length + 1);
    let at = 0;
    for (let i = 0; i < segments.length; i++) {
      at += Buffer.byteLength(segments[i]!, 'utf8');
      bounds[i + 1] = at;
    }
    const raw = Buffer.from(segments.join(''), 'utf8');
    // Level 1: java.base packed in about 0.3 s (level 6: 0.85 s) to 9.2 MB (7.6 MB) with one block per file.
    return new TextBlock(keep(deflateRawSync(raw, { level: 1 })), bounds);
  }

  segment(i: number): string {
    let texts = decoded.get(this);
    if (texts) {
      // Most recently used last; a pass over the items reads one block's items in a row.
      if (i > 1) return texts[i]!;
      decoded.delete(this);
    } else {
      texts = this.decode();
      if (decoded.size >= CACHE_BLOCKS) decoded.delete(decoded.keys().next().value!);
    }
    decoded.set(this, texts);
    return texts[i]!;
  }

  private decode(): string[] {
    const size = this.bounds[this.bounds.length - 1]!;
    if (scratch.length < size) scratch = Buffer.alloc(Math.max(size, 2 * scratch.length));
    const n = inflateRawInto(this.data, scratch);
    if (n !== size) throw new Error(`packed text block inflated to ${n} bytes, expected ${size}`);
    const texts: string[] = [];
    for (let k = 0; k + 1 < this.bounds.length; k++) texts.push(scratch.toString('utf8', this.bounds[k], this.bounds[k + 1]));
    return texts;
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
    const plain: KbItem = { id: this.id, kind: this.kind, lang: this.lang, path: this.path, name: this.name, qualifiedName: this.qualifiedName, signature: this.signature, docstring: this.docstring, range: this.range, text: this.text };
    if (this.className !== undefined) plain.className = this.className;
    return plain;
  }
}

/**
 * A block's text before it is closed: a read inflates the whole block, so one block for a file of
 * thousands of items would make reading one of them inflate the whole file.
 */
const BLOCK_TEXT_CHARS = 16 * 1024;

/** The extraction with its items' texts packed into blocks of consecutive items (the extraction is not changed). */
export function packExtraction(extraction: FileExtraction): FileExtraction {
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
    const block = TextBlock.of(group.flatMap((it) => [it.text, it.docstring]));
    group.forEach((it, k) => items.push(new PackedItem(it, block, k, shared)));
    start = i + 1;
    chars = 0;
  });
  return { ...extraction, items };
}

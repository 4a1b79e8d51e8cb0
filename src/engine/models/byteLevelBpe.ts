// A fast encoder for GPT-2-layout byte-level BPE tokenizers (the shipped models' tokenizer.json:
// model BPE with vocab + merges, ByteLevel pre-tokenizer with GPT-2's pattern, no normaliser).
// Encoding a pre-token is cached, and code repeats its identifiers and indentation, so most
// pre-tokens cost one map lookup. Ids equal tokenizers.js's encode (checked against it on every
// knowledge-base item of the JDK's java.base and the encoder's held-out task); a text holding a
// special token, or a tokenizer.json of another shape, is left to tokenizers.js (fromJson: undefined).
// Kept against tokenizers.js's own encode (and its own BPE cache) because it is 15-30 times faster
// on the engine's texts: java.base's java/util sources (369 files), the encoder's tokenizer, first /
// third pass: 6,242 item-sized pieces 2.4 / 1.1 s against 35.2 / 36.6 s; 369 prompt-sized texts
// 1.1 / 0.3 s against 10.4 / 6.2 s (`node --import tsx scripts/benchTokenize.ts DIR`).

/** GPT-2's pre-tokenization pattern (as tokenizers.js's ByteLevel pre-tokenizer). */
const PRE_TOKEN = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;
/** Cached pre-tokens; the cache starts over when full (one repository's words fit). */
const CACHE_LIMIT = 100_000;

/** GPT-2's byte -> printable character table. */
function byteTable(): string[] {
  const table = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    table[b] = String.fromCharCode(printable ? b : 256 + extra++);
  }
  return table;
}

export class ByteLevelBpe {
  private readonly bytes = byteTable();
  private readonly cache = new Map<string, number[]>();
  private readonly encoder = new TextEncoder();

  private constructor(
    private readonly vocab: Map<string, number>,
    /** "left right" -> merge rank. */
    private readonly ranks: Map<string, number>,
    /** Texts of added tokens: a text holding one is left to the full tokenizer. */
    private readonly specials: string[],
  ) {}

  /** Built from a parsed tokenizer.json, or undefined when it is not of the layout this handles. */
  static fromJson(json: Record<string, unknown>): ByteLevelBpe | undefined {
    const model = json.model as Record<string, unknown> | undefined;
    const pre = json.pre_tokenizer as Record<string, unknown> | null | undefined;
    if (!model || model.type !== 'BPE' || json.normalizer) return undefined;
    if (model.byte_fallback || model.dropout || model.continuing_subword_prefix || model.end_of_word_suffix || model.ignore_merges)
      return undefined;
    if (!pre || pre.type !== 'ByteLevel' || pre.add_prefix_space !== false || pre.use_regex === false) return undefined;
    const vocabJson = model.vocab as Record<string, number> | undefined;
    const merges = model.merges as Array<string | [string, string]> | undefined;
    if (!vocabJson || !Array.isArray(merges)) return undefined;
    const vocab = new Map(Object.entries(vocabJson));
    const ranks = new Map<string, number>();
    merges.forEach((m, i) => {
      const key = Array.isArray(m) ? `${m[0]} ${m[1]}` : m;
      if (!ranks.has(key)) ranks.set(key, i);
    });
    const added = Array.isArray(json.added_tokens) ? (json.added_tokens as Array<{ content?: unknown }>) : [];
    const specials = added.map((t) => t.content).filter((c): c is string => typeof c === 'string' && c.length > 0);
    return new ByteLevelBpe(vocab, ranks, specials);
  }

  /** Whether encode() handles this text (false: it holds an added token's text). */
  handles(text: string): boolean {
    return !this.specials.some((s) => text.includes(s));
  }

  /** Token ids of a text that handles() accepts. */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const m of text.matchAll(PRE_TOKEN)) {
      const word = m[0];
      let ids = this.cache.get(word);
      if (!ids) {
        ids = this.encodeWord(word);
        if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
        this.cache.set(word, ids);
      }
      for (const id of ids) out.push(id);
    }
    return out;
  }

  private encodeWord(word: string): number[] {
    let parts = Array.from(this.encoder.encode(word), (b) => this.bytes[b]!);
    // Merge the adjacent pair of lowest rank until none is in the merge table.
    while (parts.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < parts.length - 1; i++) {
        const rank = this.ranks.get(`${parts[i]} ${parts[i + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = i;
        }
      }
      if (best < 0) break;
      const left = parts[best]!;
      const right = parts[best + 1]!;
      const merged: string[] = [];
      for (let i = 0; i < parts.length; i++) {
        if (i < parts.length - 1 && parts[i] === left && parts[i + 1] === right) {
          merged.push(left + right);
          i++;
        } else merged.push(parts[i]!);
      }
      parts = merged;
    }
    const ids: number[] = [];
    for (const p of parts) {
      const id = this.vocab.get(p);
      // A piece outside the vocabulary: the library decides (tokenizers.js drops it without an unk token).
      if (id === undefined) throw new RangeError(`byte-level BPE: "${p}" is not in the vocabulary`);
      ids.push(id);
    }
    return ids;
  }
}

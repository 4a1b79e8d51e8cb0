// The text of byte-level BPE tokens (GGUF tokenizer model `gpt2`: GPT-2, StarCoder, Qwen) from the
// vocabulary's own strings, as llama.cpp's token_to_piece writes them one by one. llama.cpp's whole-
// sequence detokenizer (node-llama-cpp's detokenize) also "cleans up tokenization spaces" for the
// `gpt-2` and `starcoder` pre-tokenizers, deleting the space before `?`, `!`, `.` and `,` (and before
// `'s`, `'m`, ...): code such as `a != b` or `x ? y : z` would lose its spaces.

/** GPT-2's bytes_to_unicode, inverted: each vocabulary character's byte. */
function unicodeToByte(): Map<number, number> {
  const map = new Map<number, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    map.set(printable ? b : 256 + extra++, b);
  }
  return map;
}

/** GGUF token types (llama.cpp's llama_token_type). */
const NORMAL = 1;
const USER_DEFINED = 4;

export class ByteLevelPieces {
  private readonly byteOf = unicodeToByte();
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly tokens: readonly string[],
    private readonly types: readonly number[],
  ) {}

  /** A normal token's bytes, a user-defined token's text; undefined for control and other tokens (the caller's own rendering). */
  bytes(id: number): Uint8Array | undefined {
    const text = this.tokens[id];
    const type = this.types[id] ?? NORMAL;
    if (text === undefined) return undefined;
    if (type === USER_DEFINED) return this.encoder.encode(text);
    if (type !== NORMAL) return undefined;
    const out = new Uint8Array(text.length);
    let n = 0;
    for (const ch of text) {
      const b = this.byteOf.get(ch.codePointAt(0)!);
      // Not a byte-level string after all: the caller renders it.
      if (b === undefined) return undefined;
      out[n++] = b;
    }
    return out.subarray(0, n);
  }
}

// The token mask of monitor-guided decoding (docs/ARCHITECTURE.md "Papers: implementation notes", "Checking completions against the
// repository"): after a dereference whose receiver has known members, a token is allowed only when
// the member name written so far plus the token continues some valid name, or ends one.

/** What the mask needs of each vocabulary entry, computed once per vocabulary. */
export interface MaskVocabulary {
  /** The token's leading identifier characters (`add` for `add(`, '' for ` (`). */
  lead: string[];
  /** Whether the token has characters after its leading identifier part. */
  ends: Uint8Array;
}

const IDENT_CHAR = /[\p{L}\p{N}_$]/u;

export function maskVocabulary(tokenTexts: readonly string[]): MaskVocabulary {
  const lead: string[] = new Array<string>(tokenTexts.length);
  const ends = new Uint8Array(tokenTexts.length);
  for (let i = 0; i < tokenTexts.length; i++) {
    const t = tokenTexts[i] ?? '';
    let n = 0;
    // Characters by code point: an identifier may hold any letter.
    for (const ch of t) {
      if (!IDENT_CHAR.test(ch)) break;
      n += ch.length;
    }
    lead[i] = t.slice(0, n);
    // An empty token (a partial UTF-8 byte decodes to U+FFFD, which is not an identifier char) ends nothing.
    ends[i] = n < t.length ? 1 : 0;
  }
  return { lead, ends };
}

/** Every name and every non-empty prefix of one, for the continuation test. */
export function namePrefixes(names: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const n of names) for (let i = 1; i <= n.length; i++) out.add(n.slice(0, i));
  return out;
}

/**
 * Which tokens may come next when `typed` is the member name written so far after the dot.
 * A token made only of identifier characters must keep `typed + token` a prefix of a valid name;
 * a token with more after its identifier part must complete a valid name with that part.
 * Returns the number of allowed tokens; `allowed[i]` is 1 for each.
 */
export function memberTokenMask(
  vocab: MaskVocabulary,
  names: ReadonlySet<string>,
  prefixes: ReadonlySet<string>,
  typed: string,
  allowed: Uint8Array,
): number {
  let count = 0;
  const typedIsName = names.has(typed);
  for (let i = 0; i < vocab.lead.length; i++) {
    const lead = vocab.lead[i]!;
    let ok: boolean;
    if (vocab.ends[i] === 1) ok = lead === '' ? typedIsName : names.has(typed + lead);
    else ok = lead !== '' && prefixes.has(typed + lead);
    allowed[i] = ok ? 1 : 0;
    if (ok) count++;
  }
  return count;
}

/** Sets the logits of disallowed tokens to -Infinity (when at least one token is allowed). */
export function applyMask(logits: Float32Array, allowed: Uint8Array, count: number): void {
  if (count === 0) return;
  // Ids past the tokenizer's vocabulary (padding rows of the embedding) are never allowed.
  for (let i = 0; i < logits.length; i++) if (allowed[i] !== 1) logits[i] = -Infinity;
}

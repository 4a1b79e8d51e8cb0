// CodeRAG's sparse tokenisation (its TF-IDF: lower-cased, token pattern \b\w\w+\b), with
// optional identifier parts (snake_case / camelCase pieces as extra terms).
import { isAscii } from '../../util/codeText';

// Python's \w is Unicode-aware; JavaScript's is not, so spell it out.
const WORD = /[\p{L}\p{N}_\p{Mn}\p{Pc}]{2,}/gu;
// The same for ASCII text, several times faster.
const WORD_ASCII = /\w{2,}/g;
const CAMEL_OR_SNAKE = /[_\p{Lu}]/u;

export interface TermOptions {
  /** Add the parts of snake_case / camelCase identifiers as extra terms (the whole token is kept). */
  splitIdentifiers?: boolean;
}

/** Parts of an identifier: `parseHttpURLConnection` -> parse, http, url, connection; `max_file_bytes` -> max, file, bytes. */
export function identifierParts(token: string): string[] {
  const parts: string[] = [];
  for (const piece of token.split('_')) {
    if (piece === '') continue;
    const sub = piece.match(/\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+|[^\p{Lu}\p{Ll}\p{N}]+/gu) ?? [piece];
    for (const s of sub) parts.push(s);
  }
  return parts;
}

/** Terms of a text in order (with repeats, for term frequencies). */
export function codeTerms(text: string, options: TermOptions = {}): string[] {
  const pattern = isAscii(text) ? WORD_ASCII : WORD;
  if (!options.splitIdentifiers) return text.toLowerCase().match(pattern) ?? [];
  const tokens = text.match(pattern);
  if (!tokens) return [];
  const out: string[] = [];
  for (const token of tokens) {
    out.push(token.toLowerCase());
    if (options.splitIdentifiers && CAMEL_OR_SNAKE.test(token)) {
      const parts = identifierParts(token);
      if (parts.length > 1) for (const p of parts) if (p.length >= 2) out.push(p.toLowerCase());
    }
  }
  return out;
}

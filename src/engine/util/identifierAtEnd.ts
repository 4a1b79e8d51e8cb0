// The identifier a text ends in, found by walking back from the end: a regular expression anchored
// with `$` tries every start position, so its cost is quadratic in a long run (a 300 KB literal).

/** Longer runs of identifier characters are not identifiers (a hex literal, minified data). */
export const MAX_IDENTIFIER_CHARS = 1024;

const PART = /^[\p{L}\p{N}_$]$/u;
const START = /^[\p{L}_$]$/u;
const ASCII_PART = /^[A-Za-z0-9_$]$/;
const ASCII_START = /^[A-Za-z_$]$/;

/** The character (a surrogate pair counts as one) ending at `end`, not reaching before `from`. */
function charBefore(text: string, end: number, from: number): string {
  const low = text.charCodeAt(end - 1);
  if (low >= 0xdc00 && low <= 0xdfff && end - 2 >= from) {
    const high = text.charCodeAt(end - 2);
    if (high >= 0xd800 && high <= 0xdbff) return text.slice(end - 2, end);
  }
  return text.charAt(end - 1);
}

/**
 * What `/[\p{L}_$][\p{L}\p{N}_$]*$/u` finds in `text.slice(from, end)` (`ascii`: what
 * `/[A-Za-z_$][A-Za-z0-9_$]*$/` finds), in time bounded by MAX_IDENTIFIER_CHARS: '' when the text
 * does not end in an identifier, or ends in a run of identifier characters longer than that.
 */
export function identifierEndingAt(text: string, end = text.length, from = 0, ascii = false): string {
  const part = ascii ? ASCII_PART : PART;
  const first = ascii ? ASCII_START : START;
  let start = end;
  while (start > from) {
    const c = charBefore(text, start, from);
    if (!part.test(c)) break;
    start -= c.length;
    if (end - start > MAX_IDENTIFIER_CHARS) return '';
  }
  // Digits may lead the run (`0x1F`): the identifier starts at its first letter, `_` or `$`.
  while (start < end) {
    const c = String.fromCodePoint(text.codePointAt(start)!);
    if (first.test(c)) break;
    start += c.length;
  }
  return text.slice(start, end);
}

// Small facts about code text shared by the engine's stages and the bench: indentation, identifier
// tokens and the languages' reserved words. Each stage builds its own stop lists from these.

/** Python's keyword.kwlist without True/False/None (literals, kept as identifiers by docs/BENCHMARKS.md). */
export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'and as assert async await break class continue def del elif else except finally for from global if import in is ' +
    'lambda nonlocal not or pass raise return try while with yield'
  ).split(' '),
);

/** Java's reserved keywords (JLS 3.9), without the literals true/false/null; contextual words (var, record, yield) are identifiers. */
export const JAVA_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'abstract assert boolean break byte case catch char class const continue default do double else enum extends final ' +
    'finally float for goto if implements import instanceof int interface long native new package private protected ' +
    'public return short static strictfp super switch synchronized this throw throws transient try void volatile while _'
  ).split(' '),
);

/**
 * Deepest syntax nesting a recursive walk over a tree follows (real code nests a few dozen levels; 5,000 nested blocks would overflow the
 * stack).
 */
export const MAX_NESTING_DEPTH = 256;

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;
const NON_ASCII = /[^\x00-\x7f]/;

/** Whether `text` is all ASCII: an ASCII pattern then matches what its Unicode twin would, several times faster. */
export function isAscii(text: string): boolean {
  return !NON_ASCII.test(text);
}

/** Every identifier-shaped token of `text`, keywords included, in order. */
export function identifierTokens(text: string): string[] {
  return text.match(IDENTIFIER) ?? [];
}

/**
 * Leading whitespace of `line` in columns: a tab advances to the next multiple of `tabWidth` (1: every whitespace character counts one).
 */
export function indentOf(line: string, tabWidth = 1): number {
  let n = 0;
  for (const c of line) {
    if (c === '\t') n += tabWidth - (n % tabWidth);
    else if (c === ' ' || /\s/.test(c)) n++;
    else break;
  }
  return n;
}

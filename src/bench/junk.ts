// The bench's own junk detector, independent of the product's filters so
// it can measure them: a line repeated more than twice, a loop with variations (counted only where
// no line is repeated), a redaction placeholder, a member its typed receiver lacks (the harness's
// unknown-member check), a suggestion that only repeats the text after the cursor.
export type JunkKind = 'repeat' | 'loop' | 'placeholder' | 'unknown-member' | 'echo';

/** The product's redaction mark ([redacted]) and the `<redacted>` form models copy from prompts. */
const PLACEHOLDER = /[<[]redacted[>\]]/i;

const squash = (t: string): string => t.replace(/\s+/g, ' ').trim();

/** Words, and every other character but a space, as the bench counts a loop's pieces. */
const piecesOf = (line: string): string[] => line.match(/[\p{L}\p{N}_$]+|\S/gu) ?? [];

/** Pieces a phrase must have to count as looping, and copies it must have in one line. */
const PHRASE = 4;
const COPIES = 3;

/**
 * A loop with variations, which 'repeat' misses: in one line, a phrase of PHRASE pieces with a
 * letter written COPIES times or more, the line from its first copy on made of a third as many
 * distinct pieces as it has (`st.timezones() -> st.timezones() -> …`); or COPIES lines of
 * PHRASE pieces or more made of the same pieces in any order (`int min = max;`, `int max = min;`).
 */
function loops(prediction: string): boolean {
  const shapes = new Map<string, number>();
  for (const line of prediction.split('\n')) {
    const pieces = piecesOf(line);
    const phrases = new Map<string, number>();
    const first = new Map<string, number>();
    for (let i = 0; i + PHRASE <= pieces.length; i++) {
      const phrase = pieces.slice(i, i + PHRASE).join(' ');
      if (!/\p{L}/u.test(phrase)) continue;
      if (!first.has(phrase)) first.set(phrase, i);
      const n = (phrases.get(phrase) ?? 0) + 1;
      phrases.set(phrase, n);
      if (n < COPIES) continue;
      // From its first copy on, the line says little else (a builder chain adds a new piece each time).
      const rest = pieces.slice(first.get(phrase));
      if (new Set(rest).size * 3 <= rest.length) return true;
    }
    if (pieces.length < PHRASE) continue;
    const shape = [...pieces].sort().join(' ');
    const n = (shapes.get(shape) ?? 0) + 1;
    if (n >= COPIES) return true;
    shapes.set(shape, n);
  }
  return false;
}

/** The junk kinds of one suggestion (empty: none, or nothing to show). */
export function junkOf(prediction: string, rightContext: string, unknownMember: boolean | undefined): JunkKind[] {
  const text = squash(prediction);
  if (text === '') return [];
  const out: JunkKind[] = [];
  const counts = new Map<string, number>();
  for (const line of prediction.split('\n')) {
    const l = line.trim();
    if (l.length < 2) continue;
    counts.set(l, (counts.get(l) ?? 0) + 1);
  }
  if ([...counts.values()].some((n) => n > 2)) out.push('repeat');
  else if (loops(prediction)) out.push('loop');
  if (PLACEHOLDER.test(prediction)) out.push('placeholder');
  if (unknownMember === true) out.push('unknown-member');
  if (squash(rightContext).startsWith(text)) out.push('echo');
  return out;
}

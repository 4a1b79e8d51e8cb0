// The bench's own junk detector, independent of the product's filters so
// it can measure them: a line repeated more than twice, a redaction placeholder, a member its typed
// receiver lacks (the harness's unknown-member check), a suggestion that only repeats the text after
// the cursor.
export type JunkKind = 'repeat' | 'placeholder' | 'unknown-member' | 'echo';

export const JUNK_KINDS: readonly JunkKind[] = ['repeat', 'placeholder', 'unknown-member', 'echo'];

/** The product's redaction mark ([redacted]) and the `<redacted>` form models copy from prompts. */
const PLACEHOLDER = /[<[]redacted[>\]]/i;

const squash = (t: string): string => t.replace(/\s+/g, ' ').trim();

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
  if (PLACEHOLDER.test(prediction)) out.push('placeholder');
  if (unknownMember === true) out.push('unknown-member');
  if (squash(rightContext).startsWith(text)) out.push('echo');
  return out;
}

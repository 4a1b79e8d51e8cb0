// Junk filters: what no suggestion may show, whatever the mode or the model —
// a decoding loop (a line or block written three times in a row), the redaction placeholder in any
// form the model copies it, and a suggestion that only re-types the text after the cursor.
// Pure; each returns what it removed, for the trace.

/** One rule's cut, as the trace shows it. */
export interface JunkCut {
  rule: 'repeat' | 'inlineRepeat' | 'placeholder' | 'rightContext';
  /** The text the rule removed (at most 120 characters shown by the trace). */
  removed: string;
  /** What the rule saw, in words. */
  note: string;
}

/** A rule's result when it keeps `kept` (a prefix of `text`): the rest is what it removed. */
function cutTo(text: string, kept: string, rule: JunkCut['rule'], note: string): { text: string; cut: JunkCut } {
  return { text: kept, cut: { rule, removed: text.slice(kept.length).replace(/^\n/, ''), note } };
}

/**
 * A loop inside one line: a piece of 2 to 16 characters with a letter in it written at least four
 * times in a row, 16 characters in all (`"metetetetet`, `"Mug", "Mug", "Mug", "Mug"`,
 * `.get_waven.get_waven.get_waven.get_waven`). A model server's small model writes these (the
 * embedded client's loop guard stops them while decoding; a server's stream has no guard). Digits and
 * punctuation alone (`0, 0, 0, 0`, `'-' * 40`, `----`) are code, not loops.
 */
const INLINE_LOOP = /(.{2,16}?)\1{3,}/gu;

/**
 * Where the first in-line loop starts (index into `line`), or undefined. A repetition without a
 * letter is skipped whole, so a long run of `0, ` costs one pass, not one per position.
 */
function inlineLoopAt(line: string): { at: number; unit: string; copies: number } | undefined {
  const re = new RegExp(INLINE_LOOP.source, INLINE_LOOP.flags);
  for (let m = re.exec(line); m; m = re.exec(line)) {
    const unit = m[1]!;
    if (/\p{L}/u.test(unit) && m[0].length >= 16) return { at: m.index, unit, copies: m[0].length / unit.length };
    re.lastIndex = m.index + Math.max(1, m[0].length);
  }
  return undefined;
}

/**
 * Cut an in-line loop: the line it is on goes, with everything after it (what follows a loop is
 * not what the model meant either); a loop on the first line leaves no suggestion.
 */
export function cutInlineLoop(text: string): { text: string; cut?: JunkCut } {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const loop = inlineLoopAt(lines[i]!);
    if (!loop) continue;
    const written = `${JSON.stringify(loop.unit)} written ${Math.floor(loop.copies)} times in a row in one line`;
    const note = `${written} (a decoding loop): the line is cut`;
    return cutTo(text, lines.slice(0, i).join('\n'), 'inlineRepeat', note);
  }
  return { text };
}

/** Longest block (in lines) whose repetition counts as a loop. */
const MAX_PERIOD = 8;

/** A line that says something: a loop of `}` or blank lines is not junk (closing nested blocks). */
function meaningful(key: string): boolean {
  return key.length > 3 && /[\p{L}\p{N}]/u.test(key);
}

/**
 * Cut a decoding loop: where a line or a block of up to MAX_PERIOD lines appears three times in a
 * row (compared without indentation; the third copy may be unfinished at the end of the text), only
 * its first copy is kept. The third copy proves the model is looping, and a loop begins at its first
 * repeat: two identical statements in a row are almost never what the code needs either.
 */
export function cutRepeatedLines(text: string): { text: string; cut?: JunkCut } {
  const lines = text.split('\n');
  const keys = lines.map((l) => l.trim());
  const n = lines.length;
  for (let i = 0; i < n; i++) {
    for (let k = 1; k <= MAX_PERIOD && i + 2 * k < n; k++) {
      const unit = keys.slice(i, i + k);
      if (!unit.some(meaningful)) continue;
      let same = true;
      for (let j = 0; j < k && same; j++) same = keys[i + k + j] === unit[j];
      if (!same) continue;
      // The third copy: whole, or cut short by the end of the text (its last line a prefix of the unit's).
      let third = true;
      for (let j = 0; j < k && third; j++) {
        const at = i + 2 * k + j;
        if (at >= n) break;
        const key = keys[at]!;
        third = at === n - 1 ? key !== '' && unit[j]!.startsWith(key) : key === unit[j];
      }
      if (!third) continue;
      const what = k === 1 ? 'a line' : `a block of ${k} lines`;
      const note = `${what} written ${countCopies(keys, i, k)} times in a row (a decoding loop): only its first copy is kept`;
      return cutTo(text, lines.slice(0, i + k).join('\n'), 'repeat', note);
    }
  }
  return { text };
}

/**
 * A loop with variations: a line that says something written a third time, each copy at most
 * MAX_PERIOD lines after the one before (`if d in sources:` / `if d in sources:` / `d in sources:` /
 * `if d in sources:`), which cutRepeatedLines misses because the copies are not in a row. As with a
 * loop in a row, what is kept ends before the first repeat.
 */
export function cutRecurringLine(text: string): { text: string; cut?: JunkCut } {
  const lines = text.split('\n');
  const seen = new Map<string, number[]>();
  for (let i = 0; i < lines.length; i++) {
    const key = lines[i]!.trim();
    if (!meaningful(key)) continue;
    const at = (seen.get(key) ?? []).filter((j) => i - j <= MAX_PERIOD * 2);
    at.push(i);
    seen.set(key, at);
    if (at.length < 3 || at[1]! - at[0]! > MAX_PERIOD || at[2]! - at[1]! > MAX_PERIOD) continue;
    // Nor a block opener left without its block (`if not b:` before the cut `return None`).
    let end = at[1]!;
    while (end > 0 && /[:{]$/.test(lines[end - 1]!.trim())) end--;
    const note = `a line written 3 times within ${at[2]! - at[0]! + 1} lines (a decoding loop with variations): cut at its first repeat`;
    return cutTo(text, lines.slice(0, end).join('\n'), 'repeat', note);
  }
  return { text };
}

/** Whole copies of keys[i, i+k) in a row from i on. */
function countCopies(keys: readonly string[], i: number, k: number): number {
  let copies = 1;
  for (let at = i + k; at + k <= keys.length; at += k) {
    let same = true;
    for (let j = 0; j < k && same; j++) same = keys[at + j] === keys[i + j];
    if (!same) break;
    copies++;
  }
  return copies;
}

/**
 * The redaction placeholder as a model copies it from a redacted prompt: `<redacted>` in any case,
 * with spaces inside the brackets, or HTML- or JSON-escaped (`&lt;redacted&gt;`, `\u003credacted\u003e`).
 */
export const PLACEHOLDER_FORMS = /<\s*redacted\s*>|&lt;\s*redacted\s*&gt;|\\u003c\s*redacted\s*\\u003e/i;

/** Where the placeholder (any form) starts in `text`, or -1. */
export function placeholderAt(text: string): number {
  return PLACEHOLDER_FORMS.exec(text)?.index ?? -1;
}

/** Whitespace runs as one space, trimmed. */
function squeeze(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Whether the suggestion only re-types what already follows the cursor (the closing `)` the editor
 * put there, or the next line as it already stands): accepting it would duplicate code. Compared
 * with whitespace runs as one space, from the first non-blank text after the cursor.
 */
export function repeatsRightContext(suggestion: string, suffix: string): boolean {
  const s = squeeze(suggestion);
  if (s === '') return false;
  const after = squeeze(suffix.slice(0, suggestion.length * 4 + 256));
  if (!after.startsWith(s)) return false;
  // The suggestion must end where a token of the text after it ends (`x` before `x_total` is not a repeat of it).
  const next = after[s.length];
  return next === undefined || !/[\p{L}\p{N}_$]/u.test(next) || !/[\p{L}\p{N}_$]$/u.test(s);
}

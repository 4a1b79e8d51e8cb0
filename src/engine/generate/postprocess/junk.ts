// Junk filters: what no suggestion may show, whatever the mode or the model —
// a decoding loop (a line or block written three times in a row), the redaction placeholder in any
// form the model copies it, and a suggestion that only re-types the text after the cursor.
// Pure; each returns what it removed, for the trace.

/** One rule's cut, as the trace shows it. */
export interface JunkCut {
  rule: 'repeat' | 'inlineRepeat' | 'nearRepeat' | 'placeholder' | 'rightContext' | 'specialToken' | 'promptHead';
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

/** Longest text the near-loop rule reads (a longer suggestion is judged by its head): it costs up to tokens² × units. */
const NEAR_MAX_CHARS = 1024;

/** Shortest text (from a loop's first copy to the end) that counts as a loop, as for cutInlineLoop. */
const NEAR_MIN_CHARS = 16;

/** Shortest unit (in tokens): a value written three times in a row is code (`None, None, None`, `Tuple[bytes, bytes, bytes]`). */
const NEAR_MIN_UNIT = 3;

/** Longest unit (in tokens) whose near copies count as a loop. */
const NEAR_MAX_UNIT = 8;

/**
 * Code tokens: a string literal (possibly unclosed), a name, a number, a two-character operator, any
 * other character. Offsets index into the text.
 */
const CODE_TOKEN = /"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|[\p{L}_$][\p{L}\p{N}_$]*|\p{N}[\p{L}\p{N}_.]*|->|=>|::|[=!<>]=|&&|\|\||\S/gu;

interface CodeToken {
  text: string;
  at: number;
  /** A name or literal (has a letter or digit): what a copy could vary. */
  value: boolean;
  /** Has a letter: a unit needs one to be a loop (`0, 0, 0` and `---` are code). */
  word: boolean;
}

function codeTokens(text: string): CodeToken[] {
  const out: CodeToken[] = [];
  const re = new RegExp(CODE_TOKEN.source, CODE_TOKEN.flags);
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const t = m[0];
    out.push({ text: t, at: m.index, value: /[\p{L}\p{N}]/u.test(t), word: /\p{L}/u.test(t) });
  }
  return out;
}

/** A loop with variations found by nearLoopAt: token indices of its first copy and first repeat. */
interface NearLoop {
  start: number;
  repeat: number;
  unit: string;
  copies: number;
}

/**
 * How far `copy` is from `unit` as bags of tokens (order aside): the larger of what either has that
 * the other lacks, so `int max = min ;` is a copy of `int min = max ;` and `int min = max + 1 ;`
 * differs by two.
 */
function bagDistance(ids: readonly number[], counts: Int32Array, unit: number, copy: number, len: number, copyLen: number): number {
  for (let j = unit; j < unit + len; j++) counts[ids[j]!]!++;
  let extra = 0;
  for (let j = copy; j < copy + copyLen; j++) {
    if (counts[ids[j]!]! > 0) counts[ids[j]!]!--;
    else extra++;
  }
  let missing = 0;
  for (let j = unit; j < unit + len; j++) {
    missing += counts[ids[j]!]!;
    counts[ids[j]!] = 0;
  }
  return Math.max(extra, missing);
}

/**
 * A loop with small variations, inside a line or across a few (`ModuleType.ModuleType.Type.ModuleType`,
 * `timezones() -> st.timezones() -> st.…`, `not None or not None or None or …`, `int min = max;`
 * written again with its names swapped or `+ 1` added). All of these hold:
 * - a unit of NEAR_MIN_UNIT to NEAR_MAX_UNIT tokens with a letter is followed by at least two copies
 *   in a row, each beginning with the unit's first token, one or two tokens longer or one shorter,
 *   and differing from the unit as bags of tokens by at most a third of its tokens (rounded up);
 * - at least half of the copies are the unit exactly;
 * - the copies run to the end of the text, save one more unfinished copy, and the last copy and what
 *   follows it add no token the copies before lacked;
 * - the copies name nothing the unit does not, save one new name or literal per three copies;
 * - nothing from the unit on closes a bracket opened before it.
 * Real code that repeats a unit names new things in it (`.add(a).add(b).add(c)`), goes on after it
 * (`dirname(dirname(dirname(__file__)))`, `getCause()` four times then `.getMessage()`), ends its
 * statement (`toString().toString().toString();`) or closes the list it is in
 * (`assert_join(self.fx.t, self.fx.t, self.fx.t)`); a loop runs to the token limit.
 */
function nearLoopAt(tokens: readonly CodeToken[]): NearLoop | undefined {
  const n = tokens.length;
  const end = n === 0 ? 0 : tokens[n - 1]!.at + tokens[n - 1]!.text.length;
  // A unit's word is written three times at least: most text has no such word and costs one pass.
  const seen = new Map<string, number>();
  let thrice = false;
  for (const t of tokens) if (t.word) thrice ||= seen.set(t.text, (seen.get(t.text) ?? 0) + 1).get(t.text)! >= 3;
  if (!thrice) return undefined;
  // Whether the text from token i on closes a bracket opened before it: then it ends the list or
  // call it is in (`assert_join(self.fx.t, self.fx.t, self.fx.t)`), which a runaway loop never does.
  const depth = [0];
  for (const t of tokens) depth.push(depth.at(-1)! + (/^[([{]$/.test(t.text) ? 1 : /^[)\]}]$/.test(t.text) ? -1 : 0));
  const lowest = [...depth];
  for (let j = n - 1; j >= 0; j--) lowest[j] = Math.min(depth[j]!, lowest[j + 1]!);
  const same = (a: number, b: number, len: number): boolean => {
    for (let j = 0; j < len; j++) if (tokens[a + j]!.text !== tokens[b + j]!.text) return false;
    return true;
  };
  // The text's last token may be a name of `names` cut short by the token limit: not a new one.
  const cutShort = (j: number, names: ReadonlySet<string>): boolean => j === n - 1 && [...names].some((u) => u.startsWith(tokens[j]!.text));
  // Tokens as numbers, and one table of counts for every comparison of bags.
  const idOf = new Map<string, number>();
  const ids = tokens.map((t) => idOf.get(t.text) ?? idOf.set(t.text, idOf.size).get(t.text)!);
  const counts = new Int32Array(idOf.size);
  for (let i = 0; i + 3 <= n; i++) {
    if (end - tokens[i]!.at < NEAR_MIN_CHARS) break;
    if (lowest[i]! < depth[i]!) continue;
    for (let len = NEAR_MIN_UNIT; len <= NEAR_MAX_UNIT && i + len * 2 < n; len++) {
      let word = false;
      for (let j = i; j < i + len; j++) word ||= tokens[j]!.word;
      if (!word) continue;
      const allowed = Math.ceil(len / 3);
      const anchor = tokens[i]!.text;
      const known = new Set<string>();
      for (let j = i; j < i + len; j++) if (tokens[j]!.value) known.add(tokens[j]!.text);
      const fresh = new Set<string>();
      const starts = [i];
      let exact = 0;
      let at = i + len;
      // Each copy begins as the unit does and ends where the next one begins, or where the text ends.
      while (at < n && tokens[at]!.text === anchor) {
        let best = -1;
        let bestScore = Infinity;
        for (const copyLen of [len, len + 1, len - 1, len + 2]) {
          if (copyLen < 1 || at + copyLen > n) continue;
          const d = bagDistance(ids, counts, i, at, len, copyLen);
          if (d > allowed) continue;
          const score = d + (at + copyLen === n || tokens[at + copyLen]!.text === anchor ? 0 : allowed + 1);
          if (score < bestScore) [best, bestScore] = [copyLen, score];
        }
        if (best < 0) break;
        if (best === len && same(i, at, len)) exact++;
        starts.push(at);
        for (let j = at; j < at + best; j++)
          if (tokens[j]!.value && !known.has(tokens[j]!.text) && !cutShort(j, known)) fresh.add(tokens[j]!.text);
        at += best;
        // Copies that keep naming new things are not a loop (and the walk stays short on real code).
        if (fresh.size > Math.floor(starts.length / 3) + 1) break;
      }
      // Most copies are the unit itself: a varied copy now and then.
      if (starts.length < 3 || exact * 2 < starts.length - 1 || n - at > len + 2) continue;
      // It ends as a loop does: its last copy and what follows only say again what the copies before
      // said (the last token perhaps cut short), not the end of a statement (`getCause()` four times,
      // then `.getMessage()`; `;`).
      const said = new Set<string>();
      for (let j = i; j < starts.at(-1)!; j++) said.add(tokens[j]!.text);
      const own = (t: CodeToken, j: number): boolean => said.has(t.text) || (t.word && cutShort(j, said));
      let ending = true;
      for (let j = starts.at(-1)!; j < n && ending; j++) ending = own(tokens[j]!, j);
      if (!ending) continue;
      if (fresh.size > Math.floor((starts.length - 1) / 3)) continue;
      const unit = tokens
        .slice(i, i + len)
        .map((t) => t.text)
        .join(' ');
      return { start: i, repeat: starts[1]!, unit, copies: starts.length };
    }
  }
  return undefined;
}

/**
 * Cut a loop with small variations (nearLoopAt): inside one line, that line goes with everything
 * after it, as cutInlineLoop does; across lines, what is kept ends before the line of its first
 * repeat, as cutRecurringLine does (without a block opener left dangling).
 */
export function cutNearLoop(text: string): { text: string; cut?: JunkCut } {
  const head = text.slice(0, NEAR_MAX_CHARS);
  const tokens = codeTokens(head);
  const loop = nearLoopAt(tokens);
  if (!loop) return { text };
  const lineOf = (offset: number): number => head.slice(0, offset).split('\n').length - 1;
  const first = lineOf(tokens[loop.start]!.at);
  const repeat = lineOf(tokens[loop.repeat]!.at);
  const lines = text.split('\n');
  let end = first === repeat ? first : repeat;
  if (first !== repeat) while (end > 0 && /[:{]$/.test(lines[end - 1]!.trim())) end--;
  const written = `${JSON.stringify(loop.unit)} written ${loop.copies} times with small variations to the end`;
  const where = first === repeat ? 'the line is cut' : 'cut at its first repeat';
  return cutTo(text, lines.slice(0, end).join('\n'), 'nearRepeat', `${written} (a decoding loop): ${where}`);
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

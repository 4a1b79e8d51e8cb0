// Postprocessing of a raw completion: cut to the scope at the cursor, balance brackets,
// drop what repeats the suffix or the lines before. Pure; each step a small named function.
import type { Lang } from '../../kb/types';
import { indentOf } from '../../util/codeText';
import { stripControlChars } from './controlChars';
import { cutAtMalformed } from './wellFormed';
import { REDACTED } from '../../prompt/secretRules';
import { PLACEHOLDER_FORMS, placeholderAt } from './junk';

interface CompletionContext {
  lang: Lang;
  /** Text before the cursor. */
  prefix: string;
  /** Text after the cursor. */
  suffix: string;
}

interface PostprocessOptions {
  /** Most lines a multi-line completion may have (default 12). */
  maxLines?: number;
  /** Most characters a completion may have (default 4,000); a longer one is cut at a line end where it has one. */
  maxChars?: number;
}

const DEFAULT_MAX_CHARS = 4000;

/** At most `maxChars` characters, cut after the last whole line that fits when there is one (never inside a surrogate pair). */
export function capLength(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.lastIndexOf('\n', maxChars);
  return cut > 0 ? text.slice(0, cut) : cutAtMalformed(text.slice(0, maxChars));
}

const OPEN = '([{';
const CLOSE = ')]}';

function lastLine(text: string): string {
  return text.slice(text.lastIndexOf('\n') + 1);
}

function firstLine(text: string): string {
  const i = text.indexOf('\n');
  return i < 0 ? text : text.slice(0, i);
}

/** The last non-blank line before the prefix's own last line (the cursor's). */
export function previousNonEmptyLine(prefix: string): string | undefined {
  const lines = prefix.split('\n');
  lines.pop();
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i] ?? '';
    if (l.trim() !== '') return l;
  }
  return undefined;
}

function opensBlock(lang: Lang, line: string): boolean {
  const t = line.trimEnd();
  return lang === 'python' ? t.endsWith(':') : t.endsWith('{');
}

/** Where the cursor is: mid-line (one line wanted) or at the start of a new block (several lines). */
export function completionMode(ctx: CompletionContext): 'singleLine' | 'block' {
  const before = lastLine(ctx.prefix);
  if (before.trim() !== '') return 'singleLine';
  const prev = previousNonEmptyLine(ctx.prefix);
  return prev !== undefined && opensBlock(ctx.lang, prev) && indentOf(before) > indentOf(prev) ? 'block' : 'singleLine';
}

/**
 * On an empty cursor line, a model that first ends the line (a newline, then the code on the next
 * line) means the code at the cursor: its leading blank lines go, and the indentation the cursor
 * already has is not typed twice (a shallower line loses its indentation: the cursor cannot move left).
 */
function skipLeadingBreak(completion: string, before: string): string {
  if (before.trim() !== '' || !/^[ \t]*\n/.test(completion)) return completion;
  const rest = completion.replace(/^([ \t]*\n)+/, '');
  if (rest.startsWith(before)) return rest.slice(before.length);
  return rest.replace(/^[ \t]+/, '');
}

/** Single line: up to the first line break (skipping leading blank lines on an empty cursor line). */
function trimToLine(completion: string, ctx: CompletionContext, maxLines = 12): string {
  const before = lastLine(ctx.prefix);
  if (argumentsFollow(completion, ctx)) return argumentsOnNextLines(completion, openOnLine(before), maxLines);
  return firstLine(skipLeadingBreak(completion, before));
}

/**
 * For a single-line cursor, whether more text could no longer change what the chain keeps: the
 * completion has ended a line after writing something on it, and it does not go on with the cursor
 * line's open bracket on the next lines (argumentsFollow). Undefined in block mode (several lines
 * are kept). The mode is worked out once, not at each token (it reads the lines above).
 */
export function lineSettled(ctx: CompletionContext): ((completion: string) => boolean) | undefined {
  if (completionMode(ctx) !== 'singleLine') return undefined;
  const before = lastLine(ctx.prefix);
  const takesArguments = opensArguments(ctx);
  return (completion) => !(takesArguments && breaksFirst(completion)) && endsLineWithText(skipLeadingBreak(completion, before));
}

/**
 * Whether some line of `text` has ended (a `\n` follows it) with something on it: /\S[^\n]*\n/ in
 * linear time (that pattern costs O(n^2) on a long answer without a line break, at every streamed part).
 */
function endsLineWithText(text: string): boolean {
  for (let start = 0, nl = text.indexOf('\n'); nl >= 0; start = nl + 1, nl = text.indexOf('\n', start))
    if (text.slice(start, nl).trim() !== '') return true;
  return false;
}

/** Whether the cursor line's innermost open bracket takes arguments or items (Java's `{` opens a block). */
function opensArguments(ctx: CompletionContext): boolean {
  const before = lastLine(ctx.prefix);
  if (before.trim() === '') return false;
  const inner = openOnLine(before).at(-1);
  return inner === '(' || inner === '[' || (inner === '{' && ctx.lang === 'python');
}

function breaksFirst(completion: string): boolean {
  return /^[ \t]*\n/.test(completion);
}

/** Whether the completion breaks a cursor line whose innermost open bracket takes arguments or items. */
function argumentsFollow(completion: string, ctx: CompletionContext): boolean {
  return breaksFirst(completion) && opensArguments(ctx);
}

/**
 * After an open bracket at the end of the cursor line, a model that breaks the line first writes
 * the arguments (or items) on the next lines: they are the completion, through the line where the
 * cursor line's brackets close, when that is within `maxLines` lines; else nothing.
 */
function argumentsOnNextLines(completion: string, open: readonly string[], maxLines: number): string {
  const text = completion.replace(/^[ \t]+\n/, '\n');
  const stack = [...open];
  let quote = '';
  let lines = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] ?? '';
    if (ch === '\n') {
      quote = '';
      if (++lines > maxLines) return '';
      continue;
    }
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (OPEN.includes(ch)) stack.push(ch);
    else if (CLOSE.includes(ch)) {
      const top = stack.pop();
      if (top === undefined || OPEN.indexOf(top) !== CLOSE.indexOf(ch)) return '';
      if (stack.length === 0) {
        const end = text.indexOf('\n', i);
        return (end < 0 ? text : text.slice(0, end)).trimEnd();
      }
    }
  }
  return '';
}

/** Block: lines while they stay inside the block's indentation (and, in Java, its braces). */
function trimToBlock(completion: string, ctx: CompletionContext, maxLines: number): string {
  const before = lastLine(ctx.prefix);
  const base = indentOf(before);
  const lines = skipLeadingBreak(completion, before)
    .replace(/^(\s*\n)+/, '')
    .split('\n');
  const kept: string[] = [];
  let depth = 0;
  for (let i = 0; i < lines.length && kept.length < maxLines; i++) {
    const line = lines[i] ?? '';
    // The first line continues the cursor line, so its own indentation adds to the cursor's.
    const indent = i === 0 ? base + indentOf(line) : indentOf(line);
    if (line.trim() !== '' && indent < base) break;
    if (ctx.lang === 'java') {
      let cut = -1;
      for (let j = 0; j < line.length; j++) {
        const ch = line[j] ?? '';
        if (ch === '{') depth++;
        else if (ch === '}') {
          depth--;
          if (depth < 0) {
            cut = j;
            break;
          }
        }
      }
      if (cut >= 0) {
        if (line.slice(0, cut).trim() !== '') kept.push(line.slice(0, cut).trimEnd());
        break;
      }
    }
    kept.push(line);
  }
  while (kept.length > 0 && (kept[kept.length - 1] ?? '').trim() === '') kept.pop();
  return kept.join('\n');
}

/** Brackets still open on the cursor line before the cursor (outside strings, roughly). */
function openOnLine(before: string): string[] {
  const stack: string[] = [];
  let quote = '';
  for (const ch of before) {
    if (quote) {
      if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (OPEN.includes(ch)) stack.push(ch);
    else if (CLOSE.includes(ch)) stack.pop();
  }
  return stack;
}

/**
 * A single-line completion may close only what the cursor line opened, and must not re-type
 * closers the suffix already holds (an editor's auto-closed brackets).
 */
function balanceBrackets(line: string, ctx: CompletionContext): string {
  const stack = openOnLine(lastLine(ctx.prefix));
  let quote = '';
  let end = line.length;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i] ?? '';
    if (quote) {
      if (ch === quote) quote = '';
      continue;
    }
    if (ch === '"' || ch === "'") quote = ch;
    else if (OPEN.includes(ch)) stack.push(ch);
    else if (CLOSE.includes(ch)) {
      const open = stack.pop();
      if (open === undefined || OPEN.indexOf(open) !== CLOSE.indexOf(ch)) {
        end = i;
        break;
      }
    }
  }
  let out = line.slice(0, end);
  // Closers the suffix already has on this line are not typed twice.
  const suffixLine = firstLine(ctx.suffix).trim();
  const lead = /^[)\]}]+/.exec(suffixLine)?.[0] ?? '';
  if (lead && out.trimEnd().endsWith(lead)) out = out.trimEnd().slice(0, -lead.length);
  return out;
}

/** Drop the tail of a completion that repeats what already follows the cursor. */
function dropSuffixRepeat(completion: string, ctx: CompletionContext): string {
  const restOfLine = firstLine(ctx.suffix);
  let out = completion;
  if (restOfLine.trim() !== '' && !out.includes('\n')) {
    // Longest overlap between the completion's end and the rest of the line.
    for (let k = Math.min(restOfLine.length, out.length); k > 0; k--) {
      if (out.endsWith(restOfLine.slice(0, k)) && restOfLine.slice(0, k).trim() !== '') {
        out = out.slice(0, out.length - k);
        break;
      }
    }
  }
  const nextLine = ctx.suffix
    .split('\n')
    .slice(restOfLine.trim() === '' ? 1 : 0)
    .find((l) => l.trim() !== '')
    ?.trim();
  if (nextLine && nextLine.length > 2) {
    const lines = out.split('\n');
    const at = lines.findIndex((l, i) => i > 0 && l.trim() === nextLine);
    if (at > 0) out = lines.slice(0, at).join('\n');
  }
  return out;
}

/** Stop where the model starts repeating the line before the cursor (a loop of its own: junk.ts cutRepeatedLines). */
function stopAtRepeatingLines(completion: string, ctx: CompletionContext): string {
  const previous = previousNonEmptyLine(ctx.prefix + '\n')?.trim();
  const lines = completion.split('\n');
  const kept: string[] = [];
  for (const line of lines) {
    const t = line.trim();
    if (t.length > 3 && t === previous && kept.length > 0) break;
    kept.push(line);
  }
  return kept.join('\n');
}

/**
 * A suggestion never shows the redaction placeholder (the model copies it from a redacted prompt),
 * in any of the forms it copies it (junk.ts PLACEHOLDER_FORMS): it is cut before it, with the quote
 * that opens it and the name, key or keyword it is bound to (`lineno="<redacted>")` leaves nothing);
 * on a later line of the suggestion, that whole line goes.
 */
export function cutAtPlaceholder(text: string): string {
  const at = placeholderAt(text);
  if (at < 0) return text;
  // On a line after the first, the statement that holds it goes whole (`String key = "<redacted>";` would leave `String`).
  const lineStart = text.lastIndexOf('\n', at);
  if (lineStart >= 0) return text.slice(0, lineStart).trimEnd();
  return text
    .slice(0, at)
    .replace(/(?:(?<!\w)[rRbBuUfF]{1,2})?["'`]$/, '')
    .replace(/(?:[A-Za-z_][\w.-]*(?:\[[^\]\n]*\])*|["'][^"'\n]*["'])\s*(?::\s*[\w.[\], |]+?\s*=|:=|=>|=|:)\s*$/, '')
    .replace(/[ \t]+$/, '');
}

/** What the trace says when the model wrote the redaction placeholder (undefined when it did not). */
export function placeholderNote(raw: string): string | undefined {
  const written = PLACEHOLDER_FORMS.exec(raw)?.[0];
  return written !== undefined ? `the model wrote the redaction placeholder ${written}: the suggestion was cut before it` : undefined;
}

/** The chain's steps in order, each named by what it removes when it leaves nothing. */
function steps(
  ctx: CompletionContext,
  options: PostprocessOptions,
): Array<{ why: string | ((input: string) => string); run: (text: string) => string }> {
  const maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  const line = completionMode(ctx) === 'singleLine';
  return [
    { why: 'only control characters or whitespace', run: (t) => stripControlChars(t.length > 4 * maxChars ? t.slice(0, 4 * maxChars) : t) },
    { why: 'it began with a character the model did not finish (U+FFFD or half a surrogate pair)', run: (t) => cutAtMalformed(t) },
    { why: `it began with the redaction placeholder ${REDACTED} (a value the prompt did not show)`, run: cutAtPlaceholder },
    ...(line
      ? [
          {
            why: (t: string) =>
              argumentsFollow(t, ctx)
                ? `the lines it wrote after the open bracket did not close it within ${options.maxLines ?? 12} lines`
                : 'its first line was empty (the model ended the line at the cursor)',
            run: (t: string) => trimToLine(t, ctx, options.maxLines ?? 12),
          },
          { why: 'it only closed brackets the cursor line did not open', run: (t: string) => balanceBrackets(t, ctx) },
        ]
      : [{ why: 'its lines fell outside the block at the cursor', run: (t: string) => trimToBlock(t, ctx, options.maxLines ?? 12) }]),
    { why: 'it repeated the line before the cursor', run: (t) => stopAtRepeatingLines(t, ctx) },
    { why: 'it repeated the text after the cursor', run: (t) => dropSuffixRepeat(t, ctx) },
    { why: 'only whitespace was left', run: (t) => capLength(t, maxChars).trimEnd() },
  ];
}

/** The whole chain; returns '' when nothing worth showing is left. */
export function postprocessCompletion(raw: string, ctx: CompletionContext, options: PostprocessOptions = {}): string {
  let out = raw;
  for (const step of steps(ctx, options)) out = step.run(out);
  return out.trim() === '' ? '' : out;
}

/** Why the chain leaves nothing of `raw` (the first step after which nothing is left); undefined when it leaves something. */
export function postprocessEmptyReason(raw: string, ctx: CompletionContext, options: PostprocessOptions = {}): string | undefined {
  if (raw.trim() === '') return 'the model wrote nothing';
  let out = raw;
  for (const step of steps(ctx, options)) {
    const input = out;
    out = step.run(out);
    if (out.trim() === '') return typeof step.why === 'string' ? step.why : step.why(input);
  }
  return undefined;
}

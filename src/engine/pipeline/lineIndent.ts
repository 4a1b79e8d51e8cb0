// Line mode on an empty line: the indentation the cursor still lacks. A prompt that ends at
// column 0 inside a block sends a small model off closing the block (`}`) or writing nothing; with
// the line's indentation in the prompt it writes the statement, and the suggestion carries the
// indentation the user would otherwise type.
import { bodyIndentOf } from '../body/cutBody';
import { previousNonEmptyLine } from '../generate/postprocess/postprocess';

/** Text of a line with a trailing `//` or `#` comment removed (only where no quote precedes it). */
function codeOf(line: string): string {
  // A scan, not a lazy regular expression: that one cost O(n^2) on a long run of spaces.
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'" || c === '"' || c === '`') break;
    if (c === '#' || (c === '/' && line[i + 1] === '/')) return line.slice(0, i).trimEnd();
  }
  return line.trimEnd();
}

/** Nothing but whitespace on the cursor's line, before and after it. */
export function cursorLineBlank(prefix: string, suffix: string): boolean {
  const eol = suffix.indexOf('\n');
  return prefix.slice(prefix.lastIndexOf('\n') + 1).trim() === '' && (eol < 0 ? suffix : suffix.slice(0, eol)).trim() === '';
}

/**
 * The whitespace to add before the cursor when it sits on an empty line (nothing but indentation
 * before it, nothing after it on the line) below code: the previous non-blank line's indentation,
 * one level deeper (in the file's own unit) when that line opens a block with `{` or `:`. '' when
 * the line has text, the cursor is already as deep or deeper, or nothing precedes it.
 */
export function missingLineIndent(prefix: string, suffix: string): string {
  const lineStart = prefix.lastIndexOf('\n') + 1;
  if (lineStart === 0 || !cursorLineBlank(prefix, suffix)) return '';
  const before = prefix.slice(lineStart);
  const prev = previousNonEmptyLine(prefix);
  if (prev === undefined) return '';
  const indent = prev.match(/^[ \t]*/)?.[0] ?? '';
  const expected = /[{:]$/.test(codeOf(prev)) ? bodyIndentOf(prefix.slice(0, lineStart), indent) : indent;
  return expected.length > before.length && expected.startsWith(before) ? expected.slice(before.length) : '';
}

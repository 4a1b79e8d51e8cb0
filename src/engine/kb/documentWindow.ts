// An open document gets the limits a file on disk has before anything parses it: the scan's byte
// limit, and caps on lines and line length. Over them, a completion sees only a window around the
// cursor. Every stage that parses (body detection, dataflow, checks) then parses a few KB, never a
// 25 MB line (tree-sitter's WebAssembly memory grows past 2 GB and aborts, for good) or a
// million-line document (seconds per keystroke).
import { Buffer } from 'node:buffer';
import { ownString } from '../util/ownString';

export interface DocumentLimits {
  /** UTF-8 bytes a document may have and still be taken whole (the scan's maxFileBytes). */
  maxBytes: number;
  /** Lines a document may have and still be taken whole. */
  maxLines?: number;
  /** Characters one line may have and the document still be taken whole (minified or data lines). */
  maxLineChars?: number;
}

const DEFAULT_MAX_DOCUMENT_LINES = 30_000;
const DEFAULT_MAX_LINE_CHARS = 10_000;
/** The window over a document past its limits: this much before the cursor and after it. */
export const WINDOW_BEFORE_CHARS = 16 * 1024;
export const WINDOW_AFTER_CHARS = 4 * 1024;

interface DocumentView {
  prefix: string;
  suffix: string;
  /** Set when the document was over a limit and only a window is given: which limit, in words. */
  windowed?: string;
}

/** Why `text` is over the limits, or undefined when it is within them. Stops at the first excess. */
export function overLimits(text: string, limits: DocumentLimits): string | undefined {
  // Each UTF-16 unit is at least one UTF-8 byte: too many characters settles it without a copy.
  if (text.length > limits.maxBytes)
    return `${text.length.toLocaleString('en-US')} characters > ${limits.maxBytes.toLocaleString('en-US')} bytes`;
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes) return `${bytes.toLocaleString('en-US')} bytes > ${limits.maxBytes.toLocaleString('en-US')}`;
  const maxLines = limits.maxLines ?? DEFAULT_MAX_DOCUMENT_LINES;
  const maxLineChars = limits.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  let lines = 1;
  let start = 0;
  for (;;) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    if (end - start > maxLineChars)
      return `a line of ${(end - start).toLocaleString('en-US')} characters > ${maxLineChars.toLocaleString('en-US')}`;
    if (nl < 0) return undefined;
    if (++lines > maxLines) return `more than ${maxLines.toLocaleString('en-US')} lines`;
    start = nl + 1;
  }
}

/**
 * The offset of an LSP position (0-based line, UTF-16 column) in `text`, clamped to its line, by
 * searching for line breaks: for a document past the limits this is what a TextDocument's
 * offsetAt would cost once per version (a loop over every character: 236 ms for a 25 MB line).
 * Line breaks are \n, \r\n and a lone \r, as in LSP.
 */
export function offsetOfPosition(text: string, position: { line: number; character: number }): number {
  let start = 0;
  // The next \r is searched again only once passed: most documents have none, and a search per
  // line would scan the rest of the document each time.
  let cr = text.indexOf('\r');
  for (let line = 0; line < position.line; line++) {
    const lf = text.indexOf('\n', start);
    if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
    if (lf < 0 && cr < 0) return text.length;
    // A \r before the \n ends its own line unless it is the \r of a \r\n.
    start = cr >= 0 && (lf < 0 || cr < lf - 1) ? cr + 1 : lf + 1;
  }
  const lf = text.indexOf('\n', start);
  if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
  const end = Math.min(lf < 0 ? text.length : lf, cr < 0 ? text.length : cr);
  return Math.min(start + Math.max(0, position.character), end);
}

/**
 * The text before and after `offset` that a completion works on: all of it when the document is
 * within the limits, else whole lines around the cursor (about WINDOW_BEFORE_CHARS before,
 * WINDOW_AFTER_CHARS after; the cursor's own line is cut only where it alone is longer).
 */
export function documentAround(text: string, offset: number, limits: DocumentLimits): DocumentView {
  const over = overLimits(text, limits);
  if (!over) return { prefix: text.slice(0, offset), suffix: text.slice(offset) };
  // Line breaks are searched inside the window only: on a 25 MB line a search past it scans megabytes.
  let from = Math.max(0, offset - WINDOW_BEFORE_CHARS);
  if (from > 0) {
    const lineStart = text.slice(from, offset).indexOf('\n');
    if (lineStart >= 0) from += lineStart + 1;
  }
  let to = Math.min(text.length, offset + WINDOW_AFTER_CHARS);
  if (to < text.length) {
    const lineEnd = text.slice(offset, to).lastIndexOf('\n');
    if (lineEnd >= 0) to = offset + lineEnd + 1;
  }
  // Flat copies: a slice would keep the whole document alive for as long as the request's strings live.
  return { prefix: ownString(text.slice(from, offset)), suffix: ownString(text.slice(offset, to)), windowed: over };
}

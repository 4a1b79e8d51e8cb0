// A document's text as the engine reads it, made in one place for every client (the language
// server and the CLI): line breaks as LF whatever the file uses, and a cursor offset that stays on
// a character boundary. Suggestions go back with the document's own line break. Pure.

/**
 * Text as the engine reads it: every CRLF and lone CR as LF. Repository files are read through it
 * (knowledge base, code windows, the file completed), so a CRLF checkout indexes and completes
 * exactly as an LF one.
 */
export function lfText(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** The line break a document uses. */
export type LineBreak = '\n' | '\r\n' | '\r';

interface EngineText {
  /** The text with every CRLF and lone CR as LF. */
  text: string;
  /** The cursor's offset in `text` (the same place as in the document). */
  offset: number;
  /** The document's line break (its first one; LF when it has none). */
  lineBreak: LineBreak;
}

const HIGH = /[\uD800-\uDBFF]/;
const LOW = /[\uDC00-\uDFFF]/;

/**
 * `offset` as an index into `text` that never splits a character: clamped into [0, length], an
 * integer, and moved back before a surrogate pair it would land inside.
 */
export function clampToCharBoundary(text: string, offset: number): number {
  let at = Number.isFinite(offset) ? Math.max(0, Math.min(text.length, Math.floor(offset))) : offset > 0 ? text.length : 0;
  if (at > 0 && at < text.length && HIGH.test(text[at - 1] ?? '') && LOW.test(text[at] ?? '')) at--;
  return at;
}

/** The document's line break: its first one (editors keep one per document), LF when it has none. */
export function lineBreakOf(text: string): LineBreak {
  const m = /\r\n?|\n/.exec(text);
  return (m?.[0] as LineBreak | undefined) ?? '\n';
}

/**
 * The engine's view of a document and a cursor in it (`offset` into the document's own text):
 * line breaks as LF, the cursor at the same place (inside a CRLF it goes before the break) and
 * never inside a surrogate pair.
 */
export function engineText(documentText: string, offset: number): EngineText {
  const at = clampToCharBoundary(documentText, offset);
  const lineBreak = lineBreakOf(documentText);
  if (!documentText.includes('\r')) return { text: documentText, offset: at, lineBreak };
  const before = documentText.slice(0, at);
  const insideCrlf = before.endsWith('\r') && documentText[at] === '\n';
  const prefix = lfText(insideCrlf ? before.slice(0, -1) : before);
  const rest = lfText(insideCrlf ? documentText.slice(at - 1) : documentText.slice(at));
  return { text: prefix + rest, offset: prefix.length, lineBreak };
}

/** Engine text (LF line breaks) as the document writes it: each LF as `lineBreak`. */
export function withLineBreak(text: string, lineBreak: LineBreak): string {
  return lineBreak === '\n' ? text : text.replace(/\r?\n/g, lineBreak);
}

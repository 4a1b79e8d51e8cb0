// The one place an LSP position becomes a place in a document: UTF-16 offsets as the protocol
// counts them, clamped into the document and off the inside of a surrogate pair; the limits a file
// on disk has (past them, a window around the cursor: engine/kb/documentWindow); and the engine's
// LF-only view of the text around it (engine/util/documentText).
import type { Position } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { documentAround, offsetOfPosition, type DocumentLimits } from '../engine/kb/documentWindow';
import { clampToCharBoundary, engineText, lineBreakOf, type LineBreak } from '../engine/util/documentText';

interface DocumentCursor {
  /** The text before and after the cursor as the engine reads it (LF line breaks; a window past the limits). */
  prefix: string;
  suffix: string;
  /** The document's own line break: a suggestion goes back with it. */
  lineBreak: LineBreak;
  /** Where the cursor is after clamping (a suggestion's range starts here). */
  position: Position;
  /** Set when the document is over the limits and only a window around the cursor is used: which limit, in words. */
  windowed?: string;
}

/** A line or character the client sent, as a whole number at least 0 (anything else reads as 0). */
function whole(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** The document's text around the cursor at `position`, as the engine reads it. */
export function cursorAt(doc: TextDocument, position: Position, limits: DocumentLimits): DocumentCursor {
  const text = doc.getText();
  const asked = { line: whole(position?.line), character: whole(position?.character) };
  // Past the byte limit the offset is found by searching line breaks, not by the document's line
  // table (building it costs 236 ms for a 25 MB line).
  const big = text.length > limits.maxBytes;
  const offset = clampToCharBoundary(text, big ? offsetOfPosition(text, asked) : doc.offsetAt(asked));
  const view = documentAround(text, offset, limits);
  const engine = engineText(view.prefix + view.suffix, view.prefix.length);
  return {
    prefix: engine.text.slice(0, engine.offset),
    suffix: engine.text.slice(engine.offset),
    lineBreak: lineBreakOf(text),
    position: big ? positionNear(text, offset, asked.line) : doc.positionAt(offset),
    ...(view.windowed ? { windowed: view.windowed } : {}),
  };
}

/** The position of `offset` on line `line` (as offsetOfPosition clamped it), without a line table. */
function positionNear(text: string, offset: number, line: number): Position {
  const lineStart = Math.max(text.lastIndexOf('\n', offset - 1), text.lastIndexOf('\r', offset - 1)) + 1;
  return { line, character: offset - lineStart };
}

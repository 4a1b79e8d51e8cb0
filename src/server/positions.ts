// The one place an LSP position becomes a place in a document: UTF-16 offsets as the protocol
// counts them, clamped into the document and off the inside of a surrogate pair, and the engine's
// LF-only view of the text around it (engine/util/documentText).
import type { Position } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import { clampToCharBoundary, engineText, type EngineText } from '../engine/util/documentText';

export interface DocumentCursor extends EngineText {
  /** Where the cursor is after clamping (a suggestion's range starts here). */
  position: Position;
}

/** A line or character the client sent, as a whole number at least 0 (anything else reads as 0). */
function whole(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

/** The document's text and the cursor at `position`, as the engine reads them. */
export function cursorAt(doc: TextDocument, position: Position): DocumentCursor {
  const text = doc.getText();
  const offset = clampToCharBoundary(text, doc.offsetAt({ line: whole(position?.line), character: whole(position?.character) }));
  return { ...engineText(text, offset), position: doc.positionAt(offset) };
}

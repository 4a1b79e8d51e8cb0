// What became of a shown suggestion (the reward ProCC's bandit and the show gate learn from): the text typed or
// accepted at the suggestion's place is followed edit by edit; the suggestion ends as accepted
// (all of it is in the document), partly accepted (a prefix of it) or rejected (none of it) when
// the document diverges from it, the cursor leaves it, another suggestion is shown, or it is
// accepted. Plain logic over offsets and edits (no VS Code API), so it is tested without an editor.

/** What the editor inserts when an opening bracket or quote is typed (the cursor stays between). */
const AUTO_CLOSED = new Set(['()', '[]', '{}', '""', "''", '``']);

type SuggestionOutcome = 'accepted' | 'partial' | 'rejected';

export interface OutcomeReport {
  traceId: string;
  outcome: SuggestionOutcome;
  /** Characters of the suggestion that ended in the document (typed through or accepted). */
  acceptedChars: number;
  shownChars: number;
}

/** One edit of a document, in offsets of the text before it (VS Code's contentChanges). */
interface TextEdit {
  rangeOffset: number;
  rangeLength: number;
  text: string;
}

interface Pending {
  traceId: string;
  uri: string;
  /** Offset of the suggestion's start (the cursor when it was first shown). */
  start: number;
  text: string;
  /** What was inserted at `start` since (a prefix of `text` while the suggestion stands). */
  typed: string;
}

export class OutcomeTracker {
  private pending: Pending | undefined;

  /** `report` receives each suggestion's outcome exactly once. */
  constructor(private readonly report: (r: OutcomeReport) => void) {}

  /**
   * A suggestion the provider returned. The same trace again (typing through a suggestion served
   * from the cache) keeps following the first one; another one ends the pending suggestion first.
   */
  shown(traceId: string, uri: string, offset: number, text: string): void {
    const p = this.pending;
    if (p && p.traceId === traceId && p.uri === uri) {
      // Typing through: the cache only answers when the typed text is a prefix of the suggestion.
      if (offset === p.start + p.typed.length) return;
    }
    if (p) this.finish();
    if (!text) return;
    this.pending = { traceId, uri, start: offset, text, typed: '' };
  }

  /** The accept command of a suggestion ran (Tab): the rest of it is in the document. */
  accepted(traceId: string): void {
    const p = this.pending;
    if (!p || p.traceId !== traceId) return;
    p.typed = p.text;
    this.finish();
  }

  /** Edits of a document, in the order VS Code reports them. */
  edited(uri: string, edits: readonly TextEdit[]): void {
    const p = this.pending;
    if (!p || p.uri !== uri) return;
    for (const e of edits) {
      const end = p.start + p.typed.length;
      const to = e.rangeOffset + e.rangeLength;
      if (to <= p.start && !(e.rangeOffset === p.start && e.rangeLength === 0 && p.typed.length === 0)) {
        if (e.rangeOffset === p.start && e.rangeLength === 0) {
          // Inserted in front of the typed text: the suggestion no longer stands.
          this.finish();
          return;
        }
        // Before the suggestion: it moves.
        p.start += e.text.length - e.rangeLength;
        continue;
      }
      if (e.rangeOffset > end) continue; // after the cursor: irrelevant
      if (e.rangeOffset === end) {
        // Typed (or accepted) at the cursor; with a range, over the next characters (an auto-closed bracket).
        // Deleting forward (no text) leaves the suggestion as it is.
        if (e.text.length === 0) continue;
        // An auto-closed pair puts its closer after the cursor: only the opener was typed.
        p.typed += e.rangeLength === 0 && AUTO_CLOSED.has(e.text) ? e.text[0]! : e.text;
      } else if (e.rangeOffset >= p.start && to <= end) {
        // Inside the typed text: backspace, or a replacement (an accept that rewrites the typed prefix).
        const rel = e.rangeOffset - p.start;
        p.typed = p.typed.slice(0, rel) + e.text + p.typed.slice(rel + e.rangeLength);
      } else {
        // Across the suggestion's start or end.
        this.finish();
        return;
      }
      if (!p.text.startsWith(p.typed) || p.typed === p.text) {
        this.finish();
        return;
      }
    }
  }

  /** The cursor of `uri` is at `offset` (no selection): elsewhere than the suggestion's end, it ends it. */
  cursorAt(uri: string, offset: number): void {
    const p = this.pending;
    if (!p || p.uri !== uri) return;
    if (offset !== p.start + p.typed.length) this.finish();
  }

  /** The document closed or the editor changed: the pending suggestion ends. */
  left(uri?: string): void {
    if (this.pending && (uri === undefined || this.pending.uri === uri)) this.finish();
  }

  /** End the pending suggestion now (shutdown, learning turned off). */
  flush(): void {
    if (this.pending) this.finish();
  }

  private finish(): void {
    const p = this.pending;
    this.pending = undefined;
    if (!p) return;
    let n = 0;
    while (n < p.typed.length && n < p.text.length && p.typed[n] === p.text[n]) n++;
    const outcome: SuggestionOutcome = n >= p.text.length ? 'accepted' : n > 0 ? 'partial' : 'rejected';
    this.report({ traceId: p.traceId, outcome, acceptedChars: n, shownChars: p.text.length });
  }
}

/** The tracker's report function: each outcome is sent only while learning is enabled in the workspace. */
export function outcomeSender(learningEnabled: () => boolean, send: (r: OutcomeReport) => void): (r: OutcomeReport) => void {
  return (r) => {
    if (learningEnabled()) send(r);
  };
}

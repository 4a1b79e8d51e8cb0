// What the prompt keeps from one keystroke to the next at one place of work (docs/ARCHITECTURE.md
// "Final prompt"): model servers reuse the longest common prefix of consecutive prompts, so the
// repository block and the left edge of the code stay put while the user types in one place.
import type { PlaceLayout } from './fitPromptBudget';

interface Place {
  filePath: string;
  /** The cursor line of the last request here. */
  line: number;
  layout: PlaceLayout;
  kept: PlaceKept;
}

/** What a mode keeps at a place besides the prompt's layout. */
export interface PlaceKept {
  /**
   * The body mode's sketch of the method drafted at this place (`key`: the method's class and
   * signature): the user types the body it sketched, so it is not drafted again at every keystroke.
   */
  sketch?: { key: string; text: string };
  /**
   * The names in sight when the place started (renderKnowledge.namesInSight): a snippet is rendered
   * the same at every keystroke here, so the block's text stays what the server has read.
   */
  inSight?: ReadonlySet<string>;
}

/** The line prompt and the body prompt lay out their places apart: their blocks hold different renderings. */
export type PlaceKind = 'line' | 'body';

/**
 * A cursor within this many lines of the last request's line in the same file is at the same place
 * (typing a function body moves the cursor down a line at a time; a jump elsewhere starts anew).
 */
export const PLACE_LINES = 40;

/** Places remembered, the last one of each file and kind (switching between a few files returns to their blocks). */
const KEPT_FILES = 8;

export class PromptMemory {
  private readonly places = new Map<string, Place>();
  private versions = 0;

  /**
   * The layout of the place at `line` of `filePath`: the remembered one when the cursor is still
   * there, else a new empty one (`fresh`).
   */
  placeAt(filePath: string, line: number, kind: PlaceKind = 'line'): { layout: PlaceLayout; fresh: boolean; kept: PlaceKept } {
    const at = `${kind}:${filePath}`;
    const known = this.places.get(at);
    this.places.delete(at);
    if (known && Math.abs(known.line - line) <= PLACE_LINES) {
      known.line = line;
      this.places.set(at, known);
      return { layout: known.layout, fresh: false, kept: known.kept };
    }
    const place: Place = { filePath, line, layout: { block: [], keys: [], version: ++this.versions }, kept: {} };
    this.places.set(at, place);
    while (this.places.size > KEPT_FILES) this.places.delete(this.places.keys().next().value!);
    return { layout: place.layout, fresh: true, kept: place.kept };
  }
}

/** The cursor's 0-based line number: the lines before it in `prefix`. */
export function cursorLine(prefix: string): number {
  let n = 0;
  for (let i = prefix.indexOf('\n'); i >= 0; i = prefix.indexOf('\n', i + 1)) n++;
  return n;
}

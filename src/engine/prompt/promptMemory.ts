// What the prompt keeps from one keystroke to the next at one place of work, and the repository
// block a workspace's places share (docs/ARCHITECTURE.md "Final prompt"): model servers reuse the
// longest common prefix of consecutive prompts, so the block and the left edge of the code stay put
// while the user types in one place, and a new place reads only its own code.
import { idleHead, type PlaceLayout, type PromptSnippet } from './fitPromptBudget';
import { SharedBlock } from './sharedBlock';

interface Place {
  kind: PlaceKind;
  filePath: string;
  /** The cursor line of the last request here. */
  line: number;
  /** The prompt's layout as the last prompt here left it (fitPromptBudget returns each new one). */
  layout: PlaceLayout;
  /** What each owner keeps here besides the layout, by its own key. */
  owned: Map<PlaceKey<unknown>, { value?: unknown }>;
}

/**
 * A key to what one stage keeps at a place besides the prompt's layout (the reranker's choice, the
 * names in sight, the body mode's sketch): the module that makes the key is the only one that can
 * read or write the value.
 */
export interface PlaceKey<T> {
  readonly name: string;
  /** Phantom: the value's type. */
  readonly type?: T;
}

export function placeKey<T>(name: string): PlaceKey<T> {
  return { name };
}

/** One place of work as a request finds it: its layout, whether it is new, and what each owner keeps there. */
export interface PlaceOfWork {
  readonly layout: Readonly<PlaceLayout>;
  readonly fresh: boolean;
  /** The layout the place's prompt was laid out to now (fitPromptBudget's): the next prompt here starts from it. */
  keep(layout: PlaceLayout): void;
  /** The value `key`'s owner keeps here. */
  own<T>(key: PlaceKey<T>): { value?: T };
}

/** The line prompt and the body prompt lay out their places apart: their blocks hold different renderings. */
type PlaceKind = 'line' | 'body';

/**
 * A cursor within this many lines of the last request's line in the same file is at the same place
 * (typing a function body moves the cursor down a line at a time; a jump elsewhere starts anew).
 */
const PLACE_LINES = 40;

/** Places remembered, the most recent ones (going back to a function or file visited before finds its layout). */
const KEPT_PLACES = 16;

/** A block whose room differs from the one wanted by more than this share is laid out anew (a new reading of the server's speed). */
const CAP_TOLERANCE = 0.25;

export class PromptMemory {
  /** The places remembered, the most recent last. */
  private readonly places: Place[] = [];
  private readonly blocks = new Map<string, SharedBlock<PromptSnippet>>();
  private versions = 0;
  private last: Place | undefined;

  /**
   * The workspace's shared block for `key` (the model and the block's form): the one it has where it
   * was laid out for `budgetTokens` with at least about `cap` tokens of room (a roomier one leaves a
   * place less local code, which a fast server reads anyway), else a new one of `newCap` tokens
   * (`cap` where not given), which replaces it.
   */
  sharedBlock(key: string, cap: number, budgetTokens: number, newCap = cap): SharedBlock<PromptSnippet> {
    const known = this.blocks.get(key);
    if (known && known.budgetTokens === budgetTokens && known.cap >= (1 - CAP_TOLERANCE) * cap) return known;
    const block = new SharedBlock<PromptSnippet>(Math.max(cap, newCap), budgetTokens);
    this.blocks.set(key, block);
    return block;
  }

  /**
   * What a pause can do at the place the user was last at: the prompt there with the items its
   * ranking wants in the shared block, for the server to read (undefined: nothing waits).
   */
  idleWork(): { head: string; lastHead: string; appended: number; commit(): boolean } | undefined {
    const place = this.last;
    const work = place ? idleHead(place.layout) : undefined;
    if (!place || !work) return undefined;
    return {
      head: work.head,
      lastHead: work.lastHead,
      appended: work.appended,
      commit: () => {
        const waiting = work.commit();
        if (waiting === undefined) return false;
        place.layout = { ...place.layout, waiting };
        return true;
      },
    };
  }

  /**
   * The layout of the place at `line` of `filePath`: the remembered one when the cursor is still
   * there, else a new empty one (`fresh`).
   */
  placeAt(filePath: string, line: number, kind: PlaceKind = 'line'): PlaceOfWork {
    let known: Place | undefined;
    for (const p of this.places)
      if (p.kind === kind && p.filePath === filePath && Math.abs(p.line - line) <= PLACE_LINES)
        if (!known || Math.abs(p.line - line) < Math.abs(known.line - line)) known = p;
    const place: Place = known ?? { kind, filePath, line, layout: { block: [], keys: [], version: ++this.versions }, owned: new Map() };
    if (known) this.places.splice(this.places.indexOf(known), 1);
    place.line = line;
    this.places.push(place);
    if (this.places.length > KEPT_PLACES) this.places.shift();
    if (kind === 'line') {
      // Back at a place after prompts elsewhere: the server holds another place's prompt, so this one's head is read ahead again.
      if (known && this.last !== known) known.layout = { ...known.layout, returned: true };
      this.last = place;
    }
    return {
      layout: place.layout,
      fresh: !known,
      keep: (layout) => void (place.layout = layout),
      own: <T>(key: PlaceKey<T>) => {
        let held = place.owned.get(key);
        if (!held) place.owned.set(key, (held = {}));
        return held as { value?: T };
      },
    };
  }
}

/** The cursor's 0-based line number: the lines before it in `prefix`. */
export function cursorLine(prefix: string): number {
  let n = 0;
  for (let i = prefix.indexOf('\n'); i >= 0; i = prefix.indexOf('\n', i + 1)) n++;
  return n;
}

// The repository block one workspace shares across its places of work (docs/ARCHITECTURE.md "Final
// prompt"): a model server keeps the longest common prefix of consecutive prompts, so a block that
// every place shows first is read once, and a new place reads only its own code and what it appends.
// CodeRAG's ranking at each place decides what must be in the block; an item already there stays
// where it is, a missing one joins at the end, and when the block is full the items no recent place
// needed leave, nearest the end first (leaving from the end costs nothing, from the middle a re-read
// of everything after it), then, where the place's needs still do not fit, those of the places before.

/** One item of the block as the prompt shows it (`S`: the prompt's snippet). */
interface BlockItem<S> {
  snippet: S;
  /** What "already in the block" compares: the item's id where it has one, else its text as ranked. */
  key: string;
  /** Its tokens in the block's form. */
  cost: number;
  /** The last place (its number) whose ranking needed it. */
  lastNeed: number;
}

/** An item a place's ranking wants in the block, with its rank there. */
export interface NeededItem<S> {
  snippet: S;
  key: string;
  cost: number;
  rank: number;
}

/** Which items leave a full block first: `tail`, those no recent place needed nearest the end; `lru`, the least recently needed. */
type EvictionPolicy = 'tail' | 'lru';

/** Places whose needs keep their items in a full block (the one being typed at and the two before it: going back is common). */
export const RECENT_PLACES = 3;

/** What admitting a place's needs did to the block. */
interface Admitted<S> {
  /** Items appended at the end. */
  appended: number;
  /** Items that left. */
  evicted: number;
  /** The first block position whose text changed (undefined: none did): a server re-reads from there. */
  changedFrom: number | undefined;
  /** What the place needs and the block could not take now (no room, or beyond what may be read at once). */
  waiting: Array<NeededItem<S>>;
}

export class SharedBlock<S> {
  items: Array<BlockItem<S>> = [];
  /** Bumped whenever the block's text changes. */
  version = 0;
  private placeCount = 0;

  /**
   * `cap`: the tokens the block may take (the budget less a place's local part, fixed for the block's life);
   * `budgetTokens`: the prompt budget it was laid out for (a place of another budget starts another block).
   */
  constructor(
    readonly cap: number,
    readonly budgetTokens: number,
    readonly policy: EvictionPolicy = 'tail',
  ) {}

  get tokens(): number {
    return this.items.reduce((n, i) => n + i.cost, 0);
  }

  /** A copy to try a change on (idleHead): adopted only if the server reads it before this block changes. */
  copy(): SharedBlock<S> {
    const c = new SharedBlock<S>(this.cap, this.budgetTokens, this.policy);
    c.items = this.items.map((i) => ({ ...i }));
    c.version = this.version;
    c.placeCount = this.placeCount;
    return c;
  }

  /** Takes `tried`'s items where this block has not changed since it was copied; whether it did. */
  adopt(tried: SharedBlock<S>, copiedAt: number): boolean {
    if (this.version !== copiedAt) return false;
    this.items = tried.items;
    this.version = tried.version;
    return true;
  }

  /** A new place begins: its number, for the needs it marks. */
  startPlace(): number {
    return ++this.placeCount;
  }

  holds(key: string): boolean {
    return this.items.some((i) => i.key === key);
  }

  /**
   * Marks what place `place` needs and the block holds, then appends the missing items best first
   * while they fit, taking at most `allowance` tokens (what may be read at once), evicting items no
   * recent place needed where room is short. What does not go in is returned as waiting.
   */
  admit(needs: ReadonlyArray<NeededItem<S>>, place: number, allowance: number): Admitted<S> {
    const wanted = new Set(needs.map((n) => n.key));
    for (const item of this.items) if (wanted.has(item.key)) item.lastNeed = place;
    const missing = needs.filter((n) => !this.holds(n.key)).sort((a, b) => a.rank - b.rank);
    const result: Admitted<S> = { appended: 0, evicted: 0, changedFrom: undefined, waiting: [] };
    let budget = allowance;
    for (const need of missing) {
      if (need.cost > budget || need.cost > this.cap) {
        result.waiting.push(need);
        continue;
      }
      if (!this.makeRoom(need.cost, place, result)) {
        result.waiting.push(need);
        continue;
      }
      result.changedFrom = Math.min(result.changedFrom ?? Infinity, this.items.length);
      this.items.push({ snippet: need.snippet, key: need.key, cost: need.cost, lastNeed: place });
      result.appended++;
      budget -= need.cost;
    }
    if (result.changedFrom !== undefined) this.version++;
    return result;
  }

  /**
   * Frees `cost` tokens: the items no recent place needed leave first, in the policy's order; where
   * that is not enough, those only an earlier recent place needed, nearest the end first (a place's
   * own needs come before keeping a place left behind cheap to come back to). False where even that
   * cannot free enough.
   */
  private makeRoom(cost: number, place: number, result: Admitted<S>): boolean {
    let free = this.cap - this.tokens;
    if (free >= cost) return true;
    const candidates = this.items.map((item, at) => ({ item, at }));
    const stale = candidates
      .filter(({ item }) => item.lastNeed <= place - RECENT_PLACES)
      .sort((a, b) => (this.policy === 'tail' ? b.at - a.at : a.item.lastNeed - b.item.lastNeed || b.at - a.at));
    const recent = candidates
      .filter(({ item }) => item.lastNeed > place - RECENT_PLACES && item.lastNeed < place)
      .sort((a, b) => b.at - a.at);
    const leave: number[] = [];
    for (const { item, at } of [...stale, ...recent]) {
      if (free >= cost) break;
      leave.push(at);
      free += item.cost;
    }
    if (free < cost) return false;
    for (const at of leave.sort((a, b) => b - a)) this.items.splice(at, 1);
    result.evicted += leave.length;
    result.changedFrom = Math.min(result.changedFrom ?? Infinity, ...leave);
    return true;
  }
}

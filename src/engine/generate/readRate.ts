// How fast a model server reads a prompt, from its answers: a line prompt on the workspace's shared
// block keeps the whole window and sizes a new place's local part to what the server reads within
// NEW_PLACE_SECONDS; a prompt read whole at every place (the body's) falls to the floor where the
// server cannot read it within FIRST_READ_SECONDS.

/** Readings of fewer tokens than this are mostly request overhead, not reading (a warm-up that hit the cache). */
const MIN_READ_TOKENS = 256;
/** The last readings kept; their median is the rate (one slow reading, a model loading, does not swing it). */
const KEPT = 5;

/** Tokens a second the server read its recent warm-ups at. */
export class ReadRate {
  private readonly readings: number[] = [];

  /** One warm-up: `tokens` read in `ms` (the server's own figure where it gives one, else the request's wall time). */
  record(tokens: number, ms: number): void {
    if (!Number.isFinite(tokens) || !Number.isFinite(ms) || tokens < MIN_READ_TOKENS || ms <= 0) return;
    this.readings.push((tokens * 1000) / ms);
    if (this.readings.length > KEPT) this.readings.shift();
  }

  /** The median reading, or undefined before the first. */
  get tokensPerSecond(): number | undefined {
    if (this.readings.length === 0) return undefined;
    const sorted = [...this.readings].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }
}

/** The most a new place's first read may take for the budget to stay above PROMPT_FLOOR_TOKENS. */
const FIRST_READ_SECONDS = 15;
/**
 * The budget of a server measured slow: the prompt every client had before the budget followed the
 * server (a slow server's users keep that recall and read a new place in about half the window's time).
 */
const PROMPT_FLOOR_TOKENS = 2048;
/** Budgets step in these units, so a reading's jitter does not move the prompt's layout at every warm-up. */
const STEP_TOKENS = 512;

/**
 * The budget a server reading `tokensPerSecond` reads in FIRST_READ_SECONDS, never under the floor;
 * the floor before the first reading: a server not yet measured may be a laptop CPU, whose first place
 * would otherwise read the whole window (some 4,000 of Qwen's tokens, about 50 s at 1.5B on one CPU thread).
 */
export function readableBudget(tokensPerSecond: number | undefined): number {
  if (tokensPerSecond === undefined) return PROMPT_FLOOR_TOKENS;
  return Math.max(PROMPT_FLOOR_TOKENS, Math.floor((tokensPerSecond * FIRST_READ_SECONDS) / STEP_TOKENS) * STEP_TOKENS);
}

/**
 * What a new place's first request may read on a shared block: its local part and the items it adds.
 * Three times under the 15 s a place's whole prompt took at 1.5B on one CPU thread (docs/BENCHMARKS.md
 * "Moving session").
 */
const NEW_PLACE_SECONDS = 5;
/** A slow server's local part: this share of the budget (about llama.vim's 512-token local context at 8,192). */
const LOCAL_SHARE_FLOOR = 0.1;
/** Of what a new place may read, the share its local part takes; the rest lets that many of the place's own items in at once. */
const LOCAL_OF_READ = 0.5;

/**
 * A new place's local part (the file's path, the code before and after the cursor) and what it may
 * add to the shared block at once, for a server reading `tokensPerSecond` (undefined: not measured,
 * taken as a CPU): a fast server's place gets CodeRAG's share of the budget (`contextShare`) and adds
 * all it needs; a slow one's, a tenth, and its items wait for the user to pause.
 */
export function localRoom(
  budgetTokens: number,
  tokensPerSecond: number | undefined,
  contextShare: number,
): { localTokens: number; allowance: number } {
  const floor = Math.floor(budgetTokens * LOCAL_SHARE_FLOOR);
  const full = Math.max(floor, Math.floor(budgetTokens * contextShare));
  if (tokensPerSecond === undefined || !(tokensPerSecond > 0)) return { localTokens: floor, allowance: 0 };
  const readable = tokensPerSecond * NEW_PLACE_SECONDS;
  const localTokens = Math.min(full, Math.max(floor, Math.floor(readable * LOCAL_OF_READ)));
  return { localTokens, allowance: Math.max(0, Math.floor(readable - localTokens)) };
}

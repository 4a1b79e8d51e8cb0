// Retrieval-augmented prompt under a token budget (CodeRAG section 2.4; docs/ARCHITECTURE.md "Final prompt").
// The repository block comes first, each snippet headed by its repo-relative path, then the current
// file's path and the code context, then (fill-in-the-middle) the code after the cursor. Model
// servers reuse the longest common prefix of consecutive prompts, so at one place of work
// (promptMemory.ts) the block only grows at its end and the code keeps a stable left edge: a
// keystroke changes the prompt from the cursor's line on, not from its head. Fill-in-the-middle
// puts that line last, after the code that follows the cursor (renderPrompt).
import type { Lang } from '../kb/types';
import type { Candidate } from '../retrieve/types';
import type { NeededItem, SharedBlock } from './sharedBlock';
import { commentPrefix, fimTemplate, renderRepoLevel, resolveRepoFormat, type ModelFamily, type RepoFormat } from './templates';

export interface PromptSnippet {
  path: string;
  text: string;
  /** The snippet's heading line instead of its path (ProCC's "Compare this snippet from <file>:"). */
  heading?: string;
  /** Budgeted before the others (its place in the order stays): ProCC's one similar window. */
  pinned?: boolean;
  /** At most this many tokens of the snippet (its head) enter the prompt. */
  maxTokens?: number;
  /** The item in brief (renderKnowledge.renderBrief): what the block shows of it where its text does not fit. */
  brief?: string;
  /** The item's id: a shared block keeps one rendering of it whatever another place's ranking renders. */
  id?: string;
  /** The candidate it shows: a shared block's item that this place's ranking does not hold is still one of its contexts. */
  source?: Candidate;
}

/** The block and the code's left edge of one place of work, as the last prompt there laid them out. */
export interface PlaceLayout {
  /** The block's snippets in prompt order: appended as they are ranked in, never re-sorted. */
  block: PromptSnippet[];
  /** Each block snippet's text as ranked (a snippet cut to fit shows less of it): what "already in the block" compares. */
  keys: string[];
  /** Tokens the block may take at this place (fixed when the place starts, so the code's room does not shift). */
  blockCap?: number;
  /** The prompt's budget at this place, fixed when it starts: a new reading of the server's speed applies at the next place. */
  budgetTokens?: number;
  /** The first line of the code before the cursor that the prompt shows (0: the whole file). */
  cutLine?: number;
  /** Bumped whenever the block's text changes: a host warms the model server's cache once per version. */
  version: number;
  /** The workspace's block this place shows (a model server's line prompt), and its version the last prompt here showed. */
  shared?: { block: SharedBlock<PromptSnippet>; seen: number; place: number };
  /** What this place's ranking wants in the shared block and it has not taken yet: appended when the user pauses (idleHead). */
  waiting?: Array<NeededItem<PromptSnippet>>;
  /** The user came back here after prompts elsewhere: the next prompt's head is read ahead, as a new place's is. */
  returned?: boolean;
  /** The last prompt's input here, so an idle moment can lay out the same prompt with the waiting items in, and its head. */
  lastInput?: PromptInput;
  lastHead?: string;
}

/** How a prompt shares the workspace's block (sharedBlock.ts) instead of keeping one per place. */
interface SharedLayout {
  /**
   * The workspace's block for a block of at least about `cap` tokens within `budgetTokens`: the one it
   * has, or a new one of `newCap` tokens.
   */
  block(cap: number, budgetTokens: number, newCap?: number): SharedBlock<PromptSnippet>;
  /** The most the local part (the file's path, the code before and after the cursor) takes at a new place. */
  localTokens: number;
  /** The most a new place adds to a block that holds something already (the rest waits for a pause). */
  allowance: number;
}

function headingOf(s: PromptSnippet): string {
  return s.heading ?? s.path;
}

/** The snippet as its brief shows it, where it has one. */
function briefOf(s: PromptSnippet): PromptSnippet | undefined {
  return s.brief !== undefined ? { ...s, text: s.brief } : undefined;
}

export interface PromptInput {
  lang: Lang;
  /** Repo-relative path of the file being completed. */
  filePath: string;
  /** Text before the cursor. */
  prefix: string;
  /** Text after the cursor ('' when none). */
  suffix: string;
  /** Best first (CodeRAG's ranking decides what enters the block, not where it sits). */
  snippets: readonly PromptSnippet[];
  family: ModelFamily;
  /** Total prompt budget in tokens (default 2,048). */
  budgetTokens?: number;
  /** Share of the budget the suffix may take at most (default 0.15). */
  suffixShare?: number;
  /** Share of the budget the code context keeps at least when snippets want more (default 0.5, CodeRAG's rule). */
  contextShare?: number;
  countTokens?: (text: string) => number;
  /**
   * Whether the best-ranked snippet left out is cut into the room the whole ones leave (default: only where none
   * entered whole). The compact renderings a model server gets: more of the definitions a line needs reach its prompt.
   */
  cutIntoRest?: boolean;
  /** How snippets enter the prompt (templates.ts RepoFormat; default `auto`). */
  repoFormat?: RepoFormat;
  /** The repository's name, for the `files` form. */
  repoName?: string;
  /**
   * The layout of this place of work from the last prompt here (promptMemory.ts), updated in place;
   * absent: every prompt is laid out as at a new place.
   */
  layout?: PlaceLayout;
  /** How the block shows its snippets; absent: the line prompt's (LINE_BLOCK), or the repository's files where repoFormat says so. */
  blockForm?: BlockForm;
  /** The workspace's shared block (with `layout`): every place shows it first, so a new place reads only its local part. */
  shared?: SharedLayout;
}

/**
 * How a block shows its snippets: the line prompt's commented or string block, or the body prompt's
 * fragments (bodyPrompt.ts). The same place layout lays out both, so both keep the server's cache.
 */
export interface BlockForm {
  /** The block's text for `snippets` in prompt order ('' for none). */
  render(lang: Lang, snippets: readonly PromptSnippet[]): string;
  /** The text one snippet adds to the block (what it costs). */
  snippet(lang: Lang, s: PromptSnippet): string;
  /** The block's own text around its snippets (what it costs with any snippet in it). */
  frame(lang: Lang): string;
  /** A new place's block is laid out best last, nearest the code; absent: best first, each file's snippets together. */
  bestLast?: boolean;
}

/** The line prompt's block: each snippet under its path, the whole inside a string block (Python) or a comment. */
const LINE_BLOCK: BlockForm = {
  render: (lang, snippets) => snippetBlock(lang, snippets),
  snippet: (lang, s) => `${commentPrefix(lang)} ${headingOf(s)}\n${s.text}\n\n`,
  frame: (lang) => snippetBlock(lang, [{ path: 'x', text: '' }]),
};

export interface FittedPrompt {
  /** The text sent to the model (FIM-rendered when the family supports it and a suffix exists). */
  prompt: string;
  /** The place's layout after this prompt (the next prompt at the place starts from it). */
  layout: PlaceLayout;
  /** Prompt-side text without the FIM wrapper: snippets + header + prefix. */
  promptPrefix: string;
  /** The suffix actually included (possibly cut). */
  suffix: string;
  fim: boolean;
  /** How the snippets entered: a comment block (`comment`) or as the repository's files (`files`). */
  format: 'comment' | 'files';
  /** Snippets that made it in (wholly or cut), in prompt order. */
  snippetsUsed: PromptSnippet[];
  /** Indices into the input's snippets of those used, in prompt order (a block snippet no longer ranked has none). */
  usedIndices: number[];
  /** Each used snippet's text as the prompt shows it (cut or brief), beside usedIndices. */
  usedTexts: string[];
  /** A shared block's items that the input's snippets do not hold, with the text the prompt shows of each. */
  usedOthers: Array<{ source: Candidate; text: string }>;
  snippetsDropped: number;
  prefixCut: boolean;
  tokens: number;
  stop: string[];
  /**
   * The prompt up to the cursor's line: what the next keystrokes at this place share, so a host can
   * have the model server read it ahead (a warm-up request). Where the line opens the middle part, the
   * head holds the code after the cursor too.
   */
  head: string;
  /**
   * Whether this prompt changed the block (PlaceLayout.version moved), or the user came back to the
   * place: its head is to be read ahead.
   */
  blockChanged: boolean;
  /** The budget the prompt was fitted to: the place's, where it has one (PlaceLayout.budgetTokens). */
  budgetTokens: number;
}

/** A calibrated estimate where no tokenizer of the family is at hand: code runs ~3 characters a token. */
const MIN_CUT_SNIPPET_TOKENS = 32;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3);
}

/**
 * Room kept in the block for snippets ranked in later at the same place, as a share of what the
 * first prompt there filled (the code's room is fixed with the block's, so it does not move either).
 */
const APPEND_SHARE = 0.5;
/** A snippet ranked this high may displace, in a full block, snippets the ranking no longer holds. */
const ADMIT_RANK = 3;
/**
 * Only a snippet ranked this high is appended at the same place: an append makes the server read
 * the code after the block again, and the ranking's tail shifts at almost every keystroke
 * (docs/BENCHMARKS.md "Typing replay").
 */
const APPEND_RANK = 5;
/**
 * At most this share of the block is kept for the briefs of the items ranked after the one being
 * placed: the best-ranked enter whole, the rest in brief. 0.5 / 0.7 / 1.0 bring the validation Java
 * prompts the same definitions within noise; a half keeps the first ones whole, their docstrings
 * with them (docs/BENCHMARKS.md "Prompt recall").
 */
const BRIEF_SHARE = 0.5;
/** The most of a place's local part (on a shared block) the code after the cursor takes: the code before it matters more. */
const LOCAL_SUFFIX_SHARE = 0.25;
/** Tokens the code before the cursor may grow by at one place before its left edge has to move. */
const GROWTH_TOKENS = 256;
/** When the left edge moves, the code keeps this share of its room, so typing goes on a while before it moves again. */
const CUT_SLACK = 0.85;

function snippetBlock(lang: Lang, snippets: readonly PromptSnippet[]): string {
  if (snippets.length === 0) return '';
  const c = commentPrefix(lang);
  const body = snippets.map((s) => `${c} ${headingOf(s)}\n${s.text.trimEnd()}\n`).join('\n');
  // Python: inside a string block (as CodeRAG's prompt does) so the model reads it as context, not code to continue.
  return lang === 'python' ? `'''\n${body}'''\n` : `/*\n${body}*/\n`;
}

/** Keep the first `maxTokens` worth of text, cut at a line boundary (binary search on the line count). */
function keepHead(text: string, maxTokens: number, count: (t: string) => number): string {
  if (count(text) <= maxTokens) return text;
  const lines = text.split('\n');
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (count(lines.slice(0, mid).join('\n')) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return lines.slice(0, lo).join('\n');
}

/**
 * The code's tokens from each line to the end, counted line by line from the end until `limit` is
 * passed (a huge file costs no more than the budget): `from[i]` for i >= `first`, Infinity above.
 */
function tailTokens(lines: readonly string[], count: (t: string) => number, limit: number): { from: (i: number) => number } {
  const sums: number[] = [];
  let total = 0;
  for (let i = lines.length - 1; i >= 0 && total <= limit; i--) {
    total += count(i === lines.length - 1 ? lines[i]! : `${lines[i]!}\n`);
    sums.push(total);
  }
  return { from: (i) => (lines.length - 1 - i < sums.length ? sums[lines.length - 1 - i]! : Infinity) };
}

/** The first line the code keeps: the place's edge while the code from it fits `room`, else a new one with slack. */
function stableCut(layout: PlaceLayout, lines: readonly string[], room: number, count: (t: string) => number, slack: number): number {
  const tail = tailTokens(lines, count, room);
  const kept = layout.cutLine;
  if (kept !== undefined && kept < lines.length && tail.from(kept) <= room) return kept;
  if (tail.from(0) <= room) return 0;
  const target = Math.floor(room * slack);
  let cut = lines.length - 1;
  while (cut > 0 && tail.from(cut - 1) <= target) cut--;
  return cut;
}

/** What laying out one prompt works from: the input's snippets as the prompt shows them and the budget's parts. */
interface FitContext {
  input: PromptInput;
  form: BlockForm;
  count: (text: string) => number;
  /** The place's layout, updated in place. */
  layout: PlaceLayout;
  budget: number;
  /** Room to grow and slack pay off only where the next prompt at this place reuses this one. */
  stable: boolean;
  /** The layout's version before this prompt. */
  versionBefore: number;
  /** The block's own tokens (its opening and closing). */
  overhead: number;
  /** The budget less the header, the suffix and the block's overhead. */
  available: number;
  /** The code before the cursor, by line. */
  lines: string[];
  /** The snippets as the prompt shows them: pinned ones capped. */
  given: PromptSnippet[];
  /** Each non-empty snippet text's first index in `given`. */
  indexOfText: Map<string, number>;
  costOf: (s: PromptSnippet) => number;
}

/** The snippets as the prompt shows them (pinned ones capped) and each non-empty text's first index among them. */
function shownSnippets(
  snippets: readonly PromptSnippet[],
  count: (t: string) => number,
): { given: PromptSnippet[]; indexOfText: Map<string, number> } {
  const given = snippets.map((s) =>
    s.maxTokens !== undefined && count(s.text) > s.maxTokens ? { ...s, text: keepHead(s.text, s.maxTokens, count) } : s,
  );
  const indexOfText = new Map<string, number>();
  given.forEach((s, i) => {
    if (s.text.trim() !== '' && !indexOfText.has(s.text)) indexOfText.set(s.text, i);
  });
  return { given, indexOfText };
}

/**
 * A new place (or a block that must start over): fill from the ranking, pinned snippets first, the
 * first one that does not fit cut, the rest left for later; then fix the block's room.
 */
/** What the code before the cursor needs of the room, with room to grow where the place is kept. */
function codeNeed(ctx: FitContext): number {
  const { count, stable, available, lines } = ctx;
  return Math.min(tailTokens(lines, count, available).from(0) + (stable ? GROWTH_TOKENS : 0), available);
}

function fillBlock(ctx: FitContext): void {
  const { input, layout, budget, stable, versionBefore, overhead, available } = ctx;
  // CodeRAG's rule (contextShare 0.5): the code keeps what it needs (plus room to grow) up to that
  // share of the budget, the block the rest; a short file leaves the block more.
  const codeTokens = codeNeed(ctx);
  const blockCap = Math.max(
    0,
    Math.min(available, Math.max(available - codeTokens, Math.floor(budget * (1 - (input.contextShare ?? 0.5))) - overhead)),
  );
  const { entered, used } = selectForBlock(ctx, blockCap);
  layout.block = entered.map((e) => e.snippet);
  layout.keys = entered.map((e) => ctx.given[e.rank]!.text);
  layout.blockCap = used === 0 ? 0 : Math.min(blockCap, Math.ceil(used * (stable ? 1 + APPEND_SHARE : 1)));
  layout.cutLine = undefined;
  layout.version = Math.max(layout.version, versionBefore) + 1;
}

/**
 * What the ranking puts in a block of `blockCap` tokens, in the block's order: pinned snippets first,
 * the best-ranked whole while the briefs of the rest keep room, the others in brief, one cut in.
 */
function selectForBlock(ctx: FitContext, blockCap: number): { entered: Array<{ snippet: PromptSnippet; rank: number }>; used: number } {
  const { input, count, given, indexOfText, costOf } = ctx;
  const entered: Array<{ snippet: PromptSnippet; rank: number }> = [];
  let leftOut: number | undefined;
  let used = 0;
  /** The head of `s` that fits the block's room, entered; its cost (0: nothing useful fits). */
  const cutIn = (s: PromptSnippet, rank: number): number => {
    let room = blockCap - used - count(`${headingOf(s)}\n`) - 4;
    let cut = room >= MIN_CUT_SNIPPET_TOKENS ? keepHead(s.text, room, count) : '';
    // A form that adds to every line (the body's commented fragments) costs more than the head's own text: cut by the excess until it fits.
    const over = (t: string): number => used + costOf({ ...s, text: t }) - blockCap;
    for (let excess = over(cut); cut !== '' && excess > 0; excess = over(cut)) {
      room -= excess;
      cut = room >= MIN_CUT_SNIPPET_TOKENS ? keepHead(s.text, room, count) : '';
    }
    if (cut.trim().length === 0) return 0;
    entered.push({ snippet: { ...s, text: cut }, rank });
    return costOf({ ...s, text: cut });
  };
  const byPriority = [...given.keys()]
    .sort((a, b) => Number(given[b]!.pinned === true) - Number(given[a]!.pinned === true) || a - b)
    .filter((rank) => given[rank]!.text.trim() !== '' && indexOfText.get(given[rank]!.text) === rank);
  // With briefs (a model server's compact renderings), an item with none shorter is its own brief.
  const briefs = given.some((s) => s.brief !== undefined);
  const shortest = (s: PromptSnippet): PromptSnippet | undefined => briefOf(s) ?? (briefs ? s : undefined);
  // What the briefs of the items after each one take (kept for them, up to BRIEF_SHARE of the block).
  const briefCost = byPriority.map((rank) => {
    const brief = shortest(given[rank]!);
    return brief === undefined ? 0 : costOf(brief);
  });
  const after: number[] = new Array<number>(byPriority.length).fill(0);
  for (let k = byPriority.length - 2; k >= 0; k--) after[k] = after[k + 1]! + briefCost[k + 1]!;
  const briefRoom = Math.floor(blockCap * BRIEF_SHARE);
  // Two items of one file can read the same in brief (a constant found by two paths): it is shown once.
  const shown = new Set<string>();
  const shownKey = (s: PromptSnippet): string => `${s.path}\n${s.text}`;
  for (const [k, rank] of byPriority.entries()) {
    const s = given[rank]!;
    const cost = costOf(s);
    if (used + cost + Math.min(after[k]!, briefRoom) <= blockCap) {
      entered.push({ snippet: s, rank });
      shown.add(shownKey(s));
      used += cost;
      continue;
    }
    const brief = shortest(s);
    if (brief !== undefined && shown.has(shownKey(brief))) continue;
    if (brief !== undefined && used + briefCost[k]! <= blockCap) {
      entered.push({ snippet: brief, rank });
      shown.add(shownKey(brief));
      used += briefCost[k]!;
      continue;
    }
    // One that does not fit whole is left out and the next ones are tried (a smaller one may fit;
    // stopping at the first misfit left the validation Java prompts at four snippets). Only one is
    // cut in, when a useful part of it fits (a sliver is noise): the best one, when nothing entered
    // yet; with `cutIntoRest`, the best one left out, into the room the whole ones leave (below).
    if (input.cutIntoRest === true) leftOut ??= rank;
    else if (entered.length === 0) used += cutIn(s, rank);
  }
  // A large class left out keeps its header and the names of its members (docs/BENCHMARKS.md "Prompt recall").
  if (leftOut !== undefined) used += cutIn(given[leftOut]!, leftOut);
  // The prompt keeps the ranking's order among what entered, each file's snippets together (or best last, as the form says).
  entered.sort((a, b) => a.rank - b.rank);
  if (ctx.form.bestLast) entered.reverse();
  else {
    const firstOfPath = new Map<string, number>();
    entered.forEach((e, i) => firstOfPath.has(e.snippet.path) || firstOfPath.set(e.snippet.path, i));
    entered.sort((a, b) => firstOfPath.get(a.snippet.path)! - firstOfPath.get(b.snippet.path)! || a.rank - b.rank);
  }
  return { entered, used };
}

/** The key a shared block knows a snippet by: its id, else its text. */
function sharedKey(s: PromptSnippet): string {
  return s.id !== undefined ? `id:${s.id}` : `text:${s.text}`;
}

/**
 * A new place on the workspace's shared block: what its ranking puts in a block of the shared cap is
 * its need; what the block holds stays where it is, the missing items join at its end (all of them
 * while the block is empty: the session's first read; else what the allowance lets in), and the rest
 * waits for the user to pause.
 */
function startSharedPlace(ctx: FitContext, shared: SharedLayout): void {
  const { layout, budget, overhead, versionBefore, available } = ctx;
  const cap = Math.max(0, budget - overhead - shared.localTokens);
  // As CodeRAG's rule for one place: a short file leaves a new block the room its code does not take.
  const block = shared.block(cap, budget, Math.max(0, available - codeNeed(ctx)));
  const place = block.startPlace();
  const needs = selectForBlock(ctx, block.cap).entered.map((e, i) => ({
    snippet: e.snippet,
    key: sharedKey(ctx.given[e.rank]!),
    cost: ctx.costOf(e.snippet),
    rank: i,
  }));
  const admitted = block.admit(needs, place, block.items.length === 0 ? Infinity : shared.allowance);
  layout.waiting = admitted.waiting;
  layout.shared = { block, seen: -1, place };
  layout.blockCap = block.cap;
  layout.cutLine = undefined;
  layout.version = Math.max(layout.version, versionBefore) + 1;
}

/**
 * The same place on the shared block: the block does not change while the user types here (an append
 * would make the server read the code after it again at a keystroke); items ranked in since wait.
 */
function noteSharedNewcomers(ctx: FitContext, block: SharedBlock<PromptSnippet>): void {
  const { layout, given, indexOfText, costOf } = ctx;
  const waiting = (layout.waiting ??= []);
  given.forEach((s, i) => {
    if (i >= APPEND_RANK || s.text.trim() === '' || indexOfText.get(s.text) !== i) return;
    const key = sharedKey(s);
    if (block.holds(key) || waiting.some((w) => w.key === key)) return;
    waiting.push({ snippet: s, key, cost: costOf(s), rank: -1 });
  });
}

/** The place's layout shows the shared block as it is now. */
function showShared(ctx: FitContext, block: SharedBlock<PromptSnippet>): void {
  const { layout } = ctx;
  layout.block = block.items.map((i) => i.snippet);
  layout.keys = block.items.map((i) => i.key);
  if (layout.shared && layout.shared.seen !== block.version) {
    layout.shared.seen = block.version;
    layout.version = Math.max(layout.version, ctx.versionBefore) + 1;
  }
}

/**
 * The same place: snippets ranked in since are appended while they fit. A full block lets one of
 * the ranking's first ADMIT_RANK in by dropping the snippets the ranking no longer holds, the
 * latest first (the prompt then changes from the first one dropped, not from its head).
 */
function appendToBlock(ctx: FitContext, cap: number): void {
  const { layout, versionBefore, given, indexOfText, costOf } = ctx;
  const block = layout.block.map((snippet, i) => ({ snippet, key: layout.keys[i]! }));
  const ranked = new Set(given.map((s) => s.text));
  let used = block.reduce((n, e) => n + costOf(e.snippet), 0);
  let changed = false;
  given.forEach((s, i) => {
    if (i >= APPEND_RANK || s.text.trim() === '' || indexOfText.get(s.text) !== i || block.some((e) => e.key === s.text)) return;
    const cost = costOf(s);
    for (let j = block.length - 1; i < ADMIT_RANK && used + cost > cap && j >= 0; j--) {
      if (ranked.has(block[j]!.key)) continue;
      used -= costOf(block[j]!.snippet);
      block.splice(j, 1);
      changed = true;
    }
    // Whole where it fits, else in brief (its cost counted only then: this runs at every keystroke).
    let shown = s;
    let shownCost = cost;
    if (used + cost > cap) {
      const brief = briefOf(s);
      if (brief === undefined) return;
      shownCost = costOf(brief);
      if (used + shownCost > cap) return;
      shown = brief;
    }
    block.push({ snippet: shown, key: s.text });
    used += shownCost;
    changed = true;
  });
  if (changed) {
    layout.block = block.map((e) => e.snippet);
    layout.keys = block.map((e) => e.key);
    layout.version = Math.max(layout.version, versionBefore) + 1;
  }
}

/** The code's stable left edge in the room the block leaves (kept in the layout): the first line shown and the code from it. */
function cutCode(ctx: FitContext, reserved: number): { cutLine: number; prefix: string } {
  const { input, count, layout, budget, stable, overhead, lines, costOf } = ctx;
  const used = layout.block;
  const blockTokens = used.length === 0 ? 0 : used.reduce((n, s) => n + costOf(s), 0);
  let codeRoom = Math.max(0, budget - reserved - (used.length === 0 ? 0 : overhead) - Math.max(blockTokens, layout.blockCap ?? 0));
  // On a shared block roomier than the place's own share (a short file made it), the place keeps its local part while the block has room.
  if (layout.shared && input.shared)
    codeRoom = Math.max(codeRoom, Math.min(budget - reserved - overhead - blockTokens, input.shared.localTokens - reserved));
  const cutLine = stableCut(layout, lines, codeRoom, count, stable ? CUT_SLACK : 1);
  layout.cutLine = cutLine;
  return { cutLine, prefix: cutLine === 0 ? input.prefix : lines.slice(cutLine).join('\n') };
}

/** What the prompt's rendering takes besides the code before the cursor. */
interface RenderParts {
  input: PromptInput;
  block: PromptSnippet[];
  header: string;
  fim: boolean;
  suffix: string;
  template: ReturnType<typeof fimTemplate>;
}

/**
 * The prompt with `p` as the code before the cursor, in the family's form, and its head (what the
 * next keystrokes on this line share). Fill-in-the-middle: where the family allows it, the cursor's
 * line opens the middle part instead of closing the prefix. A keystroke then changes only the prompt's last tokens: the code after
 * the cursor comes before the line typed, so the server keeps it cached instead of reading it again.
 */
function renderPrompt(parts: RenderParts, p: string): { prompt: string; promptPrefix: string; head: string; format: 'files' | 'comment' } {
  const { input, block, header, fim, suffix, template } = parts;
  const format = input.blockForm ? 'comment' : resolveRepoFormat(input.repoFormat, input.family);
  const lineStart = p.lastIndexOf('\n') + 1;
  const middle = fim && template?.lineInMiddle === true;
  const line = middle ? p.slice(lineStart) : '';
  const above = p.slice(0, p.length - line.length);
  const files =
    format === 'files'
      ? renderRepoLevel(input.family, input.repoName ?? '', block, input.filePath, above, fim ? suffix : undefined)
      : undefined;
  // Without a suffix the repository form is already the whole prompt-side text; only the FIM form needs a second rendering.
  const promptPrefix =
    files === undefined
      ? (input.blockForm ?? LINE_BLOCK).render(input.lang, block) + header + p
      : fim
        ? (renderRepoLevel(input.family, input.repoName ?? '', block, input.filePath, p, undefined) ?? files)
        : files;
  const sideText = promptPrefix.slice(0, promptPrefix.length - line.length);
  const opened = files ?? (fim && template ? template.render(sideText, suffix) : sideText);
  const prompt = opened + line;
  // The head ends where the cursor's line starts; a prompt that ends with the line is cut there, Code Llama's form at a marked line start.
  const head = middle || !fim ? prompt.slice(0, prompt.length - (p.length - lineStart)) : markedHead(parts, p, lineStart);
  return { prompt, promptPrefix, head, format: files !== undefined ? 'files' : 'comment' };
}

/**
 * The head of a prompt that does not end with the cursor's line: the rendering with the line's start
 * marked, cut there (a NUL never occurs in source text the prompt takes).
 */
function markedHead(parts: RenderParts, prefix: string, lineStart: number): string {
  if (prefix.includes('\u0000')) return '';
  const marked = renderPrompt(parts, `${prefix.slice(0, lineStart)}\u0000${prefix.slice(lineStart)}`).prompt;
  return marked.slice(0, Math.max(0, marked.indexOf('\u0000')));
}

/** The fitted prompt from the place's block and the code from its left edge. */
function assemblePrompt(ctx: FitContext, parts: RenderParts, code: { cutLine: number; prefix: string }): Omit<FittedPrompt, 'layout'> {
  const { input, count, layout, budget, versionBefore, indexOfText } = ctx;
  const { prompt, promptPrefix, head, format } = renderPrompt(parts, code.prefix);
  // A shared block knows its items by id: the input's snippet of the same id is the one shown, whatever its rendering here.
  const indexOfKey = layout.shared ? new Map(ctx.given.map((s, i) => [sharedKey(s), i] as const).reverse()) : indexOfText;
  const used: Array<{ i: number; text: string }> = [];
  const usedOthers: FittedPrompt['usedOthers'] = [];
  layout.keys.forEach((key, j) => {
    const i = indexOfKey.get(key);
    const shown = layout.block[j]!;
    if (i !== undefined) used.push({ i, text: shown.text });
    else if (shown.source) usedOthers.push({ source: shown.source, text: shown.text });
  });
  const usedIndices = used.map((u) => u.i);
  return {
    prompt,
    promptPrefix,
    suffix: parts.suffix,
    fim: parts.fim,
    format,
    snippetsUsed: parts.block,
    usedIndices,
    usedTexts: used.map((u) => u.text),
    usedOthers,
    snippetsDropped: input.snippets.length - usedIndices.length,
    prefixCut: code.cutLine > 0,
    tokens: count(prompt),
    stop: parts.template?.stop ?? [],
    head,
    blockChanged: layout.version !== versionBefore || layout.returned === true,
    budgetTokens: budget,
  };
}

export function fitPromptBudget(input: PromptInput): FittedPrompt {
  const count = input.countTokens ?? estimateTokens;
  // The place's layout as given is left as it is: the prompt's new layout is returned (FittedPrompt.layout) for the place to keep.
  const given = input.layout;
  const layout: PlaceLayout = given
    ? { ...given, ...(given.shared ? { shared: { ...given.shared } } : {}) }
    : { block: [], keys: [], version: 0 };
  const budget = (layout.budgetTokens ??= input.budgetTokens ?? 2048);
  const template = fimTemplate(input.family);
  const fim = template !== undefined && input.suffix.trim().length > 0;
  const header = `${commentPrefix(input.lang)} ${input.filePath}\n`;

  // A shared block leaves each place a local part of its own; the code after the cursor takes at most a share of it.
  const shared = input.layout ? input.shared : undefined;
  const suffixRoom = Math.floor(
    Math.min(budget * (input.suffixShare ?? 0.15), shared ? shared.localTokens * LOCAL_SUFFIX_SHARE : Infinity),
  );
  const suffix = fim ? keepHead(input.suffix, suffixRoom, count) : '';
  const reserved = count(header) + (fim ? count(suffix) + 8 : 0);
  const form = input.blockForm ?? LINE_BLOCK;
  const overhead = count(form.frame(input.lang));
  const ctx: FitContext = {
    input,
    form,
    count,
    layout,
    budget,
    stable: input.layout !== undefined,
    versionBefore: layout.version,
    overhead,
    available: Math.max(0, budget - reserved - overhead),
    lines: input.prefix.split('\n'),
    ...shownSnippets(input.snippets, count),
    costOf: (s) => count(form.snippet(input.lang, s)),
  };

  if (shared) {
    // The place is laid out on the block it started with; a place that had none starts on the workspace's.
    if (layout.blockCap === undefined || !layout.shared) startSharedPlace(ctx, shared);
    else noteSharedNewcomers(ctx, layout.shared.block);
    showShared(ctx, layout.shared!.block);
    layout.lastInput = { ...input, layout: undefined };
  } else if (layout.blockCap === undefined) fillBlock(ctx);
  else appendToBlock(ctx, layout.blockCap);
  const code = cutCode(ctx, reserved);
  const fitted = assemblePrompt(ctx, { input, block: layout.block, header, fim, suffix, template }, code);
  layout.returned = undefined;
  if (shared) layout.lastHead = fitted.head;
  return { ...fitted, layout };
}

/**
 * What the model stages take of a fitted prompt besides its text (line and body prompts alike): the
 * trace's figures, the head to warm the server with where the block changed, and the budget.
 */
export function fittedSummary(
  fitted: Pick<
    FittedPrompt,
    'tokens' | 'fim' | 'snippetsUsed' | 'snippetsDropped' | 'prefixCut' | 'head' | 'blockChanged' | 'budgetTokens'
  >,
  format?: FittedPrompt['format'],
): {
  trace: { tokens: number; fim: boolean; format?: FittedPrompt['format']; snippets: string[]; snippetsDropped: number; prefixCut: boolean };
  warmHead?: string;
  budgetTokens: number;
} {
  return {
    trace: {
      tokens: fitted.tokens,
      fim: fitted.fim,
      ...(format ? { format } : {}),
      snippets: fitted.snippetsUsed.map((s) => s.path),
      snippetsDropped: fitted.snippetsDropped,
      prefixCut: fitted.prefixCut,
    },
    ...(fitted.blockChanged && fitted.head ? { warmHead: fitted.head } : {}),
    budgetTokens: fitted.budgetTokens,
  };
}

/**
 * In a pause at a place on the shared block: the last prompt here with the items its ranking still
 * wants appended, up to the cursor's line, for the host to have the server read; `commit` takes the
 * new block once it has (the next prompts then read only what the user types). Undefined: nothing waits.
 */
export function idleHead(
  layout: Readonly<PlaceLayout>,
): { head: string; lastHead: string; appended: number; commit(): PlaceLayout['waiting'] | undefined } | undefined {
  const shared = layout.shared;
  const input = layout.lastInput;
  if (!shared || !input?.shared || !layout.waiting || layout.waiting.length === 0) return undefined;
  const tried = shared.block.copy();
  const copiedAt = shared.block.version;
  const admitted = tried.admit(layout.waiting, shared.place, Infinity);
  if (admitted.appended === 0) return undefined;
  const trial: PlaceLayout = { ...layout, shared: { ...shared, block: tried }, waiting: [] };
  const fitted = fitPromptBudget({ ...input, layout: trial, shared: { ...input.shared, block: () => tried } });
  return {
    head: fitted.head,
    lastHead: layout.lastHead ?? '',
    appended: admitted.appended,
    // The items still waiting once the block took the others (undefined: the block changed meanwhile and took none).
    commit: () => (shared.block.adopt(tried, copiedAt) ? admitted.waiting : undefined),
  };
}

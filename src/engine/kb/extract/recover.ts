// Error recovery for indentation languages: tree-sitter can swallow everything after a broken
// definition into one ERROR node, losing the valid definitions that follow. Blank the broken
// region (spaces keep every index and row) up to the next line that starts at column 0, re-parse,
// and repeat a bounded number of times.
import type { Node, Tree } from 'web-tree-sitter';

/** Parses text with the caller's parser and time budget; null when cancelled. */
export type ParseFn = (text: string) => Tree | null;

const MAX_ROUNDS = 4;

interface Recovered {
  tree: Tree;
  /** The source with broken regions blanked; identical to the original everywhere else. */
  source: string;
  /** Trees made here (the caller deletes them). */
  extraTrees: Tree[];
}

/**
 * The rounds of recovery, one loop for both parses: each yields the text to parse next and is
 * given back its tree (null: cancelled); returns what was recovered.
 */
function* rounds(tree: Tree, source: string): Generator<string, Recovered, Tree | null> {
  let current = tree;
  let text = source;
  const extraTrees: Tree[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const blanked = nextRound(current, text);
    if (blanked === undefined) break;
    text = blanked;
    const next = yield text;
    if (!next) break;
    extraTrees.push(next);
    current = next;
  }
  return { tree: current, source: text, extraTrees };
}

export function recoverTopLevel(parse: ParseFn, tree: Tree, source: string): Recovered {
  const steps = rounds(tree, source);
  let step = steps.next();
  while (!step.done) step = steps.next(parse(step.value));
  return step.value;
}

/** As recoverTopLevel, with a parse that hands the event loop back while it runs. */
export async function recoverTopLevelAsync(parse: (text: string) => Promise<Tree | null>, tree: Tree, source: string): Promise<Recovered> {
  const steps = rounds(tree, source);
  let step = steps.next();
  while (!step.done) step = steps.next(await parse(step.value));
  return step.value;
}

/** The text with the first top-level error's region blanked; undefined when there is none to blank. */
function nextRound(tree: Tree, text: string): string | undefined {
  const err = firstTopLevelError(tree.rootNode);
  if (!err) return undefined;
  const from = err.startIndex - err.startPosition.column;
  const to = nextColumnZeroLine(text, err.startIndex);
  if (to <= from) return undefined;
  return text.slice(0, from) + text.slice(from, to).replace(/[^\r\n]/g, ' ') + text.slice(to);
}

function firstTopLevelError(root: Node): Node | undefined {
  if (!root.hasError) return undefined;
  for (const c of root.children) {
    if (c && (c.type === 'ERROR' || c.isMissing)) return c;
  }
  return undefined;
}

/** Start of the first line after `index`'s line that begins a statement at column 0 (else the end). */
function nextColumnZeroLine(text: string, index: number): number {
  let nl = text.indexOf('\n', index);
  while (nl >= 0 && nl + 1 < text.length) {
    const c = text.charCodeAt(nl + 1);
    // Letters, '_', '@' and non-ASCII identifier starts; not blanks, comments, brackets or quotes.
    if (c === 95 || c === 64 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c >= 128) return nl + 1;
    nl = text.indexOf('\n', nl + 1);
  }
  return text.length;
}

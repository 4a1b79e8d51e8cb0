// Knowledge-base extraction for one file (CodeRAG section 2.1): parse with tree-sitter, then
// collect functions, class functions, class variables and global variables, plus classes and
// imports as structure. A broken file yields what still parses. A parse that fails (the parser
// throws, its WebAssembly runtime aborts, the time budget runs out) is no extraction: extractParsed
// throws ParseFailedError so that the knowledge base never takes "no tree" for "no items";
// extractFile, for callers that want whatever there is, gives an empty extraction instead.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { Parser, type Language, type Tree } from 'web-tree-sitter';
import type { Parsers } from './parsers';
import type { FileExtraction, Lang } from './types';
import { extractJava } from './extract/java';
import { extractPython, extractPythonPaced } from './extract/python';
import { TooManyItemsError } from './extract/common';
import { recoverTopLevel, recoverTopLevelAsync, type ParseFn } from './extract/recover';
import { overLimits } from './documentWindow';
import { getLogger } from '../util/logger';
import { errorMessage, throwIfAborted } from '../util/errors';
import { lfText } from '../util/documentText';
import { eventLoopYielder } from '../util/yielder';

const log = getLogger('kb');

/** The file could not be parsed at all: no extraction, which is not an extraction with no items. */
class ParseFailedError extends Error {
  constructor(
    readonly path: string,
    readonly why: string,
  ) {
    super(`${path}: ${why}`);
    this.name = 'ParseFailedError';
  }
}

export function isParseFailedError(e: unknown): e is ParseFailedError {
  return e instanceof ParseFailedError;
}

interface ExtractOptions {
  /**
   * Parse time allowed for the file, in ms (default 1 s + 5 ms per KB). Tree-sitter's error
   * recovery can turn quadratic on input that is far from the grammar (e.g. Python parsed as
   * Java); past the budget the parse fails instead of stalling the indexer.
   */
  parseBudgetMs?: number;
}

/**
 * Extract the knowledge-base items, classes and imports of one source file.
 * `path` is repo-relative with forward slashes; it heads every item's stub and id.
 */
export function extractFile(parsers: Parsers, lang: Lang, path: string, source: string, options: ExtractOptions = {}): FileExtraction {
  try {
    return extractParsed(parsers, lang, path, source, options);
  } catch (e) {
    if (!isParseFailedError(e)) throw e;
    log.warn(`${e.message}; no items extracted`);
    return { path, lang, items: [], classes: [], imports: [], hasSyntaxErrors: true };
  }
}

/** As extractFile, but a parse that fails throws ParseFailedError (the file's items are unknown, not none). */
function extractParsed(parsers: Parsers, lang: Lang, path: string, given: string, options: ExtractOptions = {}): FileExtraction {
  // Stubs are cut, signatures kept and rows counted on LF text: a CRLF or CR file gives the same items.
  const source = lfText(given);
  const empty: FileExtraction = { path, lang, items: [], classes: [], imports: [], hasSyntaxErrors: true };
  const parser = parsers.parser(lang);
  const budgetMs = options.parseBudgetMs ?? 1000 + source.length / 200;
  const deadline = performance.now() + budgetMs;
  const failure: { error?: string } = {};
  const parse: ParseFn = (text) => parseWithin(parser, text, deadline, failure);
  const tree = parse(source);
  if (!tree)
    throw new ParseFailedError(
      path,
      failure.error !== undefined ? `the parser failed: ${failure.error}` : `parsing took longer than ${Math.round(budgetMs)} ms`,
    );
  const trees = [tree];
  try {
    if (lang === 'java') return detached(extractJava(tree, path, source));
    const hasSyntaxErrors = tree.rootNode.hasError;
    const recovered = hasSyntaxErrors ? recoverTopLevel(parse, tree, source) : { tree, source, extraTrees: [] };
    trees.push(...recovered.extraTrees);
    return detached({ ...extractPython(recovered.tree, path, recovered.source), hasSyntaxErrors });
  } catch (e) {
    // A bug on an unusual tree must not stop indexing the rest of the repository.
    log.warn(`${path}: could not extract items: ${errorMessage(e)}`);
    return empty;
  } finally {
    for (const t of trees) t.delete();
  }
}

/**
 * Bounds on the work one file of a repository may cost, measured on the bench repositories (16,682
 * files): the most items of a file there is 898 (typeshed's builtins.pyi), the most tokens 110,561
 * (nova's test_compute.py, 657 KB), the longest line 31,824 characters (a string table of jsoup's
 * EntitiesData.java). A module far past them is generated or minified: 20 MB of one gave 1.7
 * million items, a 5.4 GB server and no answer for a minute.
 */
const MAX_INDEX_LINE_CHARS = 100_000;
/** Tree-sitter's tree takes about 100-160 bytes a token in its WebAssembly memory, which never shrinks. */
const MAX_INDEX_TOKENS = 1_000_000;
export const MAX_INDEX_ITEMS = 10_000;

type BoundReason = 'longLines' | 'tooManyTokens' | 'tooManyItems';

/** A file past the work bounds: not indexed, for the reason given. */
class OverBoundsError extends Error {
  constructor(
    readonly path: string,
    readonly reason: BoundReason,
    readonly detail: string,
  ) {
    super(`${path}: ${detail}`);
    this.name = 'OverBoundsError';
  }
}

export function isOverBoundsError(e: unknown): e is OverBoundsError {
  return e instanceof OverBoundsError;
}

interface IndexBounds {
  maxLineChars?: number;
  maxTokens?: number;
  maxItems?: number;
}

const TOKEN = /[\p{L}\p{N}_$]+|[^\s\p{L}\p{N}_$]/gu;

/**
 * Why `text` is past the bounds before anything parses it (a line too long, too many tokens), or
 * undefined. Both are single passes that stop at the first excess.
 */
function preParseProblem(text: string, bounds: IndexBounds = {}): { reason: BoundReason; detail: string } | undefined {
  const maxLineChars = bounds.maxLineChars ?? MAX_INDEX_LINE_CHARS;
  const long = overLimits(text, { maxBytes: Infinity, maxLines: Infinity, maxLineChars });
  if (long !== undefined) return { reason: 'longLines', detail: `${long} (minified or generated code)` };
  const maxTokens = bounds.maxTokens ?? MAX_INDEX_TOKENS;
  // Each token is at least one character.
  if (text.length <= maxTokens) return undefined;
  const re = new RegExp(TOKEN);
  let tokens = 0;
  while (re.exec(text) !== null) {
    if (++tokens > maxTokens) return { reason: 'tooManyTokens', detail: `more than ${maxTokens.toLocaleString('en-US')} tokens` };
  }
  return undefined;
}

/** A slice of parsing between two hands of the event loop back. */
const PARSE_SLICE_MS = 20;
/** Files up to this many characters are parsed in one go (about 60 ms at the 3-4 MB/s of a busy machine). */
const ONE_GO_CHARS = 200_000;

/**
 * As extractParsed, for indexing: a file past the work bounds throws OverBoundsError (before it is
 * parsed where the text tells, else as soon as its items pass the limit), and the parse runs in
 * slices, handing the event loop back between them (tree-sitter resumes a parse it cancelled), so
 * that a large file never holds the server for the seconds its parse takes.
 */
export async function extractBounded(
  parsers: Parsers,
  lang: Lang,
  path: string,
  given: string,
  options: ExtractOptions & IndexBounds & { signal?: AbortSignal } = {},
): Promise<FileExtraction> {
  const source = lfText(given);
  const problem = preParseProblem(source, options);
  if (problem) throw new OverBoundsError(path, problem.reason, problem.detail);
  const maxItems = options.maxItems ?? MAX_INDEX_ITEMS;
  const budget = { leftMs: options.parseBudgetMs ?? 1000 + source.length / 200 };
  const budgetMs = budget.leftMs;
  const failure: { error?: string } = {};
  // Most files parse in a few ms: in one go on the shared parser. Larger ones on a parser of their own, in slices.
  const deadline = performance.now() + budget.leftMs;
  const parse = (text: string): Promise<Tree | null> =>
    text.length <= ONE_GO_CHARS
      ? Promise.resolve(parseWithin(parsers.parser(lang), text, deadline, failure))
      : parseInSlices(parsers.language(lang), text, budget, failure, options.signal);
  const tree = await parse(source);
  if (!tree)
    throw new ParseFailedError(
      path,
      failure.error !== undefined ? `the parser failed: ${failure.error}` : `parsing took longer than ${Math.round(budgetMs)} ms`,
    );
  const trees = [tree];
  // The walk of a large file's tree and the copy of its items hand the event loop back every ~25 ms too.
  const pause = eventLoopYielder();
  try {
    if (lang === 'java') return await detachedPaced(extractJava(tree, path, source, maxItems), pause);
    const hasSyntaxErrors = tree.rootNode.hasError;
    const recovered = hasSyntaxErrors ? await recoverTopLevelAsync(parse, tree, source) : { tree, source, extraTrees: [] };
    trees.push(...recovered.extraTrees);
    const extraction = await extractPythonPaced(recovered.tree, path, recovered.source, maxItems, pause);
    return await detachedPaced({ ...extraction, hasSyntaxErrors }, pause);
  } catch (e) {
    if (e instanceof TooManyItemsError) throw new OverBoundsError(path, 'tooManyItems', e.message);
    log.warn(`${path}: could not extract items: ${errorMessage(e)}`);
    return { path, lang, items: [], classes: [], imports: [], hasSyntaxErrors: true };
  } finally {
    for (const t of trees) t.delete();
  }
}

/**
 * Parse `text` on a parser of its own (a parse cancelled to hand the event loop back is resumed by
 * the next call on the same parser, and another caller's parse in between would take it over),
 * slice by slice, while `budget` has time left; null when out of time or the parser failed.
 */
async function parseInSlices(
  language: Language,
  text: string,
  budget: { leftMs: number },
  failure: { error?: string },
  signal: AbortSignal | undefined,
): Promise<Tree | null> {
  let parser: Parser | undefined;
  try {
    parser = new Parser();
    parser.setLanguage(language);
    for (;;) {
      const start = performance.now();
      const tree = parser.parse(text, null, { progressCallback: () => performance.now() - start > PARSE_SLICE_MS });
      budget.leftMs -= performance.now() - start;
      if (tree) return tree;
      if (budget.leftMs <= 0) return null;
      await yieldToEventLoop();
      throwIfAborted(signal);
    }
  } catch (e) {
    if (signal?.aborted) throw e;
    failure.error = errorMessage(e);
    log.warn(`parser failed: ${failure.error}`);
    return null;
  } finally {
    try {
      parser?.delete();
    } catch {
      // An aborted runtime throws on every call: the failure is reported above.
    }
  }
}

/**
 * A copy whose strings own their characters. Names, signatures and stubs are slices of the file's
 * source, and V8 keeps a slice's whole parent string alive: after a cold index of the JDK's
 * java.base the items held 55 MB of file texts (heap snapshot of the server). The copy is what a
 * saved index reads back, so a fresh and a reloaded knowledge base are the same.
 */
function detached(extraction: FileExtraction): FileExtraction {
  return JSON.parse(JSON.stringify(extraction)) as FileExtraction;
}

/** Items, classes and imports copied per piece between two hands of the event loop back (detachedPaced). */
const DETACH_PIECE = 256;

/** detached(), a piece of each list at a time with `pause` between: the same copy. */
async function detachedPaced(extraction: FileExtraction, pause: () => Promise<void>): Promise<FileExtraction> {
  const copy = async <T>(list: readonly T[]): Promise<T[]> => {
    const out: T[] = [];
    for (let i = 0; i < list.length; i += DETACH_PIECE) {
      await pause();
      out.push(...(JSON.parse(JSON.stringify(list.slice(i, i + DETACH_PIECE))) as T[]));
    }
    return out;
  };
  // The lists' places among the keys are kept: a saved index writes them in this order.
  const out = detached({ ...extraction, items: [], classes: [], imports: [] });
  out.items = await copy(extraction.items);
  out.classes = await copy(extraction.classes);
  out.imports = await copy(extraction.imports);
  return out;
}

function parseWithin(parser: Parser, text: string, deadline: number, failure: { error?: string }): ReturnType<Parser['parse']> {
  try {
    const tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
    // A cancelled parse would otherwise be resumed by the next call.
    if (!tree) parser.reset();
    return tree;
  } catch (e) {
    failure.error = errorMessage(e);
    try {
      parser.reset();
    } catch {
      // An aborted runtime throws on every call: the failure is reported above.
    }
    log.warn(`parser failed: ${failure.error}`);
    return null;
  }
}

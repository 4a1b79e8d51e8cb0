// Knowledge-base extraction for one file (CodeRAG section 2.1): parse with tree-sitter, then
// collect functions, class functions, class variables and global variables, plus classes and
// imports as structure. A broken file yields what still parses. A parse that fails (the parser
// throws, its WebAssembly runtime aborts, the time budget runs out) is no extraction: extractParsed
// throws ParseFailedError so that the knowledge base never takes "no tree" for "no items";
// extractFile, for callers that want whatever there is, gives an empty extraction instead.
import type { Parser } from 'web-tree-sitter';
import type { Parsers } from './parsers';
import type { FileExtraction, Lang } from './types';
import { extractJava } from './extract/java';
import { extractPython } from './extract/python';
import { recoverTopLevel, type ParseFn } from './extract/recover';
import { getLogger } from '../util/logger';
import { errorMessage } from '../util/errors';
import { lfText } from '../util/documentText';

const log = getLogger('kb');

/** The file could not be parsed at all: no extraction, which is not an extraction with no items. */
export class ParseFailedError extends Error {
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

export interface ExtractOptions {
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
export function extractParsed(parsers: Parsers, lang: Lang, path: string, given: string, options: ExtractOptions = {}): FileExtraction {
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
 * A copy whose strings own their characters. Names, signatures and stubs are slices of the file's
 * source, and V8 keeps a slice's whole parent string alive: after a cold index of the JDK's
 * java.base the items held 55 MB of file texts (heap snapshot of the server). The copy is what a
 * saved index reads back, so a fresh and a reloaded knowledge base are the same.
 */
function detached(extraction: FileExtraction): FileExtraction {
  return JSON.parse(JSON.stringify(extraction)) as FileExtraction;
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

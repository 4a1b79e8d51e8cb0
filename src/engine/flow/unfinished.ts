// The unfinished file's analysis (DraCo, as CodeRAG section 2.2.1 uses it): its prefix made
// parseable, parsed, and read into the intra-file dataflow graph and the imports. Dataflow
// retrieval and receiver typing read the same analysis; one request's `UnfinishedAnalyses` parses
// each text once for every stage that asks (docs/BENCHMARKS-history.md "One parse per request").
import type { Parsers } from '../kb/parsers';
import type { FileExtraction } from '../kb/types';
import { extractJava } from '../kb/extract/java';
import { extractPython } from '../kb/extract/python';
import { prefixLines } from '../query/unfinishedFile';
import { chainsOfText, JAVA_KEYWORDS, PYTHON_KEYWORDS, type FileFlow } from './flowGraph';
import { foldPrefix } from './foldPrefix';
import { buildJavaFlow } from './javaFlow';
import { buildPythonFlow } from './pythonFlow';

/**
 * The line the walk starts from: the cursor's line when it names a variable, else the last
 * non-blank line before it (a cursor at the start of an empty line, as in line completion).
 */
export function seedLineOf(prefix: string, lang: 'python' | 'java'): { text: string; line: number } {
  const lines = prefixLines(prefix);
  const keywords = lang === 'python' ? PYTHON_KEYWORDS : JAVA_KEYWORDS;
  const last = lines.length - 1;
  if (chainsOfText(lines[last] ?? '', keywords).length > 0) return { text: lines[last] ?? '', line: last };
  for (let i = last - 1; i >= 0; i--) {
    const text = lines[i] ?? '';
    if (text.trim() !== '') return { text, line: i };
  }
  return { text: lines[last] ?? '', line: Math.max(0, last) };
}

/** The start of an import (and Java package) statement. */
export const HEADER_START: Record<'python' | 'java', RegExp> = { python: /^(import|from)\s/, java: /^(import|package)\s/ };

/** A line comment to the end of the line. */
export const LINE_COMMENT: Record<'python' | 'java', RegExp> = { python: /#.*$/, java: /\/\/.*$/ };

/**
 * Whether each line belongs to an import (or Java package) statement, the continuation lines of a
 * parenthesised or backslash-continued import included. `indented`: also statements inside a
 * block (a function's local import); else module-level statements only.
 */
export function importLines(lines: readonly string[], lang: 'python' | 'java', indented: boolean): boolean[] {
  const out: boolean[] = [];
  let depth = 0;
  let continued = false;
  for (const line of lines) {
    const inside = depth > 0 || continued || HEADER_START[lang].test(indented ? line.trimStart() : line);
    out.push(inside);
    if (!inside) continue;
    const code = line.replace(LINE_COMMENT[lang], '');
    for (const c of code) depth += c === '(' ? 1 : c === ')' && depth > 0 ? -1 : 0;
    continued = code.trimEnd().endsWith('\\');
  }
  return out;
}

/**
 * The prefix made parseable: folded (foldPrefix), then the unfinished line (read lexically for
 * the seeds) becomes `pass` in Python, and Java gets the closing braces of its open blocks.
 * Without this, tree-sitter's recovery often wraps the enclosing method or class in one ERROR
 * node. `cursor` is the cursor's offset in `text`.
 */
export function parseableText(prefix: string, lang: 'python' | 'java'): { text: string; cursor: number } {
  const lines = prefixLines(prefix);
  const unfinished = lines.pop() ?? '';
  const kept = foldPrefix(lines, lang);
  if (lang === 'python') {
    let indent = /^[ \t]*/.exec(unfinished)?.[0] ?? '';
    if (unfinished.trim() === '') {
      // A blank cursor line belongs to the block of the line above it.
      const above = kept.slice(kept.lastIndexOf('\n') + 1);
      indent = (/^[ \t]*/.exec(above)?.[0] ?? '') + (above.replace(/#.*$/, '').trimEnd().endsWith(':') ? '    ' : '');
    }
    return { text: `${kept}${kept === '' ? '' : '\n'}${indent}pass\n`, cursor: kept.length };
  }
  return { text: `${kept}\n${javaClosers(kept)}`, cursor: kept.length };
}

/**
 * What closes the Java blocks still open at the end of `kept`, innermost first: `}` each, a `try`
 * block's with `finally {}` (a try without catch or finally does not parse), a `do` body's with
 * `while (true);`, a block opened inside an argument list (`register(new Listener() {`) with
 * the list's `)` and `;`, and one that ends an expression (an anonymous class, a lambda, an array
 * initializer) with `;`. Braces and parentheses are counted outside strings, chars and comments.
 */
function javaClosers(kept: string): string {
  const code = kept.replace(/\/\*[\s\S]*?(\*\/|$)|\/\/.*$|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/gm, ' ');
  // Each open block: where its `{` is and the parentheses open around it.
  const open: { at: number; parens: number }[] = [];
  let parens = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c === 40) parens++;
    else if (c === 41 && parens > 0) parens--;
    else if (c === 123) {
      open.push({ at: i, parens });
      parens = 0;
    } else if (c === 125 && open.length > 0) parens = open.pop()!.parens;
  }
  let out = '';
  for (let k = open.length - 1; k >= 0; k--) {
    const { at, parens: outer } = open[k]!;
    const before = code.slice(Math.max(0, at - 200), at);
    const tail = TRY_OPENER.test(before) ? ' finally {}' : DO_OPENER.test(before) ? ' while (true);' : '';
    // An anonymous class, a lambda or an array initializer ends an expression: its statement needs the `;`.
    const end = outer > 0 ? `${')'.repeat(outer)};` : EXPRESSION_OPENER.test(before) && !SWITCH_RULE.test(before) ? ';' : '';
    out += `}${tail}${end}\n`;
  }
  return out;
}

/** The code before a `{` that opens a try block (resources included), a do-while body. */
const TRY_OPENER = /\btry\s*(?:\([^{}]*\))?\s*$/;
const DO_OPENER = /\bdo\s*$/;
/** The code before a `{` that opens an expression's block: `new Listener(...) {`, `-> {`, `= {`, `new int[] {`. */
const EXPRESSION_OPENER = /(?:\bnew\s+[\w$.<>?,\s]+(?:\([^;{}]*\)|(?:\[\s*\])+)|->|=)\s*$/;
/** A switch rule's block (`case A -> {`), which no `;` follows. */
const SWITCH_RULE = /\b(?:case\b[^;{}]*|default\s*)->\s*$/;

/** The module-level import statements (with their continuation lines) of a folded text. */
export function moduleHeader(text: string, lang: 'python' | 'java'): string {
  const lines = text.split('\n');
  const inImport = importLines(lines, lang, false);
  return lines.filter((_, i) => inImport[i]).join('\n') + '\n';
}

interface UnfinishedAnalysis {
  flow: FileFlow;
  extraction: FileExtraction;
}

/**
 * Analyses of the unfinished file: each parseable text (and its import header) is parsed once,
 * whichever stage asks first. Dataflow retrieval asks at the cursor; receiver typing asks at each
 * dereference, whose prefix, cut on the cursor's line, folds to the same text. The seeds are read
 * per prefix: they do not change the graph. A request makes one that keeps everything it parsed; a
 * pipeline keeps one across requests with `keep` texts (the most recently used), so the keystrokes
 * typed on one line, whose parseable text is the same (the cursor's line is not parsed), parse it
 * once. An analysis depends on its text alone (and the header's on the file's path), so a kept one
 * is never stale.
 */
export class UnfinishedAnalyses {
  private readonly headers = new Map<string, FileExtraction>();
  private readonly graphs = new Map<string, { flow: FileFlow; hasSyntaxErrors: boolean }>();
  private readonly keep: number;

  constructor(options: { keep?: number } = {}) {
    this.keep = options.keep ?? Infinity;
  }

  analyse(parsers: Parsers, path: string, lang: 'python' | 'java', prefix: string): UnfinishedAnalysis {
    const { text, cursor } = parseableText(prefix, lang);
    const parser = parsers.parser(lang);
    // Imports (and the Java package) come from a parse of the module-level import lines alone,
    // so that the extractor does not render stubs for the whole file.
    const header = moduleHeader(text, lang);
    const extraction = cached(this.headers, this.keep, `${lang}\0${path}\0${header}`, () => {
      const importTree = parser.parse(header);
      try {
        if (!importTree) throw new Error(`could not parse ${path}`);
        return lang === 'python'
          ? extractPython(importTree, path, importTree.rootNode.text)
          : extractJava(importTree, path, importTree.rootNode.text);
      } finally {
        importTree?.delete();
      }
    });
    const graph = cached(this.graphs, this.keep, `${lang}\0${cursor}\0${text}`, () => {
      const tree = parser.parse(text);
      if (!tree) throw new Error(`could not parse ${path}`);
      try {
        const flow = lang === 'python' ? buildPythonFlow(tree.rootNode, cursor) : buildJavaFlow(tree.rootNode, cursor);
        return { flow, hasSyntaxErrors: tree.rootNode.hasError };
      } finally {
        tree.delete();
      }
    });
    const seed = seedLineOf(prefix, lang);
    const flow: FileFlow = {
      ...graph.flow,
      seeds: chainsOfText(seed.text, lang === 'python' ? PYTHON_KEYWORDS : JAVA_KEYWORDS),
      seedLine: seed.line,
    };
    return {
      flow,
      extraction: { ...extraction, imports: [...extraction.imports, ...flow.localImports], hasSyntaxErrors: graph.hasSyntaxErrors },
    };
  }
}

/** The value under `key`, computed once; at most `keep` values, the least recently used leaving first. */
function cached<T>(map: Map<string, T>, keep: number, key: string, compute: () => T): T {
  const hit = map.get(key);
  if (hit !== undefined) {
    map.delete(key);
    map.set(key, hit);
    return hit;
  }
  const value = compute();
  map.set(key, value);
  if (map.size > keep) map.delete(map.keys().next().value!);
  return value;
}

/** Parse the prefix and build its dataflow graph, with no request to share it (tests, the bench's scripts). */
export function analyseUnfinished(parsers: Parsers, path: string, lang: 'python' | 'java', prefix: string): UnfinishedAnalysis {
  return new UnfinishedAnalyses().analyse(parsers, path, lang, prefix);
}

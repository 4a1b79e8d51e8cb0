// Rambo's trigger: the cursor inside a function or method whose body is empty or holds
// only `pass`, `...`, a docstring, a TODO comment, or `{ }` with whitespace. Read from the syntax
// tree (tree-sitter); everywhere else the line mode completes.
import type { Node } from 'web-tree-sitter';
import type { Lang } from '../kb/types';
import type { Parsers } from '../kb/parsers';
import { indentOf } from '../util/codeText';

/** The method whose body the body mode writes. */
export interface BodyTarget {
  lang: Lang;
  name: string;
  /** Innermost enclosing class (simple name), when the method is in one. */
  className?: string;
  /** The declaration up to its body: `def f(a: int) -> str:` / `public Cart add(Product p)`. */
  signature: string;
  /** 0-based row of the declaration's first line (the `def` line, after decorators) and of the body's first line. */
  signatureRow: number;
  /** Indentation (columns) of the declaration line: the Python body ends at the first line at or above it. */
  signatureIndent: number;
}

const EMPTY_MARK = /\bTODO\b|\bFIXME\b/;

function isTodoComment(n: Node): boolean {
  return (n.type === 'comment' || n.type === 'line_comment' || n.type === 'block_comment') && EMPTY_MARK.test(n.text);
}

/** A Python body statement that leaves the body "empty": pass, `...`, a docstring. */
function isEmptyPythonStatement(n: Node): boolean {
  if (n.type === 'pass_statement' || isTodoComment(n)) return true;
  if (n.type !== 'expression_statement' || n.namedChildCount !== 1) return false;
  const e = n.namedChild(0);
  return e !== null && (e.type === 'ellipsis' || e.type === 'string' || e.type === 'concatenated_string');
}

function lineOf(text: string, row: number): string {
  let start = 0;
  for (let r = 0; r < row; r++) {
    const next = text.indexOf('\n', start);
    if (next < 0) return '';
    start = next + 1;
  }
  const end = text.indexOf('\n', start);
  return text.slice(start, end < 0 ? text.length : end);
}

function enclosingClass(node: Node, lang: Lang): string | undefined {
  const kinds =
    lang === 'python' ? ['class_definition'] : ['class_declaration', 'interface_declaration', 'enum_declaration', 'record_declaration'];
  for (let n: Node | null = node.parent; n; n = n.parent) if (kinds.includes(n.type)) return n.childForFieldName('name')?.text;
  return undefined;
}

/** The cursor strictly inside a string or comment (at its first character is before it). */
function inStringOrComment(node: Node, offset: number): boolean {
  for (let n: Node | null = node; n; n = n.parent) {
    const literal =
      n.type === 'string' ||
      n.type === 'string_literal' ||
      n.type === 'comment' ||
      n.type === 'line_comment' ||
      n.type === 'block_comment' ||
      n.type === 'text_block';
    if (literal && n.startIndex < offset) return true;
    if (n.type === 'block' || n.type === 'function_definition' || n.type === 'method_declaration') return false;
  }
  return false;
}

/**
 * Python: an empty body does not parse as one, so a `pass` placeholder stands at the cursor while
 * reading the tree (indented one level below a `...:` line when the cursor line is blank and not
 * indented past it).
 */
function pythonText(prefix: string, suffix: string): { text: string; offset: number } {
  const lineStart = prefix.lastIndexOf('\n') + 1;
  const before = prefix.slice(lineStart);
  const after = suffix.slice(0, suffix.indexOf('\n') < 0 ? suffix.length : suffix.indexOf('\n'));
  // Text before the cursor on its line (`pass|`) is the body already: no placeholder.
  if (before.trim() !== '') return { text: prefix + suffix, offset: Math.max(0, prefix.length - 1) };
  let pad = '';
  if (after.trim() === '') {
    const lines = prefix.slice(0, lineStart).split('\n');
    lines.pop();
    let prev: string | undefined;
    for (let i = lines.length - 1; i >= 0 && prev === undefined; i--) if ((lines[i] ?? '').trim() !== '') prev = lines[i];
    if (prev !== undefined && /:\s*(#.*)?$/.test(prev) && indentOf(before) <= indentOf(prev))
      pad = ' '.repeat(indentOf(prev) + 4 - indentOf(before));
  }
  // Text after the cursor on its line keeps its place in the block: it follows the placeholder, indented as the cursor.
  return { text: `${prefix}${pad}pass${after.trim() === '' ? '' : `\n${before}`}${suffix}`, offset: prefix.length + pad.length };
}

/** The method whose empty body holds the cursor, or undefined (the line mode's ground). */
export function detectBodyTarget(parsers: Parsers, lang: Lang, prefix: string, suffix: string): BodyTarget | undefined {
  const { text, offset } = lang === 'python' ? pythonText(prefix, suffix) : { text: prefix + suffix, offset: prefix.length };
  const tree = parsers.parser(lang).parse(text);
  if (!tree) return undefined;
  try {
    const at = tree.rootNode.descendantForIndex(offset, offset);
    if (!at || inStringOrComment(at, offset)) return undefined;
    const fnTypes = lang === 'python' ? ['function_definition'] : ['method_declaration', 'constructor_declaration'];
    let fn: Node | null = at;
    while (fn && !fnTypes.includes(fn.type)) fn = fn.parent;
    if (!fn) return undefined;
    const body = fn.childForFieldName('body');
    if (!body || offset < body.startIndex || offset > body.endIndex) return undefined;
    if (lang === 'java') {
      // Strictly between the braces, and nothing but whitespace and TODO comments there.
      if (offset <= body.startIndex || offset >= body.endIndex) return undefined;
      if (body.namedChildren.some((c) => c !== null && !isTodoComment(c))) return undefined;
      if (body.hasError) return undefined;
    } else {
      if (body.namedChildren.some((c) => c !== null && !isEmptyPythonStatement(c))) return undefined;
      // A comment right after the `:` sits outside the block in the tree: it is content unless a TODO.
      const colon = fn.children.find((c) => c?.type === ':');
      if (
        fn.namedChildren.some(
          (c) => c !== null && c.type === 'comment' && c.startIndex >= (colon?.endIndex ?? body.startIndex) && !isTodoComment(c),
        )
      )
        return undefined;
    }
    const name = fn.childForFieldName('name')?.text;
    if (!name) return undefined;
    const headerEnd = lang === 'python' ? (fn.children.find((c) => c?.type === ':')?.endIndex ?? body.startIndex) : body.startIndex;
    const signature = text.slice(fn.startIndex, headerEnd).trimEnd();
    const row = fn.startPosition.row;
    const className = enclosingClass(fn, lang);
    return { lang, name, ...(className ? { className } : {}), signature, signatureRow: row, signatureIndent: indentOf(lineOf(text, row)) };
  } finally {
    tree.delete();
  }
}

/**
 * Without a tree to read (a forced body request whose method does not parse): the last
 * declaration-looking line of the prefix.
 */
export function guessBodyTarget(lang: Lang, prefix: string): BodyTarget | undefined {
  const lines = prefix.split('\n');
  const header = lang === 'python' ? /^\s*(async\s+)?def\s+([A-Za-z_]\w*)\s*\(/ : /^\s*[\w<>,.?\[\]@\s]*?\b([A-Za-z_$][\w$]*)\s*\([^;]*$/;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    const m = header.exec(line);
    if (!m) continue;
    const name = lang === 'python' ? m[2] : m[1];
    if (!name || (lang === 'java' && ['if', 'for', 'while', 'switch', 'catch', 'synchronized', 'return', 'new'].includes(name))) continue;
    // Not /[{:]?\s*$/: a `$`-anchored pattern over a whitespace run costs O(n^2).
    const joined = lines.slice(i).join('\n').trimEnd();
    const signature = /[{:]$/.test(joined) ? joined.slice(0, -1) : joined;
    return { lang, name, signature, signatureRow: i, signatureIndent: indentOf(line) };
  }
  return undefined;
}

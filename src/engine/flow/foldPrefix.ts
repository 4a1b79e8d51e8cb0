// Folds the unfinished file before parsing it for the dataflow graph (DraCo's graph needs the
// imports, the module/class-level definitions and the code around the cursor, not the bodies of
// every other function): keeps the blocks enclosing the cursor whole and, elsewhere, only the
// statements at the level of an enclosing block. A 4,000-line file parses in milliseconds.
// Python `self.x = ...` lines of folded methods are kept (they define the class's fields).
// Statements that are only a comment or a docstring, and the statement still open at the cursor,
// are left out, so that what is parsed is code that parses: with the validation Java line cases,
// 1 of 120 folded texts still have syntax errors (56 before), Python 0 of 160 (19 before).
import type { Lang } from '../kb/types';
import { indentOf } from '../util/codeText';

interface LogicalLine {
  first: number;
  last: number;
  indent: number;
  /** Blank or comment only. */
  empty: boolean;
  /**
   * The last statement, still open at the cursor (`if (a &&`, `x =`, `foo(a,`): it cannot parse,
   * and the cursor's line is read lexically.
   */
  open?: boolean;
}

const SPECIAL = /["'()[\]{}#/\\]/;
const BACKSLASH = 92;
const HASH = 35;
const SLASH = 47;
const STAR = 42;
const SPACE = 32;
const TAB = 9;
const SEMICOLON = 59;
/** What ends a Java statement's line: `;`, `{`, `}`. */
const STATEMENT_END: ReadonlySet<number> = new Set([SEMICOLON, 123, 125]);
const DQUOTE = 34;
const SQUOTE = 39;

/**
 * Group physical lines into statements: continuation lines (open brackets, strings, comments) join
 * the line that started them. A Java statement runs on until a line ends in `;`, `{` or `}`
 * (`Map<K, V> m =` / `new HashMap<>();`, `implements` / `Foo {`, `throws A,` / `B {`): folded
 * apart, its deeper continuation was dropped and the parse failed. Before this, 56 of the 120
 * validation Java line cases and 18 of the 56 dev ones had a folded text with syntax errors.
 */
function logicalLines(lines: readonly string[], lang: Lang): LogicalLine[] {
  const out: LogicalLine[] = [];
  let depth = 0;
  let string: string | undefined; // the open multi-line string or comment delimiter
  let current: LogicalLine | undefined;
  // Java: the last character of code (outside strings and comments) of the statement so far.
  let lastCode = SEMICOLON;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    const javaOpen =
      lang === 'java' &&
      current !== undefined &&
      !current.empty &&
      !STATEMENT_END.has(lastCode) &&
      trimmed !== '' &&
      !trimmed.startsWith('}');
    // Java statements end by their last character, so brackets do not join lines there: a block opened inside an argument list
    // (`register(new Listener() {`, `forEach(x -> {`) starts statements of its own.
    const startsFresh = (lang === 'java' || depth === 0) && string === undefined && !(current && lines[i - 1]?.endsWith('\\')) && !javaOpen;
    if (startsFresh) {
      current = {
        first: i,
        last: i,
        // A tab: 8 columns in Python (as Python reads it), 4 in Java, where files indent members with
        // tabs and bodies with spaces (antlr4's `\tint LA(int i) {` over 8-space lines).
        indent: indentOf(line, lang === 'java' ? 4 : 8),
        empty: trimmed === '' || trimmed.startsWith(lang === 'python' ? '#' : '//'),
      };
      out.push(current);
    } else if (current) {
      current.last = i;
    }
    // Lexical scan of the line (char codes: most lines need no string handling at all).
    if (string === undefined && !SPECIAL.test(line)) {
      if (trimmed !== '') lastCode = trimmed.charCodeAt(trimmed.length - 1);
      continue;
    }
    for (let j = 0; j < line.length; j++) {
      const c = line.charCodeAt(j);
      if (string !== undefined) {
        if (c === BACKSLASH && string !== '*/') j++;
        else if (c === string.charCodeAt(0) && line.startsWith(string, j)) {
          j += string.length - 1;
          // A comment that ends a statement's line leaves it ended (`/** ... */` before a field).
          if (string !== '*/') lastCode = c;
          string = undefined;
        }
        continue;
      }
      if (c === HASH && lang === 'python') break;
      if (c === SLASH && lang === 'java') {
        const n = line.charCodeAt(j + 1);
        if (n === SLASH) break;
        if (n === STAR) {
          string = '*/';
          j++;
        } else lastCode = c;
        continue;
      }
      if (c !== SPACE && c !== TAB) lastCode = c;
      if (c === DQUOTE || c === SQUOTE) {
        const q = line[j]!;
        if ((lang === 'python' || c === DQUOTE) && line.startsWith(q + q + q, j)) {
          string = q + q + q;
          j += 2;
          continue;
        }
        // A one-line string: skip to its end.
        let k = j + 1;
        while (k < line.length && line.charCodeAt(k) !== c) k += line.charCodeAt(k) === BACKSLASH ? 2 : 1;
        j = k;
        continue;
      }
      if (c === 40 || c === 91 || (c === 123 && lang === 'python')) depth++;
      else if ((c === 41 || c === 93 || (c === 125 && lang === 'python')) && depth > 0) depth--;
    }
    if (current && current.empty && string !== undefined) current.empty = false;
  }
  if (current && !current.empty) {
    const continued = lang === 'java' ? !STATEMENT_END.has(lastCode) : depth > 0 || (lines[lines.length - 1] ?? '').endsWith('\\');
    if (string !== undefined || continued) current.open = true;
  }
  return out;
}

/** A triple quote opening a Python string (prefixes such as r, b, f allowed), matched where the statement starts. */
const STRING_START = /[rRbBuUfF]{0,2}("{3}|'{3})/y;

/**
 * A statement that is only a block comment (Java `/* ... *\/`, a Javadoc) or only a triple-quoted
 * string (a Python docstring): the graph has nothing to read in it, and in the library code of the
 * dev and validation sets they are two thirds of a folded Java prefix and a fifth to a third of a
 * Python one, which the parse would otherwise lex.
 */
function commentOnly(lines: readonly string[], l: LogicalLine, lang: Lang): boolean {
  const head = lines[l.first]!;
  let start = 0;
  while (head.charCodeAt(start) === SPACE || head.charCodeAt(start) === TAB) start++;
  let close: string;
  let open: number;
  if (lang === 'java') {
    if (head.charCodeAt(start) !== SLASH || head.charCodeAt(start + 1) !== STAR) return false;
    close = '*/';
    open = start + 2;
  } else {
    STRING_START.lastIndex = start;
    const quote = STRING_START.exec(head)?.[1];
    if (quote === undefined) return false;
    close = quote;
    open = STRING_START.lastIndex;
  }
  // Closed only at its end: `/* a */ int x; /* b */` and `"""a""" + b` are code.
  const text = l.first === l.last ? head : lines.slice(l.first, l.last + 1).join('\n');
  const end = text.trimEnd().length - close.length;
  return end >= open && text.indexOf(close, open) === end;
}

interface Chunk {
  lines: string[];
  /** Imports, the package line and the headers enclosing the cursor survive trimming. */
  essential: boolean;
}

/** Kept lines beyond this are trimmed from the top (imports and enclosing headers stay). */
export const MAX_KEPT_LINES = 1500;

const SELF_FIELD = /^\s*self\.[\p{L}_][\p{L}\p{N}_]*\s*(:[^=]*)?=(?!=)/u;

/**
 * The kept lines of `lines` (the prefix without its unfinished line), the cursor being after the
 * last one. Returns the folded text; never longer than the input.
 */
export function foldPrefix(lines: readonly string[], lang: Lang): string {
  const logical = logicalLines(lines, lang).filter((l) => !l.empty && !l.open && !commentOnly(lines, l, lang));
  // Python decorators just above the cursor wait for the function still to be written: alone, they do not parse.
  while (lang === 'python' && logical.length > 0 && lines[logical[logical.length - 1]!.first]!.trimStart().startsWith('@')) logical.pop();
  if (logical.length === 0) return '';
  // Ancestors of the cursor: walking back, each line less indented than all after it.
  const ancestors: number[] = [];
  let min = Infinity;
  for (let i = logical.length - 1; i >= 0; i--) {
    const l = logical[i]!;
    if (l.indent < min) {
      ancestors.push(i);
      min = l.indent;
      if (min === 0) break;
    }
  }
  ancestors.reverse();
  const innermost = ancestors[ancestors.length - 1] ?? 0;
  const ancestorSet = new Set(ancestors);
  const header = lang === 'python' ? /^(import|from)\s/ : /^(import|package)\s/;
  // Kept statements; a folded header's `pass` and self-field lines travel with it.
  const chunks: Chunk[] = [];
  const pushGroup = (l: LogicalLine, essential: boolean): Chunk => {
    const chunk = { lines: lines.slice(l.first, l.last + 1), essential };
    chunks.push(chunk);
    return chunk;
  };
  // Level kept in each region: module level before the first ancestor, then each ancestor's body level.
  let a = 0;
  let level = 0;
  let pendingHeader: { indent: number; kept: boolean; chunk: Chunk } | undefined;
  const closeHeader = (): void => {
    if (pendingHeader && !pendingHeader.kept && lang === 'python')
      pendingHeader.chunk.lines.push(`${' '.repeat(pendingHeader.indent + 4)}pass`);
    pendingHeader = undefined;
  };
  for (let i = 0; i < logical.length; i++) {
    const l = logical[i]!;
    if (i >= innermost) {
      closeHeader();
      pushGroup(l, i === innermost);
      continue;
    }
    while (a < ancestors.length && ancestors[a]! <= i) {
      const next = logical[ancestors[a]! + 1];
      if (ancestors[a] === i) level = next ? next.indent : l.indent + 4;
      a++;
    }
    if (ancestorSet.has(i) || l.indent <= level) {
      closeHeader();
      const essential = ancestorSet.has(i) || (l.indent === 0 && header.test(lines[l.first]!));
      const chunk = pushGroup(l, essential);
      const text = (lines[l.last] ?? '').replace(/#.*$/, '').trimEnd();
      if (lang === 'python' && text.endsWith(':') && !ancestorSet.has(i)) pendingHeader = { indent: l.indent, kept: false, chunk };
    } else if (lang === 'python' && pendingHeader && l.first === l.last && SELF_FIELD.test(lines[l.first]!)) {
      pendingHeader.chunk.lines.push(`${' '.repeat(pendingHeader.indent + 4)}${lines[l.first]!.trimStart()}`);
      pendingHeader.kept = true;
    }
  }
  closeHeader();
  // Still too long (a huge module or class body): keep the imports, the enclosing headers and the statements nearest the cursor.
  let total = chunks.reduce((n, c) => n + c.lines.length, 0);
  for (let i = 0; i < chunks.length && total > MAX_KEPT_LINES; i++) {
    const c = chunks[i]!;
    if (c.essential || c.lines.length === 0) continue;
    total -= c.lines.length;
    c.lines = [];
  }
  return chunks.flatMap((c) => c.lines).join('\n');
}

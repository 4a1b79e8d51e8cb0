// Shared helpers for the per-language extractors (CodeRAG section 2.1): ids, ranges, stubs.
import type { Node } from 'web-tree-sitter';
import type { ItemKind, KbItem, Lang, LineRange } from '../types';

/** A single item's stub text is cut near this many characters (a marker line says so). */
const MAX_ITEM_TEXT = 4000;
/** Variable signatures are declaration text; long initialisers are cut to keep them a header. */
const MAX_SIGNATURE = 300;

export function rangeOf(start: Node, end: Node = start): LineRange {
  return { startLine: start.startPosition.row, endLine: end.endPosition.row };
}

/** Leading whitespace of the line on which `node` starts (indices and columns are UTF-16 units). */
export function lineIndent(source: string, node: Node): string {
  const lineStart = node.startIndex - node.startPosition.column;
  let i = lineStart;
  while (i < node.startIndex) {
    const c = source.charCodeAt(i);
    if (c !== 32 && c !== 9) break;
    i++;
  }
  return source.slice(lineStart, i);
}

/** Python's inspect.cleandoc: strip the first line, dedent the rest, drop blank edge lines. */
export function cleanDoc(doc: string): string {
  const lines = doc.split('\n');
  let margin = Infinity;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] ?? '';
    const content = line.trimStart().length;
    if (content > 0) margin = Math.min(margin, line.length - content);
  }
  const out = lines.map((line, i) => (i === 0 ? line.trim() : margin === Infinity ? line.trim() : line.slice(margin).trimEnd()));
  while (out.length > 0 && out[0] === '') out.shift();
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

/** A declaration's text as a one-screen signature: kept whole when short, else its first line. */
export function capSignature(text: string): string {
  const trimmed = text.trim();
  if (trimmed.length <= MAX_SIGNATURE && trimmed.split('\n').length <= 3) return trimmed;
  const firstLine = trimmed.split('\n', 1)[0] ?? '';
  return (firstLine.length > MAX_SIGNATURE ? firstLine.slice(0, MAX_SIGNATURE) : firstLine).trimEnd() + ' ...';
}

/**
 * Render a self-contained stub: the path comment, the enclosing headers, the definition and the
 * closing lines (Java braces). The definition is cut at a line boundary, with `marker` on its own
 * line, when the whole would exceed MAX_ITEM_TEXT.
 */
export function renderStub(pathLine: string, headers: readonly string[], body: string, closers: readonly string[], marker: string): string {
  const head = headers.length > 0 ? `${pathLine}\n${headers.join('\n')}\n` : `${pathLine}\n`;
  const tail = closers.length > 0 ? `\n${closers.join('\n')}` : '';
  let text = body === '' ? head + tail.slice(1) : head + body + tail;
  if (text.length > MAX_ITEM_TEXT) {
    const room = Math.max(0, MAX_ITEM_TEXT - head.length - tail.length - marker.length - 1);
    const cut = body.lastIndexOf('\n', room);
    const kept = cut > 0 ? body.slice(0, cut) : body.slice(0, room);
    text = `${head}${kept}\n${marker}${tail}`;
  }
  return text;
}

/** Remove a common leading indent (when the outermost header itself is indented, e.g. under `if`). */
export function dedentLines(lines: string, indent: string): string {
  if (indent === '') return lines;
  return lines
    .split('\n')
    .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
    .join('\n');
}

/** Gives each item id its `@n` suffix for the n-th duplicate, in file order. */
export class IdAllocator {
  private readonly counts = new Map<string, number>();

  constructor(private readonly path: string) {}

  next(kind: ItemKind, qualifiedName: string): string {
    const base = `${this.path}#${kind}:${qualifiedName}`;
    const n = (this.counts.get(base) ?? 0) + 1;
    this.counts.set(base, n);
    return n === 1 ? base : `${base}@${n}`;
  }
}

/** What an extractor gives for one item: the KbItem less what makeItem fills in (its id, language and path). */
export type ItemFields = Omit<KbItem, 'id' | 'lang' | 'path'>;

export function makeItem(ids: IdAllocator, lang: Lang, path: string, f: ItemFields): KbItem {
  const item: KbItem = {
    id: ids.next(f.kind, f.qualifiedName),
    kind: f.kind,
    lang,
    path,
    name: f.name,
    qualifiedName: f.qualifiedName,
    signature: f.signature,
    docstring: f.docstring,
    range: f.range,
    text: f.text,
  };
  if (f.className !== undefined) item.className = f.className;
  return item;
}

/**
 * A file would give more items than the limit: an extraction stops at the first one past it rather
 * than build them all (a generated or minified module gave 1.7 million, and 5.4 GB).
 */
export class TooManyItemsError extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit.toLocaleString('en-US')} items`);
    this.name = 'TooManyItemsError';
  }
}

// What the cross-file analysis of one file gives (the rows that use definitions of other files,
// the candidate function bodies) and the pieces both languages' analyses share.
import type { Node } from 'web-tree-sitter';
import type { KbClass, KbItem, Lang } from '../engine/kb/types';
import type { CrossfileDef } from './metrics';

/** Test code: a tests folder anywhere in the path, or a test file name. Never a target, nor a guessed member. */
export function isTestPath(path: string): boolean {
  const parts = path.split('/');
  const file = parts[parts.length - 1] ?? '';
  if (parts.slice(0, -1).some((p) => /^(test|tests|testing|unittests?|test[ _-]cases)$/i.test(p))) return true;
  return /^test_.*\.py$/.test(file) || /_(unit)?tests?\.py$/.test(file) || file === 'conftest.py' || /Tests?\.java$/.test(file);
}

/** A function or method whose body may become a method-body case. */
export interface FunctionSpan {
  name: string;
  /** Qualified name of the enclosing class, if any. */
  className?: string;
  /** 0-based row of the last signature line (ends with `:` in Python, `{` in Java). */
  headerEndRow: number;
  /** First and last 0-based rows of the body (Java: the rows strictly between the braces). */
  bodyFirstRow: number;
  bodyLastRow: number;
  /** Why it cannot be a body case (constructor, getter, one-line body ...), if it cannot. */
  excluded?: string;
}

export interface FileAnalysis {
  path: string;
  lang: Lang;
  /** Cross-file definitions used on each row (deduplicated, in order of use). */
  defsByRow: Map<number, CrossfileDef[]>;
  /** Rows that are never line targets: imports, package declarations, def/class headers. */
  excludedRows: Set<number>;
  functions: FunctionSpan[];
}
function defKey(d: CrossfileDef): string {
  return `${d.file}\0${d.name}\0${d.line}\0${d.kind}`;
}

export function itemDef(item: KbItem): CrossfileDef {
  return { name: item.name, kind: item.kind, file: item.path, line: item.range.startLine };
}

export function classDef(cls: KbClass): CrossfileDef {
  return { name: cls.name, kind: cls.kind, file: cls.path, line: cls.range.startLine };
}

/** Per-file resolution state: the file's own bindings, cached. */
export class Uses {
  readonly defsByRow = new Map<number, CrossfileDef[]>();
  private readonly seen = new Map<number, Set<string>>();

  constructor(readonly path: string) {}

  add(row: number, def: CrossfileDef): void {
    if (def.file === this.path) return;
    let keys = this.seen.get(row);
    if (!keys) this.seen.set(row, (keys = new Set()));
    const key = defKey(def);
    if (keys.has(key)) return;
    keys.add(key);
    const list = this.defsByRow.get(row);
    if (list) list.push(def);
    else this.defsByRow.set(row, [def]);
  }
}

export function rowsOf(node: Node, set: Set<number>, last = node.endPosition.row): void {
  for (let r = node.startPosition.row; r <= last; r++) set.add(r);
}

export function sameNode(a: Node | null | undefined, b: Node): boolean {
  return !!a && a.startIndex === b.startIndex && a.endIndex === b.endIndex && a.type === b.type;
}

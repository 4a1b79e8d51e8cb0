// Knowledge-base data model (CodeRAG section 2.1; docs/ARCHITECTURE.md "Knowledge base item").

export type Lang = 'python' | 'java';

/** The retrievable kinds of CodeRAG's knowledge base. */
export type ItemKind = 'function' | 'classFunction' | 'classVariable' | 'globalVariable';

export const ITEM_KINDS: readonly ItemKind[] = ['function', 'classFunction', 'classVariable', 'globalVariable'];

/** 0-based line numbers, inclusive start and end (tree-sitter rows). */
export interface LineRange {
  startLine: number;
  endLine: number;
}

export interface KbItem {
  /** Stable across runs: `${path}#${kind}:${qualifiedName}` (plus `@n` for the n-th duplicate). */
  id: string;
  kind: ItemKind;
  lang: Lang;
  /** Repo-relative path with forward slashes. */
  path: string;
  name: string;
  /** `Class.method`, `Outer.Inner.field`, or the bare name at module level. */
  qualifiedName: string;
  /** Declaration line(s) up to the body: `def f(a, b) -> int:` / `public int f(int a)` / `x: int = 3`. */
  signature: string;
  /** Docstring (Python) or Javadoc text (Java), without quotes or comment markers; '' if none. */
  docstring: string;
  range: LineRange;
  /** Enclosing class qualified name, when the item lives in a class. */
  className?: string;
  /** Self-contained stub: `# path` (or `// path`), the enclosing class header(s), the definition. */
  text: string;
}

/** Classes and interfaces (Java: also enums, records) kept as structure for later retrieval paths. */
export interface KbClass {
  name: string;
  qualifiedName: string;
  lang: Lang;
  path: string;
  kind: 'class' | 'interface' | 'enum' | 'record';
  /** Header line as written: `class Foo(Base):` / `public class Foo extends Bar implements Baz`. */
  header: string;
  /** Names of base classes / implemented interfaces as written. */
  bases: string[];
  docstring: string;
  range: LineRange;
}

/** One import statement's binding. Python: `from a.b import c as d` -> {module:'a.b', name:'c', alias:'d'}. */
export interface KbImport {
  /** Module path as written (`a.b`, `.sibling`, `java.util`); for Java the package part of the import. */
  module: string;
  /** Imported name (`c`, `List`), or undefined for `import a.b` / Java wildcard imports. */
  name?: string;
  /** Local binding name (`d`, or the name, or the first module segment for `import a.b`). */
  alias?: string;
  /** Java `import static`. */
  isStatic?: boolean;
  /** Java `.*` or Python `*`. */
  wildcard?: boolean;
  line: number;
}

/** Everything the knowledge base keeps about one source file. */
export interface FileExtraction {
  path: string;
  lang: Lang;
  items: KbItem[];
  classes: KbClass[];
  imports: KbImport[];
  /** Java `package a.b;` (undefined for Python or the default package). */
  packageName?: string;
  /** The parse had ERROR/MISSING nodes; items were still extracted from the rest of the tree. */
  hasSyntaxErrors: boolean;
}

/** Files the knowledge base added or changed, and removed, in one update. */
export interface KbChangeEvent {
  changed: string[];
  removed: string[];
}

// Cross-file usage analysis for mining benchmark cases (CCEval's construction: a target uses a
// name defined in another file of the same repository). One tree-sitter pass per file finds the
// names a line uses; the knowledge base (items, classes, imports, packages) resolves them.
//
// Python: names bound by imports (`from pkg.mod import Name [as A]`, `import pkg.mod [as m]`,
// relative imports, `from m import *`), followed through re-exports (an `__init__.py` importing
// the name) and attribute chains (`m.func`, `pkg.mod.Class.method`, `Class.member`).
// Java: types that are repository classes (imported, same package, or a wildcard import; test
// sources are never visible from main code), static imports (single and wildcard), static members
// `Type.member`, and member calls `x.method(...)`: the receiver's type comes from the innermost
// declaration in scope (local, parameter, field), a repository method's return type, a field's
// type, a cast, `new T()`, `this` / `super`; its members are looked up with those inherited from
// repository superclasses, and a type outside the repository means no use. Only when the type is
// unknown (`var`, a type variable) does a call count every classFunction `m` of a non-test
// repository class in another file, provided `m` names methods of at most
// MAX_MEMBER_CANDIDATE_CLASSES classes, is not a common JDK method (OBJECT_METHODS), and is not
// declared in the file itself. A method called without a receiver may be inherited.
// Known misses: inherited fields used as bare names, Python names
// bound by assignment (`x = mod.f` then `x()`), Java overloads are all listed (no arity check).
import type { Node } from 'web-tree-sitter';
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { Parsers } from '../engine/kb/parsers';
import type { KbClass, KbImport, KbItem, Lang } from '../engine/kb/types';
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

/**
 * Methods of Object and of the JDK interfaces repository classes commonly implement (Iterator,
 * Collection, Map, Appendable, streams, functional interfaces): a call to one on a receiver of
 * unknown type says nothing about the repository.
 */
const OBJECT_METHODS = new Set(
  (
    'toString equals hashCode getClass clone finalize notify notifyAll wait compareTo close run call get apply accept test ' +
    'hasNext next remove iterator size isEmpty contains add addAll clear put putAll containsKey containsValue keySet values entrySet getKey getValue ' +
    'append length charAt subSequence read write flush stream forEach map filter of valueOf name ordinal'
  ).split(' '),
);
/** A member call `x.m(...)` counts only when `m` names methods of at most this many repository classes. */
export const MAX_MEMBER_CANDIDATE_CLASSES = 3;

const JAVA_TYPES = new Set(['class_declaration', 'interface_declaration', 'enum_declaration', 'record_declaration', 'annotation_type_declaration']);
const JAVA_METHODS = new Set(['method_declaration', 'constructor_declaration', 'compact_constructor_declaration']);
const PY_PROPERTY_DECORATOR = /^@(?:[\w.]*\.)?(?:property|cached_property|setter|getter|deleter)\b/;
const JAVA_ACCESSOR = /^(?:get|set|is)[A-Z0-9_]/;

function defKey(d: CrossfileDef): string {
  return `${d.file}\0${d.name}\0${d.line}\0${d.kind}`;
}

function itemDef(item: KbItem): CrossfileDef {
  return { name: item.name, kind: item.kind, file: item.path, line: item.range.startLine };
}

function classDef(cls: KbClass): CrossfileDef {
  return { name: cls.name, kind: cls.kind, file: cls.path, line: cls.range.startLine };
}

type PyResolved = { kind: 'module'; key: string } | { kind: 'item'; item: KbItem } | { kind: 'class'; cls: KbClass };

/**
 * The repository's definitions, indexed for resolving the names one file uses.
 * Built once per repository from an indexed KnowledgeBase.
 */
export class RepoSymbols {
  // Python: module keys are repo paths without `.py` / `/__init__.py` (folders included).
  private readonly pyModuleFiles = new Map<string, string>();
  private readonly pyKeys = new Set<string>();
  private readonly pySuffixes = new Map<string, string[]>();
  private readonly pyResolveCache = new Map<string, PyResolved | undefined>();
  // Java
  private readonly javaClassByFq = new Map<string, KbClass>();
  private readonly javaTopLevelByPackage = new Map<string, Map<string, KbClass>>();
  private readonly javaMethodsByName = new Map<string, KbItem[]>();
  private readonly membersByClass = new Map<string, KbItem[]>();

  constructor(private readonly kb: KnowledgeBase) {
    for (const path of kb.paths()) {
      const x = kb.file(path);
      if (!x) continue;
      for (const item of x.items) {
        if (item.className !== undefined) {
          const key = `${path}\0${item.className}`;
          const list = this.membersByClass.get(key);
          if (list) list.push(item);
          else this.membersByClass.set(key, [item]);
        }
      }
      if (x.lang === 'python') this.addPythonModule(path);
      else this.addJavaFile(path, x.packageName ?? '', x.classes, x.items);
    }
    for (const key of this.pyKeys) {
      const segments = key.split('/');
      for (let i = 0; i < segments.length; i++) {
        // Only a folder that is not itself a package can be an import root (`src/`, the repo root).
        const root = segments.slice(0, i).join('/');
        if (i > 0 && this.pyModuleFiles.has(root)) continue;
        const dotted = segments.slice(i).join('.');
        const list = this.pySuffixes.get(dotted);
        if (list) list.push(key);
        else this.pySuffixes.set(dotted, [key]);
      }
    }
    for (const list of this.pySuffixes.values()) list.sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0));
  }

  private addPythonModule(path: string): void {
    const stem = path.replace(/\.pyi?$/, '');
    const key = stem.endsWith('/__init__') ? stem.slice(0, -'/__init__'.length) : stem === '__init__' ? '' : stem;
    const existing = this.pyModuleFiles.get(key);
    // A .py file wins over its .pyi stub.
    if (!existing || (existing.endsWith('.pyi') && path.endsWith('.py'))) this.pyModuleFiles.set(key, path);
    const segments = key.split('/');
    for (let i = 1; i <= segments.length; i++) this.pyKeys.add(segments.slice(0, i).join('/'));
  }

  private addJavaFile(path: string, pkg: string, classes: readonly KbClass[], items: readonly KbItem[]): void {
    // A class declared twice (main and test sources share packages) resolves to the non-test one.
    const wins = (existing: KbClass | undefined): boolean => !existing || (isTestPath(existing.path) && !isTestPath(path));
    for (const cls of classes) {
      const fq = pkg ? `${pkg}.${cls.qualifiedName}` : cls.qualifiedName;
      if (wins(this.javaClassByFq.get(fq))) this.javaClassByFq.set(fq, cls);
      if (!cls.qualifiedName.includes('.')) {
        let byName = this.javaTopLevelByPackage.get(pkg);
        if (!byName) this.javaTopLevelByPackage.set(pkg, (byName = new Map()));
        if (wins(byName.get(cls.qualifiedName))) byName.set(cls.qualifiedName, cls);
      }
    }
    for (const item of items) {
      if (item.kind !== 'classFunction') continue;
      const list = this.javaMethodsByName.get(item.name);
      if (list) list.push(item);
      else this.javaMethodsByName.set(item.name, [item]);
    }
  }

  /** Members of a class with that name; `prefer` keeps only that kind when some member has it (a field and a method may share a name). */
  members(cls: KbClass, name: string, prefer?: KbItem['kind']): KbItem[] {
    const found = (this.membersByClass.get(`${cls.path}\0${cls.qualifiedName}`) ?? []).filter((m) => m.name === name);
    if (prefer === undefined) return found;
    const preferred = found.filter((m) => m.kind === prefer);
    return preferred.length > 0 ? preferred : found;
  }

  // ---- Python -------------------------------------------------------------------------------

  /** The module key an import's module text names, seen from `fromPath`; undefined outside the repository. */
  pyModuleKey(module: string, fromPath: string): string | undefined {
    if (module.startsWith('.')) {
      const dots = module.length - module.replace(/^\.+/, '').length;
      const parts = fromPath.split('/');
      parts.pop();
      for (let i = 1; i < dots; i++) {
        if (parts.length === 0) return undefined;
        parts.pop();
      }
      const rest = module.slice(dots);
      if (rest !== '') parts.push(...rest.split('.'));
      const key = parts.join('/');
      return this.pyKeys.has(key) || this.pyModuleFiles.has(key) ? key : undefined;
    }
    // Test code (fixture projects, test helpers) never satisfies an import of non-test code.
    const candidates = this.pySuffixes.get(module) ?? [];
    if (isTestPath(fromPath)) return candidates[0];
    return candidates.find((key) => !isTestPath(`${key}.py`) && !isTestPath(`${key}/__init__.py`));
  }

  /** What `name` is inside the module `key`: a definition, a submodule, or a re-exported binding. */
  pyResolveIn(key: string, name: string, depth = 0): PyResolved | undefined {
    const cacheKey = `${key}\0${name}`;
    if (this.pyResolveCache.has(cacheKey)) return this.pyResolveCache.get(cacheKey);
    this.pyResolveCache.set(cacheKey, undefined); // cycles resolve to nothing
    const result = this.pyResolveInUncached(key, name, depth);
    this.pyResolveCache.set(cacheKey, result);
    return result;
  }

  private pyResolveInUncached(key: string, name: string, depth: number): PyResolved | undefined {
    const file = this.pyModuleFiles.get(key);
    const x = file !== undefined ? this.kb.file(file) : undefined;
    if (file !== undefined && x) {
      const item = x.items.find((i) => i.className === undefined && i.name === name);
      if (item) return { kind: 'item', item };
      const cls = x.classes.find((c) => c.qualifiedName === name);
      if (cls) return { kind: 'class', cls };
      if (depth < 6) {
        const imp = x.imports.find((i) => i.alias === name && !i.wildcard);
        if (imp) {
          const bound = this.pyBinding(imp, file, depth + 1);
          if (bound) return bound;
        }
      }
    }
    const sub = key === '' ? name : `${key}/${name}`;
    if (this.pyKeys.has(sub)) return { kind: 'module', key: sub };
    if (file !== undefined && x && depth < 6) {
      for (const imp of x.imports) {
        if (!imp.wildcard) continue;
        const from = this.pyModuleKey(imp.module, file);
        const r = from !== undefined ? this.pyResolveIn(from, name, depth + 1) : undefined;
        if (r && r.kind !== 'module') return r;
      }
    }
    return undefined;
  }

  /** What an import statement binds its alias to in `fromPath`. */
  pyBinding(imp: KbImport, fromPath: string, depth = 0): PyResolved | undefined {
    if (imp.wildcard) return undefined;
    if (imp.name !== undefined) {
      const key = this.pyModuleKey(imp.module, fromPath);
      return key !== undefined ? this.pyResolveIn(key, imp.name, depth) : undefined;
    }
    // `import a.b.c` binds `a`; `import a.b as m` binds the module a.b.
    const first = imp.module.split('.', 1)[0] ?? imp.module;
    const key = this.pyModuleKey(imp.alias === first ? first : imp.module, fromPath);
    return key !== undefined ? { kind: 'module', key } : undefined;
  }

  // ---- Java ---------------------------------------------------------------------------------

  javaClass(fq: string): KbClass | undefined {
    return this.javaClassByFq.get(fq);
  }

  javaTopLevel(pkg: string, name: string): KbClass | undefined {
    return this.javaTopLevelByPackage.get(pkg)?.get(name);
  }

  javaMethodsNamed(name: string): readonly KbItem[] {
    return this.javaMethodsByName.get(name) ?? [];
  }

  private readonly javaTypeCache = new Map<string, KbClass | undefined>();

  /**
   * The repository class a (possibly dotted) type name denotes in the file `path`: its own
   * classes (nested ones included), explicit imports, its package, wildcard imports; `Outer.Inner`
   * through the outer class. Undefined for a type outside the repository.
   */
  javaTypeIn(path: string, dotted: string): KbClass | undefined {
    const key = `${path}\0${dotted}`;
    if (this.javaTypeCache.has(key)) return this.javaTypeCache.get(key);
    this.javaTypeCache.set(key, undefined);
    const x = this.kb.file(path);
    const pkg = x?.packageName ?? '';
    const [first, ...rest] = dotted.split('.');
    let cls: KbClass | undefined;
    if (first !== undefined && x) {
      cls = x.classes.find((c) => c.name === first);
      const explicit = x.imports.find((i) => !i.isStatic && !i.wildcard && i.name === first);
      if (!cls && explicit) cls = this.javaClass(explicit.module ? `${explicit.module}.${first}` : first);
      cls ??= this.javaTopLevel(pkg, first);
      for (const w of x.imports) {
        if (cls) break;
        if (w.wildcard && !w.isStatic) cls = this.javaTopLevel(w.module, first);
      }
      // A class nested in one of the file's classes or in their repository superclasses.
      if (!cls) cls = x.classes.map((c) => this.javaNested(c, first)).find((c) => c !== undefined);
      // A fully qualified name.
      if (!cls && rest.length > 0) {
        for (let i = rest.length; i >= 1 && !cls; i--) {
          const fq = this.javaClass([first, ...rest.slice(0, i)].join('.'));
          if (fq) {
            cls = fq;
            rest.splice(0, i);
          }
        }
      }
    }
    for (const part of rest) cls = cls ? this.javaNested(cls, part) : undefined;
    if (cls && isTestPath(cls.path) && !isTestPath(path)) cls = undefined;
    this.javaTypeCache.set(key, cls);
    return cls;
  }

  /** A nested class `name` of a class or of its repository superclasses. */
  private javaNested(cls: KbClass, name: string, depth = 0): KbClass | undefined {
    const pkg = this.kb.file(cls.path)?.packageName;
    const direct = this.javaClass(`${pkg ? `${pkg}.` : ''}${cls.qualifiedName}.${name}`);
    if (direct || depth > 4) return direct;
    for (const base of this.javaBases(cls, depth)) {
      const found = this.javaNested(base, name, depth + 1);
      if (found) return found;
    }
    return undefined;
  }

  /** The repository classes a Java class extends or implements. */
  javaBases(cls: KbClass, depth = 0): KbClass[] {
    if (depth > 4) return [];
    const out: KbClass[] = [];
    for (const base of cls.bases) {
      const name = base.replace(/<[\s\S]*$/, '').replace(/\s+/g, '');
      const found = name && name !== cls.name ? this.javaTypeIn(cls.path, name) : undefined;
      if (found && found !== cls) out.push(found);
    }
    return out;
  }

  /** Members of a Java class with that name, else those it inherits from repository superclasses (nearest first). */
  javaMembersDeep(cls: KbClass, name: string, prefer?: KbItem['kind'], depth = 0, seen = new Set<KbClass>()): KbItem[] {
    if (seen.has(cls) || depth > 5) return [];
    seen.add(cls);
    const own = this.members(cls, name, prefer);
    if (own.length > 0) return own;
    for (const base of this.javaBases(cls)) {
      const found = this.javaMembersDeep(base, name, prefer, depth + 1, seen);
      if (found.length > 0) return found;
    }
    return [];
  }
}

/** Per-file resolution state: the file's own bindings, cached. */
class Uses {
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

function rowsOf(node: Node, set: Set<number>, last = node.endPosition.row): void {
  for (let r = node.startPosition.row; r <= last; r++) set.add(r);
}

function sameNode(a: Node | null | undefined, b: Node): boolean {
  return !!a && a.startIndex === b.startIndex && a.endIndex === b.endIndex && a.type === b.type;
}

/** Analyse one file: which rows use which cross-file definitions, and its candidate function bodies. */
export function analyzeFile(symbols: RepoSymbols, kb: KnowledgeBase, parsers: Parsers, path: string, lang: Lang, text: string): FileAnalysis {
  const tree = parsers.parser(lang).parse(text);
  if (!tree) return { path, lang, defsByRow: new Map(), excludedRows: new Set(), functions: [] };
  try {
    return lang === 'python' ? analyzePython(symbols, kb, path, tree.rootNode) : analyzeJava(symbols, kb, path, tree.rootNode, text);
  } finally {
    tree.delete();
  }
}

// ---- Python ------------------------------------------------------------------------------------

const PY_PARAMETER_PARENTS = new Set(['parameters', 'lambda_parameters', 'list_splat_pattern', 'dictionary_splat_pattern', 'typed_parameter']);

function analyzePython(symbols: RepoSymbols, kb: KnowledgeBase, path: string, root: Node): FileAnalysis {
  const uses = new Uses(path);
  const excludedRows = new Set<number>();
  const functions: FunctionSpan[] = [];
  const imports = kb.file(path)?.imports ?? [];
  const bindings = new Map<string, PyResolved | undefined>();
  const binding = (name: string): PyResolved | undefined => {
    if (bindings.has(name)) return bindings.get(name);
    let result: PyResolved | undefined;
    const imp = imports.find((i) => i.alias === name && !i.wildcard);
    if (imp) result = symbols.pyBinding(imp, path);
    else {
      for (const w of imports) {
        if (!w.wildcard) continue;
        const key = symbols.pyModuleKey(w.module, path);
        const r = key !== undefined ? symbols.pyResolveIn(key, name) : undefined;
        if (r && r.kind !== 'module') {
          result = r;
          break;
        }
      }
    }
    bindings.set(name, result);
    return result;
  };

  // Imports inside a function bind their names in that function only (the KB keeps module-level ones).
  const scopes: Map<string, KbImport>[] = [];
  const scopedBinding = (name: string): PyResolved | undefined => {
    for (let i = scopes.length - 1; i >= 0; i--) {
      const imp = scopes[i]!.get(name);
      if (imp) return symbols.pyBinding(imp, path);
    }
    return binding(name);
  };

  const useChain = (names: string[], rows: number[]): void => {
    let r = scopedBinding(names[0]!);
    let i = 1;
    while (r?.kind === 'module' && i < names.length) {
      r = symbols.pyResolveIn(r.key, names[i]!);
      i++;
    }
    if (!r || r.kind === 'module') return;
    const row = rows[i - 1]!;
    if (r.kind === 'item') {
      uses.add(row, itemDef(r.item));
      return;
    }
    uses.add(row, classDef(r.cls));
    if (i < names.length) for (const m of symbols.members(r.cls, names[i]!)) uses.add(rows[i]!, itemDef(m));
  };

  const visit = (node: Node, classes: string[], inFunction: boolean): void => {
    switch (node.type) {
      case 'import_statement':
      case 'import_from_statement':
      case 'future_import_statement':
        rowsOf(node, excludedRows);
        return;
      case 'comment':
        return;
      case 'string':
        // Only an f-string's interpolations hold code.
        for (const c of node.namedChildren) if (c?.type === 'interpolation') visit(c, classes, inFunction);
        return;
      case 'class_definition': {
        const body = node.childForFieldName('body');
        const name = node.childForFieldName('name')?.text ?? '';
        markHeader(node, body, excludedRows);
        for (const c of node.namedChildren) if (c && !sameNode(node.childForFieldName('name'), c)) visit(c, inFunction ? classes : [...classes, name], inFunction);
        return;
      }
      case 'function_definition': {
        const body = node.childForFieldName('body');
        const nameNode = node.childForFieldName('name');
        const headerEnd = markHeader(node, body, excludedRows);
        if (!inFunction && nameNode && body) functions.push(pythonSpan(node, nameNode.text, classes, headerEnd, body));
        const local = new Map<string, KbImport>();
        if (body) for (const imp of pythonLocalImports(body)) if (imp.alias !== undefined) local.set(imp.alias, imp);
        scopes.push(local);
        for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, classes, true);
        scopes.pop();
        return;
      }
      case 'identifier': {
        const parent = node.parent;
        if (!parent) return;
        if (PY_PARAMETER_PARENTS.has(parent.type)) return;
        if ((parent.type === 'keyword_argument' || parent.type === 'default_parameter' || parent.type === 'typed_default_parameter') && sameNode(parent.childForFieldName('name'), node)) return;
        if (parent.type === 'attribute' && sameNode(parent.childForFieldName('attribute'), node)) return;
        const names = [node.text];
        const rows = [node.startPosition.row];
        let cur = node;
        for (;;) {
          const p = cur.parent;
          if (p?.type !== 'attribute' || !sameNode(p.childForFieldName('object'), cur)) break;
          const attr = p.childForFieldName('attribute');
          if (!attr) break;
          names.push(attr.text);
          rows.push(attr.startPosition.row);
          cur = p;
        }
        useChain(names, rows);
        return;
      }
      default:
        for (const c of node.namedChildren) if (c) visit(c, classes, inFunction);
    }
  };
  visit(root, [], false);
  return { path, lang: 'python', defsByRow: uses.defsByRow, excludedRows, functions };
}

/** Import bindings anywhere in a function body, nested functions and classes excluded (they have their own scope). */
function pythonLocalImports(body: Node): KbImport[] {
  const out: KbImport[] = [];
  const walk = (node: Node): void => {
    for (const c of node.namedChildren) {
      if (!c || c.type === 'function_definition' || c.type === 'class_definition') continue;
      if (c.type === 'import_statement' || c.type === 'import_from_statement') out.push(...pythonImportBindings(c));
      else walk(c);
    }
  };
  walk(body);
  return out;
}

/** The bindings of one import statement, as the knowledge base's Python extractor records them. */
function pythonImportBindings(stmt: Node): KbImport[] {
  const line = stmt.startPosition.row;
  const out: KbImport[] = [];
  if (stmt.type === 'import_statement') {
    for (const n of stmt.childrenForFieldName('name')) {
      if (n?.type === 'aliased_import') {
        const module = n.childForFieldName('name');
        const alias = n.childForFieldName('alias');
        if (module && alias) out.push({ module: module.text, alias: alias.text, line });
      } else if (n) {
        out.push({ module: n.text, alias: n.text.split('.', 1)[0] ?? n.text, line });
      }
    }
    return out;
  }
  const module = stmt.childForFieldName('module_name')?.text ?? '';
  for (const c of stmt.childrenForFieldName('name')) {
    if (c?.type === 'aliased_import') {
      const name = c.childForFieldName('name');
      const alias = c.childForFieldName('alias');
      if (name) out.push({ module, name: name.text, alias: alias ? alias.text : name.text, line });
    } else if (c?.type === 'dotted_name') {
      out.push({ module, name: c.text, alias: c.text, line });
    }
  }
  return out;
}

/** Exclude a definition's header rows; returns the row the header ends on. */
function markHeader(node: Node, body: Node | null, excludedRows: Set<number>): number {
  const start = node.startPosition.row;
  let end = body ? Math.max(start, body.startPosition.row - 1) : start;
  // Python: the header ends at the `:`; a body on the same line makes a one-line definition.
  for (const c of node.children) {
    if (c?.type === ':') end = c.endPosition.row;
  }
  for (let r = start; r <= end; r++) excludedRows.add(r);
  return end;
}

function pythonSpan(def: Node, name: string, classes: string[], headerEndRow: number, body: Node): FunctionSpan {
  const span: FunctionSpan = { name, headerEndRow, bodyFirstRow: headerEndRow + 1, bodyLastRow: def.endPosition.row };
  if (classes.length > 0) span.className = classes.join('.');
  if (body.startPosition.row <= headerEndRow) span.excluded = 'one-line body';
  else if (name === '__init__' || name === '__new__') span.excluded = 'constructor';
  else {
    const decorated = def.parent?.type === 'decorated_definition' ? def.parent : undefined;
    for (const d of decorated?.namedChildren ?? []) {
      if (d?.type === 'decorator' && PY_PROPERTY_DECORATOR.test(d.text)) span.excluded = 'property accessor';
    }
  }
  return span;
}

// ---- Java --------------------------------------------------------------------------------------

const JAVA_DECLARATION_NAME_PARENTS = new Set([
  'variable_declarator',
  'formal_parameter',
  'spread_parameter',
  'catch_formal_parameter',
  'enum_constant',
  'labeled_statement',
  'inferred_parameters',
  'resource',
]);

function analyzeJava(symbols: RepoSymbols, kb: KnowledgeBase, path: string, root: Node, text: string): FileAnalysis {
  const uses = new Uses(path);
  const excludedRows = new Set<number>();
  const functions: FunctionSpan[] = [];
  const x = kb.file(path);
  const pkg = x?.packageName ?? '';
  const imports = x?.imports ?? [];
  const ownClassNames = new Set((x?.classes ?? []).map((c) => c.name));
  const ownMemberNames = new Set((x?.items ?? []).map((i) => i.name));
  const typeCache = new Map<string, KbClass | undefined>();

  const resolveType = (name: string): KbClass | undefined => {
    if (typeCache.has(name)) return typeCache.get(name);
    let cls: KbClass | undefined;
    if (!ownClassNames.has(name)) {
      const explicit = imports.find((i) => !i.isStatic && !i.wildcard && i.name === name);
      if (explicit) cls = symbols.javaClass(explicit.module ? `${explicit.module}.${name}` : name);
      else {
        cls = symbols.javaTopLevel(pkg, name);
        for (const w of imports) {
          if (cls) break;
          if (w.wildcard && !w.isStatic) cls = symbols.javaTopLevel(w.module, name);
        }
      }
    }
    // Main code never compiles against test sources (a test helper named like a JDK class).
    const result = cls && cls.path !== path && !(isTestPath(cls.path) && !isTestPath(path)) ? cls : undefined;
    typeCache.set(name, result);
    return result;
  };

  /** `Outer.Inner` resolves `Outer` in this file, then its nested class. */
  const resolveTypePath = (dotted: string): KbClass | undefined => {
    const [first, ...rest] = dotted.split('.');
    const outer = first !== undefined ? resolveType(first) : undefined;
    if (!outer || rest.length === 0) return outer;
    const outerPkg = kb.file(outer.path)?.packageName;
    return symbols.javaClass(`${outerPkg ? `${outerPkg}.` : ''}${outer.qualifiedName}.${rest.join('.')}`);
  };

  const staticMember = (name: string): KbItem[] => {
    for (const i of imports) {
      if (i.isStatic && !i.wildcard && i.name === name) {
        const cls = symbols.javaClass(i.module);
        return cls ? symbols.members(cls, name) : [];
      }
    }
    for (const i of imports) {
      if (!i.isStatic || !i.wildcard) continue;
      const cls = symbols.javaClass(i.module);
      const found = cls ? symbols.members(cls, name) : [];
      if (found.length > 0) return found;
    }
    return [];
  };

  const declared = javaDeclarations(root);
  const ownClass = (classes: string[]): KbClass | undefined => (x?.classes ?? []).find((c) => c.qualifiedName === classes.join('.'));

  /** The repository class a declared type text names, seen from `from` (undefined: outside the repository). */
  const typeClass = (typeText: string, from: string): KbClass | undefined => {
    const simple = typeText.replace(/@\w+(\([^)]*\))?/g, ' ').replace(/<[\s\S]*$/, '').replace(/\[\s*\]/g, '').replace(/\s+/g, '');
    if (simple === '' || simple === 'var') return undefined;
    return from === path ? resolveTypePath(simple) ?? ownTypePath(simple) : symbols.javaTypeIn(from, simple);
  };
  /** `Own` or `Own.Inner`, classes of this file (a receiver typed by one, for inherited members). */
  const ownTypePath = (dotted: string): KbClass | undefined => symbols.javaTypeIn(path, dotted);

  /**
   * What a call's receiver is: a repository class (its members, inherited ones included), a type
   * outside the repository or a type variable (`outside`: no definition), or unknown (undefined).
   */
  const receiverType = (node: Node | null, classes: string[], depth = 0): Receiver => {
    if (!node || depth > 6) return undefined;
    switch (node.type) {
      case 'this':
      case 'super': {
        const own = ownClass(classes);
        if (!own) return undefined;
        if (node.type === 'this') return { cls: own };
        const bases = symbols.javaBases(own);
        return bases[0] ? { cls: bases[0] } : own.bases.length > 0 ? 'outside' : undefined;
      }
      case 'identifier': {
        const type = declared(node.text, node);
        if (type === null) return undefined;
        if (type !== undefined) return typeOrOutside(typeClass(type, path), type);
        if (/^[A-Z]/.test(node.text)) return typeOrOutside(resolveType(node.text) ?? ownTypePath(node.text), node.text);
        // A field inherited from a repository superclass.
        const own = ownClass(classes);
        const field = own ? symbols.javaMembersDeep(own, node.text, 'classVariable').find((m) => m.kind === 'classVariable') : undefined;
        return field ? typeOfMember(field) : undefined;
      }
      case 'field_access': {
        const object = node.childForFieldName('object');
        const field = node.childForFieldName('field');
        if (!field) return undefined;
        if (object?.type === 'this') {
          const type = declared(field.text, node, true);
          if (type === null) return undefined;
          if (type !== undefined) return typeOrOutside(typeClass(type, path), type);
        }
        const owner = receiverType(object, classes, depth + 1);
        if (owner === undefined || owner === 'outside') return owner;
        const member = symbols.javaMembersDeep(owner.cls, field.text, 'classVariable').find((m) => m.kind === 'classVariable');
        if (member) return typeOfMember(member);
        const nested = symbols.javaTypeIn(owner.cls.path, `${owner.cls.qualifiedName}.${field.text}`);
        return nested ? { cls: nested } : undefined;
      }
      case 'method_invocation': {
        const object = node.childForFieldName('object');
        const name = node.childForFieldName('name')?.text;
        if (!name) return undefined;
        const owner = object ? receiverType(object, classes, depth + 1) : ownClass(classes) ? { cls: ownClass(classes)! } : undefined;
        if (owner === undefined || owner === 'outside') return owner;
        const methods = symbols.javaMembersDeep(owner.cls, name, 'classFunction').filter((m) => m.kind === 'classFunction');
        const types = new Set(methods.map((m) => javaReturnType(m)).filter((t): t is string => t !== undefined));
        // Overloads returning different types, or none known: unknown.
        if (types.size !== 1) return undefined;
        const type = [...types][0]!;
        return typeOrOutside(typeClass(type, methods[0]!.path), type);
      }
      case 'object_creation_expression': {
        const type = node.childForFieldName('type');
        return type ? typeOrOutside(typeClass(type.text, path), type.text) : undefined;
      }
      case 'cast_expression': {
        const type = node.childForFieldName('type');
        return type ? typeOrOutside(typeClass(type.text, path), type.text) : undefined;
      }
      case 'parenthesized_expression':
        return receiverType(node.namedChild(0), classes, depth + 1);
      case 'string_literal':
      case 'array_creation_expression':
      case 'class_literal':
        return 'outside';
      default:
        return undefined;
    }
  };
  const typeOfMember = (m: KbItem): Receiver => {
    const type = javaFieldType(m);
    return type === undefined ? undefined : typeOrOutside(typeClass(type, m.path), type);
  };

  const memberCall = (row: number, name: string, receiver: Node | null, classes: string[]): void => {
    // A receiver whose type is known decides: its class's members (inherited ones included), or nothing outside the repository.
    const type = receiverType(receiver, classes);
    if (type === 'outside') return;
    if (type) {
      for (const m of symbols.javaMembersDeep(type.cls, name, 'classFunction')) uses.add(row, itemDef(m));
      return;
    }
    // `Type.method(...)` on a type outside the repository (`Objects.requireNonNull`).
    if (receiver?.type === 'identifier' && /^[A-Z]/.test(receiver.text)) return;
    if (OBJECT_METHODS.has(name) || ownMemberNames.has(name)) return;
    const candidates = symbols.javaMethodsNamed(name).filter((m) => m.path !== path && !isTestPath(m.path));
    const classes2 = new Set(candidates.map((m) => `${m.path}\0${m.className ?? ''}`));
    if (classes2.size === 0 || classes2.size > MAX_MEMBER_CANDIDATE_CLASSES) return;
    for (const m of candidates) uses.add(row, itemDef(m));
  };

  const visit = (node: Node, classes: string[], inMethod: boolean): void => {
    const t = node.type;
    if (t === 'import_declaration' || t === 'package_declaration') {
      rowsOf(node, excludedRows);
      return;
    }
    if (t === 'line_comment' || t === 'block_comment' || t === 'string_literal' || t === 'character_literal') return;
    if (JAVA_TYPES.has(t)) {
      const body = node.childForFieldName('body');
      const nameNode = node.childForFieldName('name');
      markJavaHeader(node, body, excludedRows);
      const inner = inMethod ? classes : [...classes, nameNode?.text ?? ''];
      for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, inner, inMethod);
      return;
    }
    if (JAVA_METHODS.has(t)) {
      const body = node.childForFieldName('body');
      const nameNode = node.childForFieldName('name');
      markJavaHeader(node, body, excludedRows);
      if (!inMethod && body && nameNode) {
        const span = javaSpan(t, nameNode.text, classes, body, text);
        if (span) functions.push(span);
      }
      for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, classes, true);
      return;
    }
    switch (t) {
      case 'type_identifier': {
        // In `Outer.Inner` only the outer name is looked up.
        const parent = node.parent;
        if (parent?.type === 'scoped_type_identifier' && !sameNode(parent.namedChildren[0], node)) return;
        const cls = resolveType(node.text);
        if (cls) uses.add(node.startPosition.row, classDef(cls));
        return;
      }
      case 'method_invocation': {
        const object = node.childForFieldName('object');
        const nameNode = node.childForFieldName('name');
        if (nameNode) {
          const name = nameNode.text;
          const row = nameNode.startPosition.row;
          if (!object) {
            const statics = staticMember(name);
            for (const m of statics) uses.add(row, itemDef(m));
            // A method inherited from a repository superclass, called without a receiver.
            const own = ownClass(classes);
            if (statics.length === 0 && own && !ownMemberNames.has(name)) for (const m of symbols.javaMembersDeep(own, name, 'classFunction')) uses.add(row, itemDef(m));
          } else {
            const cls = object.type === 'identifier' && declared(object.text, object) === undefined ? resolveType(object.text) : undefined;
            if (cls) for (const m of symbols.javaMembersDeep(cls, name, 'classFunction')) uses.add(row, itemDef(m));
            else memberCall(row, name, object, classes);
          }
        }
        for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, classes, inMethod);
        return;
      }
      case 'field_access': {
        const object = node.childForFieldName('object');
        const field = node.childForFieldName('field');
        if (object && field && object.type !== 'this') {
          // `Type.FIELD`, or a field of a receiver whose type is a repository class.
          const cls = object.type === 'identifier' && declared(object.text, object) === undefined ? resolveType(object.text) : undefined;
          const owner = cls ? { cls } : receiverType(object, classes);
          if (owner && owner !== 'outside') for (const m of symbols.javaMembersDeep(owner.cls, field.text, 'classVariable').filter((m) => m.kind === 'classVariable')) uses.add(field.startPosition.row, itemDef(m));
        }
        if (object) visit(object, classes, inMethod);
        return;
      }
      case 'identifier': {
        const parent = node.parent;
        if (parent && JAVA_DECLARATION_NAME_PARENTS.has(parent.type) && sameNode(parent.childForFieldName('name'), node)) return;
        if (parent?.type === 'inferred_parameters' || parent?.type === 'lambda_expression') return;
        const row = node.startPosition.row;
        const statics = staticMember(node.text);
        if (statics.length > 0) {
          for (const m of statics) uses.add(row, itemDef(m));
          return;
        }
        if (/^[A-Z]/.test(node.text)) {
          const cls = resolveType(node.text);
          if (cls) uses.add(row, classDef(cls));
        }
        return;
      }
      default:
        for (const c of node.namedChildren) if (c) visit(c, classes, inMethod);
    }
  };
  visit(root, [], false);
  return { path, lang: 'java', defsByRow: uses.defsByRow, excludedRows, functions };
}

const JAVA_TYPED_DECLARATIONS = new Set(['formal_parameter', 'spread_parameter', 'catch_formal_parameter', 'resource', 'enhanced_for_statement']);

/** A call receiver's type: a repository class, `outside` (a JDK or library type, a type variable), or unknown (undefined). */
type Receiver = { cls: KbClass } | 'outside' | undefined;

function typeOrOutside(cls: KbClass | undefined, typeText: string): Receiver {
  if (cls) return { cls };
  // A type variable (`T`, `E2`) may stand for a repository class: unknown, not outside.
  return /^[A-Z][A-Z0-9]?$/.test(typeText.replace(/<[\s\S]*$/, '').trim()) ? undefined : 'outside';
}

interface JavaDeclaration {
  type: string | null;
  /** Offsets of the scope the name is visible in, and where the declaration starts. */
  scopeStart: number;
  scopeEnd: number;
  at: number;
  field: boolean;
}

/**
 * The declared type of a variable name at a use: the innermost declaration (local, parameter,
 * enhanced-for or resource variable, catch parameter, field) whose scope holds the use and, for a
 * local, that starts before it. Returns the type's text, null for `var` or an unreadable type,
 * undefined when the name is not declared in the file (a class name, an inherited field).
 * `fieldsOnly`: `this.x`.
 */
function javaDeclarations(root: Node): (name: string, use: Node, fieldsOnly?: boolean) => string | null | undefined {
  const byName = new Map<string, JavaDeclaration[]>();
  const record = (name: string, typeNode: Node | null, scope: Node | null, at: number, field: boolean): void => {
    if (!scope) return;
    const text = typeNode?.text.replace(/\s+/g, ' ').trim();
    const decl: JavaDeclaration = { type: text && text !== 'var' ? text : null, scopeStart: scope.startIndex, scopeEnd: scope.endIndex, at: field ? scope.startIndex : at, field };
    const list = byName.get(name);
    if (list) list.push(decl);
    else byName.set(name, [decl]);
  };
  const visit = (node: Node): void => {
    if (node.type === 'variable_declarator') {
      const parent = node.parent;
      const name = node.childForFieldName('name');
      if (name && parent && (parent.type === 'local_variable_declaration' || parent.type === 'field_declaration' || parent.type === 'constant_declaration')) {
        const field = parent.type !== 'local_variable_declaration';
        record(name.text, parent.childForFieldName('type'), parent.parent, node.startIndex, field);
      }
    } else if (JAVA_TYPED_DECLARATIONS.has(node.type)) {
      const name = node.childForFieldName('name') ?? node.namedChildren.find((c) => c?.type === 'identifier') ?? null;
      const type = node.childForFieldName('type') ?? node.namedChildren.find((c) => c && /type/.test(c.type)) ?? null;
      // Parameters are visible in their method or lambda; a catch parameter in its clause; a resource in its try.
      let scope: Node | null = node.type === 'enhanced_for_statement' ? node : node.parent;
      while (scope && (scope.type === 'formal_parameters' || scope.type === 'resource_specification' || scope.type === 'catch_formal_parameter')) scope = scope.parent;
      if (name) record(name.text, type, scope, node.startIndex, false);
    } else if (node.type === 'record_declaration') {
      for (const p of node.childForFieldName('parameters')?.namedChildren ?? []) {
        const name = p?.childForFieldName('name');
        if (p && name) record(name.text, p.childForFieldName('type'), node, node.startIndex, true);
      }
    }
    for (const c of node.namedChildren) if (c) visit(c);
  };
  visit(root);
  return (name, use, fieldsOnly = false) => {
    let best: JavaDeclaration | undefined;
    for (const d of byName.get(name) ?? []) {
      if (fieldsOnly && !d.field) continue;
      if (use.startIndex < d.scopeStart || use.startIndex > d.scopeEnd || use.startIndex < d.at) continue;
      if (!best || d.scopeEnd - d.scopeStart < best.scopeEnd - best.scopeStart) best = d;
    }
    return best === undefined ? undefined : best.type;
  };
}

/** A Java method's declared return type, from its signature (modifiers, annotations and type parameters dropped). */
function javaReturnType(m: KbItem): string | undefined {
  const sig = m.signature.replace(/@\w+(\.\w+)*(\([^)]*\))?/g, ' ');
  const at = sig.indexOf(`${m.name}(`);
  if (at <= 0) return undefined;
  const head = sig.slice(0, at).replace(/\b(public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\b/g, ' ').replace(/^\s*<[^>]*(<[^>]*>[^>]*)*>/, ' ').trim();
  return head === '' || head === 'void' ? undefined : head;
}

/** A Java field's declared type, from its signature. */
function javaFieldType(m: KbItem): string | undefined {
  const decl = (m.signature.split('=', 1)[0] ?? '').replace(/@\w+(\.\w+)*(\([^)]*\))?/g, ' ');
  const at = decl.lastIndexOf(m.name);
  if (at <= 0) return undefined;
  const head = decl.slice(0, at).replace(/\b(public|protected|private|static|final|transient|volatile)\b/g, ' ').trim();
  return head === '' ? undefined : head;
}

function simpleTypeName(type: Node): string | undefined {
  switch (type.type) {
    case 'type_identifier':
      return type.text;
    case 'generic_type':
    case 'array_type':
    case 'annotated_type': {
      const inner = type.namedChildren.find((c) => c && c.type !== 'type_arguments' && c.type !== 'dimensions' && !c.type.endsWith('annotation'));
      return inner ? simpleTypeName(inner) : undefined;
    }
    case 'scoped_type_identifier':
      return type.text.replace(/\s+/g, '');
    default:
      // Primitive types, `var` and anything unusual: a name that is never a repository class.
      return type.text;
  }
}

/** The variable a call's receiver names: `x` or `this.x`. */
function receiverName(receiver: Node | null): string | undefined {
  if (receiver?.type === 'identifier') return receiver.text;
  if (receiver?.type === 'field_access' && receiver.childForFieldName('object')?.type === 'this') return receiver.childForFieldName('field')?.text;
  return undefined;
}

/** Java headers run from the declaration (annotations included) to the row of the body's `{`. */
function markJavaHeader(node: Node, body: Node | null, excludedRows: Set<number>): void {
  const end = body ? body.startPosition.row : node.endPosition.row;
  for (let r = node.startPosition.row; r <= end; r++) excludedRows.add(r);
}

function javaSpan(type: string, name: string, classes: string[], body: Node, text: string): FunctionSpan | undefined {
  const openRow = body.startPosition.row;
  const closeRow = body.endPosition.row;
  const span: FunctionSpan = { name, headerEndRow: openRow, bodyFirstRow: openRow + 1, bodyLastRow: closeRow - 1 };
  if (classes.length > 0) span.className = classes.join('.');
  if (type !== 'method_declaration') span.excluded = 'constructor';
  else if (JAVA_ACCESSOR.test(name)) span.excluded = 'getter or setter';
  else if (closeRow <= openRow + 1) span.excluded = 'one-line body';
  else {
    // The `{` must end its line and the `}` must stand alone, so the body is whole lines.
    const afterOpen = text.slice(body.startIndex + 1, text.indexOf('\n', body.startIndex) < 0 ? text.length : text.indexOf('\n', body.startIndex));
    const lineStart = text.lastIndexOf('\n', body.endIndex - 1) + 1;
    const beforeClose = text.slice(lineStart, body.endIndex - 1);
    if (afterOpen.trim() !== '' && !afterOpen.trim().startsWith('//')) span.excluded = 'code after the opening brace';
    else if (beforeClose.trim() !== '') span.excluded = 'code before the closing brace';
  }
  return span;
}

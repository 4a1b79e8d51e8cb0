// The repository's definitions as the case miner resolves names with them: its own judgement of
// what a name of one file denotes in another (test sources never satisfy main code, a .py file
// wins over its stub), independent of the engine's symbol table, which the benchmark measures.
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { KbClass, KbImport, KbItem } from '../engine/kb/types';
import { isTestPath } from './crossfileUses';

export type PyResolved = { kind: 'module'; key: string } | { kind: 'item'; item: KbItem } | { kind: 'class'; cls: KbClass };

/**
 * The repository's definitions, indexed for resolving the names one file uses.
 * Built once per repository from an indexed KnowledgeBase.
 */
export class CrossfileSymbols {
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
    for (const list of this.pySuffixes.values())
      list.sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0));
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

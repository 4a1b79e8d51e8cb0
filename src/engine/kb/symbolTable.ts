// The repository's symbol table (DraCo's repository context graph, kept to what the walk needs):
// Python module paths -> files (absolute, relative, src/ layouts and package roots in subfolders),
// Java fully qualified class names -> classes, class members. One per knowledge base (KbSymbols), and kept with it
// since it reads nothing but the knowledge base's types; the evaluator that walks it is engine/symbols.
import type { FileExtraction, KbClass, KbItem } from './types';

export interface SymbolSource {
  paths(): string[];
  file(path: string): FileExtraction | undefined;
}

function dir(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export function commonPrefixLength(a: string, b: string): number {
  const as = a.split('/');
  const bs = b.split('/');
  let n = 0;
  while (n < as.length && n < bs.length && as[n] === bs[n]) n++;
  return n;
}

/**
 * Of several copies of one definition, the one sharing the longest path prefix with `fromPath`
 * (the same module / source root), then one outside test, build and vendored folders, then the first.
 */
export function nearestCopy<T extends { path: string }>(copies: readonly T[], fromPath: string): T | undefined {
  let best: T | undefined;
  let bestKey = [-1, -1];
  for (const c of copies) {
    const key = [commonPrefixLength(c.path, fromPath), SECONDARY_TREE.test(c.path) ? 0 : 1];
    if (key[0]! > bestKey[0]! || (key[0] === bestKey[0] && key[1]! > bestKey[1]!)) {
      best = c;
      bestKey = key;
    }
  }
  return best;
}

/** Folders holding a copy a file does not compile against when another copy exists: tests, build outputs, vendored trees. */
export const SECONDARY_TREE =
  /(^|\/)(tests?|build|target|dist|out|vendor|vendored|_vendor|third_party|thirdparty|node_modules|site-packages)\//;

/** Java test source trees (Maven / Gradle `src/test/`, a `test` or `tests` folder). */
const JAVA_TEST_TREE = /(^|\/)(src\/test|tests?)\//;

export class SymbolTable {
  private readonly pyFiles = new Set<string>();
  /** Every folder holding a Python file, directly or below. */
  private readonly pyDirs = new Set<string>(['']);
  /** Dotted module name (every suffix of a module's path) -> module keys (`a/b` for a/b.py or a/b/__init__.py). */
  private readonly pyModules = new Map<string, string[]>();
  /** Fully qualified name -> its classes: one, or several copies in different source roots. */
  private readonly javaClasses = new Map<string, KbClass[]>();
  private readonly classesByName = new Map<string, KbClass[]>();
  /** Java package name -> its top-level classes (every copy). */
  private readonly packageClasses = new Map<string, KbClass[]>();
  private readonly members = new Map<string, KbItem[]>();
  private readonly topLevel = new Map<string, Map<string, KbItem | KbClass>>();
  private readonly memo = new Map<string, unknown>();

  constructor(private readonly source: SymbolSource) {
    const files = source.paths().flatMap((path) => {
      const x = source.file(path);
      return x ? [{ path, x }] : [];
    });
    // Python files first: a module's names depend on which folders are packages (hold __init__.py).
    for (const { path, x } of files) if (x.lang === 'python') this.pyFiles.add(path);
    for (const path of this.pyFiles) this.addPythonModule(path);
    for (const { path, x } of files) {
      const top = new Map<string, KbItem | KbClass>();
      for (const c of x.classes) {
        if (!c.qualifiedName.includes('.')) top.set(c.name, c);
        const list = this.classesByName.get(c.name);
        if (list) list.push(c);
        else this.classesByName.set(c.name, [c]);
        if (x.lang === 'java') {
          const fq = x.packageName ? `${x.packageName}.${c.qualifiedName}` : c.qualifiedName;
          const copies = this.javaClasses.get(fq);
          if (copies) copies.push(c);
          else this.javaClasses.set(fq, [c]);
          if (!c.qualifiedName.includes('.')) {
            const inPackage = this.packageClasses.get(x.packageName ?? '');
            if (inPackage) inPackage.push(c);
            else this.packageClasses.set(x.packageName ?? '', [c]);
          }
        }
      }
      for (const item of x.items) {
        if (item.className === undefined) {
          if (!top.has(item.name)) top.set(item.name, item);
        } else {
          const key = `${path}#${item.className}`;
          const list = this.members.get(key);
          if (list) list.push(item);
          else this.members.set(key, [item]);
        }
      }
      this.topLevel.set(path, top);
    }
  }

  /**
   * A module's dotted names: every suffix of its path that does not start inside a package (a folder
   * with __init__.py), and every package directory above it, so `import pkg` finds src/pkg too while
   * flask/typing.py is `flask.typing`, never the standard library's `typing` (an absolute import
   * cannot skip its package). Without __init__.py files (namespace packages, scripts) every suffix.
   */
  private addPythonModule(path: string): void {
    for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) this.pyDirs.add(path.slice(0, i));
    const noExt = path.replace(/\.pyi?$/, '');
    const key = noExt.endsWith('/__init__') ? noExt.slice(0, -'/__init__'.length) : noExt;
    const parts = key.split('/');
    // The first part of the run of packages that holds the module: a name may start there or above.
    let top = parts.length - 1;
    while (top > 0 && this.isPackage(parts.slice(0, top).join('/'))) top--;
    for (let end = parts.length; end >= 1; end--) {
      const moduleKey = parts.slice(0, end).join('/');
      for (let start = 0; start <= Math.min(top, end - 1); start++) {
        const dotted = parts.slice(start, end).join('.');
        const list = this.pyModules.get(dotted);
        if (!list) this.pyModules.set(dotted, [moduleKey]);
        else if (!list.includes(moduleKey)) list.push(moduleKey);
      }
    }
  }

  private isPackage(dirKey: string): boolean {
    return this.pyFiles.has(`${dirKey}/__init__.py`) || this.pyFiles.has(`${dirKey}/__init__.pyi`);
  }

  /** The module key for an import as written in `fromPath` (relative imports resolved against its package). */
  pythonModule(module: string, fromPath: string): string | undefined {
    const dots = /^\.*/.exec(module)?.[0].length ?? 0;
    if (dots > 0) {
      let base = dir(fromPath);
      for (let i = 1; i < dots; i++) base = dir(base);
      const rest = module.slice(dots).replace(/\./g, '/');
      const key = rest === '' ? base : base === '' ? rest : `${base}/${rest}`;
      return this.moduleExists(key) ? key : undefined;
    }
    const keys = this.pyModules.get(module);
    if (!keys || keys.length === 0) return undefined;
    // Prefer the candidate nearest the importing file, then the shortest.
    return [...keys].sort(
      (a, b) => commonPrefixLength(b, fromPath) - commonPrefixLength(a, fromPath) || a.length - b.length || (a < b ? -1 : 1),
    )[0];
  }

  moduleExists(key: string): boolean {
    return this.pythonModuleFile(key) !== undefined || this.pyDirs.has(key);
  }

  /** The names of a module key's direct submodules and subpackages (`pkg/a.py`, `pkg/b/` -> a, b). */
  pythonSubmodules(key: string): string[] {
    const prefix = key === '' ? '' : `${key}/`;
    const out = new Set<string>();
    for (const p of [...this.pyFiles, ...this.pyDirs]) {
      if (!p.startsWith(prefix) || p === key) continue;
      const rest = p.slice(prefix.length);
      const name = rest.split('/')[0]!.replace(/\.pyi?$/, '');
      if (name !== '' && name !== '__init__') out.add(name);
    }
    return [...out];
  }

  /** The file of a module key: key.py, else key/__init__.py, else undefined (a namespace folder). */
  pythonModuleFile(key: string): string | undefined {
    for (const p of [`${key}.py`, `${key}.pyi`, `${key}/__init__.py`]) if (this.pyFiles.has(p)) return p;
    return undefined;
  }

  /**
   * The class of a fully qualified name; with several copies (a main and a legacy source tree, a
   * vendored copy), the nearest copy to `fromPath` (nearestCopy).
   */
  javaClass(fqcn: string, fromPath?: string): KbClass | undefined {
    const copies = this.javaClasses.get(fqcn);
    if (!copies || fromPath === undefined) return copies?.[0];
    // Main code does not compile against test sources.
    const visible = JAVA_TEST_TREE.test(fromPath) ? copies : copies.filter((c) => !JAVA_TEST_TREE.test(c.path));
    return visible.length <= 1 ? visible[0] : nearestCopy(visible, fromPath);
  }

  /** The top-level classes of a Java package, one per name: the copy javaClass would pick from `fromPath`. */
  javaPackageClasses(packageName: string, fromPath: string): KbClass[] {
    const names = new Set((this.packageClasses.get(packageName) ?? []).map((c) => c.qualifiedName));
    const prefix = packageName ? `${packageName}.` : '';
    return [...names].flatMap((n) => this.javaClass(prefix + n, fromPath) ?? []);
  }

  classesNamed(name: string): readonly KbClass[] {
    return this.classesByName.get(name) ?? [];
  }

  /** Module-level definition (class, function or variable) of a file. */
  topLevelDefinition(path: string, name: string): KbItem | KbClass | undefined {
    return this.topLevel.get(path)?.get(name);
  }

  topLevelDefinitions(path: string): Array<KbItem | KbClass> {
    return [...(this.topLevel.get(path)?.values() ?? [])];
  }

  classMembers(cls: KbClass): readonly KbItem[] {
    return this.membersOf(cls.path, cls.qualifiedName);
  }

  membersOf(path: string, classQualifiedName: string): readonly KbItem[] {
    return this.members.get(`${path}#${classQualifiedName}`) ?? [];
  }

  nestedClass(cls: KbClass, name: string): KbClass | undefined {
    return this.source.file(cls.path)?.classes.find((c) => c.qualifiedName === `${cls.qualifiedName}.${name}`);
  }

  file(path: string): FileExtraction | undefined {
    return this.source.file(path);
  }

  /** A value derived from these tables (a class or module summary), built once per key. */
  cached<T>(key: string, build: () => T): T {
    if (this.memo.has(key)) return this.memo.get(key) as T;
    const value = build();
    this.memo.set(key, value);
    return value;
  }
}

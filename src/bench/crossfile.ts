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
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { Parsers } from '../engine/kb/parsers';
import type { Lang } from '../engine/kb/types';
import type { CrossfileSymbols } from './crossfileSymbols';
import { analyzeJava } from './crossfileJava';
import { analyzePython } from './crossfilePython';
import type { FileAnalysis } from './crossfileUses';

export { CrossfileSymbols } from './crossfileSymbols';
export { isTestPath, type FileAnalysis } from './crossfileUses';

/** Analyse one file: which rows use which cross-file definitions, and its candidate function bodies. */
export function analyzeFile(
  symbols: CrossfileSymbols,
  kb: KnowledgeBase,
  parsers: Parsers,
  path: string,
  lang: Lang,
  text: string,
): FileAnalysis {
  const tree = parsers.parser(lang).parse(text);
  if (!tree) return { path, lang, defsByRow: new Map(), excludedRows: new Set(), functions: [] };
  try {
    return lang === 'python' ? analyzePython(symbols, kb, path, tree.rootNode) : analyzeJava(symbols, kb, path, tree.rootNode, text);
  } finally {
    tree.delete();
  }
}

// Dataflow retrieval's ranking: walks the unfinished file's dataflow graph back from the last
// line's variables (the evaluator, engine/symbols) and ranks what the walk reaches by its distance:
// the line's direct dependencies, the chains used above, the types the enclosing code uses, the
// imports not used yet, then the other imports, each resolved to a snippet (an item, or a class or
// module summary).
import type { KbClass, KbImport, KbItem } from '../../kb/types';
import { snippetOfItem, type ScoredSnippet, type Snippet } from '../types';
import { chainText, type Chain } from '../../flow/flowGraph';
import { entityOf, Evaluator, type Entity, type Scope } from '../../symbols/evaluate';
import type { SymbolTable } from '../../kb/symbolTable';
import { identifierTokens } from '../../util/codeText';
import { alsoList, classSummary, declarationLine, MAX_MODULE_LINES, moduleName, moduleSummary, nearOverlap } from './summaries';

const LEAD_DEPTH = 2;
/** Where chains used above the seed line start their walk: below the leads, above the import fallback. */
const RECENT_DEPTH = 3;
/**
 * Where the classes of the types the enclosing class and method use (FileFlow.typeRefs) are
 * emitted: after the direct dependencies of the line, just ahead of the chains used above. Chosen
 * on 59 cases of antlr4, jsoup and commons-lang3 (seed 7; the other four dev repositories held
 * out), dataflow alone / reranked recall@10: depth 2.75 0.862 / 0.879, 3 0.850 / 0.879, 4 (after
 * the chains used above) 0.850 / 0.879, without type references 0.850 / 0.862.
 */
const TYPE_REF_DEPTH = 2.75;
/**
 * Where imports the prefix has not used yet are emitted: after the chains used above, before the
 * other imports. Dev repositories, merged recall@10 Python / Java: depth 3 ahead of the chains used
 * above 0.688 / 0.820; depth 5 after them 0.718 / 0.842; not emitted 0.703 / 0.842.
 */
const UNUSED_IMPORT_DEPTH = 5;
/**
 * Where the summaries of a Python file's imported names (emitImportGroups) are placed: after the
 * direct dependencies of the unfinished line (leads, up to LEAD_DEPTH), before the chains used
 * above (RECENT_DEPTH). Dev Python cases, merged recall@10: not emitted 0.765; at depth 3 (after
 * the chains used above) 0.765; here 0.865 (0.868 with one-line groups for single names, whose
 * duplicates of the item take places; 0.848 with single names left out; 0.825 in import order).
 * Java imports name classes, whose summaries the chains already bring: 0.858 with groups, 0.870 without.
 */
const IMPORT_GROUP_DEPTH = 2.5;
/**
 * Where the definitions a Python file reads from an imported repository module (`from . import
 * exceptions` ... `exceptions.BadRequestKeyError(key)`) are emitted, wherever in the file it read
 * them: after the imports not used yet, before the other imports. The chains used above reach
 * only the last MAX_RECENT_CHAINS distinct chains, and a module import has no import group.
 * Validation Python line cases (160), merged and reranked recall@10 / full@10: 0.963 / 0.963 ->
 * 0.969 / 0.969 (classes 0.960 -> 0.980; werkzeug/3 gained, none lost) at depth 3, 4, 6 or 8; the
 * top ten changed in 19 / 8 / 7 / 7 cases. In the import groups at their depth instead: 0.963, and
 * dev 0.938 -> 0.912. Dev Python (40): 0.938 / 0.925 at every depth (4 cases' top ten changed).
 */
const MODULE_ATTRIBUTE_DEPTH = 6;
/**
 * The classes of a Java file's own package and of its wildcard imports are visible without an
 * import naming them, so neither the chains nor the import fallback reach them when the last
 * RECENT_LINES lines have not used them. Those sharing words with the lines just above are emitted
 * at RECENT_DEPTH (after the chains used above), those only used further up at this depth (before
 * the imports not used yet); at most MAX_PACKAGE_CLASSES. Validation Java line cases (120), merged
 * and reranked recall@10 with the last-3 query: without them 0.870; sharing words at depth 2.7
 * 0.908, 2.9 0.916, 3 0.920, 3.5 0.912, 4 0.912 (used-only at 3 or 4: the same); at depth 3, at
 * most 4 / 6 / 8 classes: 0.912 / 0.945 / 0.920 (dev Java: 0.929 / 0.929 / 0.911).
 */
const PACKAGE_CLASS_DEPTH = 4;
const MAX_PACKAGE_CLASSES = 6;
/**
 * A package class the file does not use and that shares at least this many words with the lines
 * just above is a sibling of the code being written (`ProxiedKeyedObjectPool` beside
 * `ProxiedObjectPool`), whose fields' types are likely this code's too: at most MAX_SIBLING_TYPES of
 * those types (package classes not picked yet) are emitted at PACKAGE_CLASS_DEPTH. Validation Java
 * line cases (120), merged and reranked, recall@10 / full@10 0.945 / 0.925 -> 0.953 / 0.933,
 * interfaces 0.786 -> 0.857 (14): one case gained (commons-pool2/38, `private final ProxySource<V>
 * proxySource;`), none lost, the top ten changed in 8 cases. Two or three words, depth 3, 4 or 5:
 * the same recall. Dev Java: no top ten changed (0.929 / 0.911).
 */
const SIBLING_MIN_WORDS = 2;
const MAX_SIBLING_TYPES = 3;
/** Ranks of the import groups: a name used in the chains above ranks by their order, below MAX_RANK. */
const MAX_RANK = 1000;

interface FlowResolution {
  results: ScoredSnippet[];
  /** Nodes and edges of the walk, for the trace. */
  visited: number;
}

export class FlowRanker {
  private readonly emitted = new Map<string, ScoredSnippet & { order: number }>();
  private readonly scopeImports = new Map<KbImport, Entity[]>();
  private readonly walk: Evaluator;

  /** `unfinished`: the scope of the file being edited, which resolve() ranks for. */
  constructor(
    private readonly symbols: SymbolTable,
    unfinished: Scope,
    maxSteps = 5000,
  ) {
    this.walk = new Evaluator(symbols, { unfinished, maxSteps, sink: (e, depth, reason) => this.emit(e, depth, reason) });
  }

  /**
   * Seeds first (score by walk distance), then the chains used in the lines above the seed line
   * (`recent`, nearest first, scored below any direct dependency), then the file's other
   * repository imports (low scores). With `usedNames` (the identifiers of the prefix outside its
   * import statements), imports not used yet are resolved after the chains used above, those
   * sharing more of `nearWords` (lower-cased identifier parts of the lines just above) first.
   */
  resolve(
    scope: Scope,
    recent: readonly Chain[] = [],
    usedNames?: ReadonlySet<string>,
    nearWords?: ReadonlySet<string>,
    attributesUsed?: (bound: string) => ReadonlySet<string>,
  ): FlowResolution {
    const flow = scope.flow;
    if (flow) {
      // The chain nearest the cursor first: it is what the line is about to use.
      for (const seed of [...flow.seeds].reverse()) this.walk.resolveChain(seed, scope, 0, chainText(seed));
      // What the code just above used is what the next line most often uses again (a class, a
      // module's member, a method of a typed variable): resolved through the same graph.
      for (const chain of recent) {
        if (this.walk.exhausted) break;
        this.walk.resolveChain(chain, scope, RECENT_DEPTH, `${chainText(chain)} (used above)`);
      }
      // The classes of the types the enclosing class and method use, nearest the cursor first.
      for (const [rank, ref] of flow.typeRefs.entries()) {
        if (this.walk.exhausted) break;
        for (const e of this.walk.resolveHeadChain(ref.chain, scope, TYPE_REF_DEPTH)) {
          if (e.kind !== 'class') continue;
          this.emit(e, TYPE_REF_DEPTH, `${chainText(ref.chain)} (type used above, ${rank + 1}. nearest)`);
        }
      }
      if (scope.lang === 'java' && usedNames) this.emitPackageClasses(scope, usedNames, nearWords);
      if (scope.lang === 'python') this.emitImportGroups(scope, recent, usedNames, nearWords);
      if (scope.lang === 'python' && attributesUsed) this.emitModuleAttributes(scope, attributesUsed);
      // A name imported but not used yet is imported for the code still to be written.
      if (usedNames) {
        const unused = scope.extraction.imports
          .map((imp, order) => ({ imp, order, bound: imp.alias ?? imp.name }))
          .filter(
            (u): u is { imp: KbImport; order: number; bound: string } =>
              !u.imp.wildcard && u.bound !== undefined && !usedNames.has(u.bound),
          )
          .map((u) => ({ ...u, overlap: nearOverlap(u.bound, nearWords) }))
          .sort((a, b) => b.overlap - a.overlap || a.order - b.order);
        // The ones sharing words with the lines just above first (`def delete(...)` -> delete_operation).
        for (const { imp, bound, overlap } of unused) {
          if (this.walk.exhausted) break;
          const targets = this.importTargetOfUnfinished(imp, scope);
          const reason = `import ${bound} (not used yet${overlap > 0 ? `; ${overlap} word(s) of it nearby` : ''})`;
          for (const e of targets) this.emit(e, UNUSED_IMPORT_DEPTH, reason);
          this.walk.emitModuleMembers(targets, UNUSED_IMPORT_DEPTH + 1, reason);
        }
        // `from pkg import *` binds names the prefix may not have used yet: the summaries of the module and of what it star-imports.
        if (scope.lang === 'python') this.emitWildcardModules(scope);
      }
    }
    for (const imp of scope.extraction.imports) {
      if (this.walk.exhausted) break;
      for (const e of this.importTargetOfUnfinished(imp, scope)) this.emit(e, 8, `import ${imp.name ?? imp.module}`);
    }
    // Reached from the last line within LEAD_DEPTH edges: a direct dependency (not an import fallback).
    const results = [...this.emitted.values()]
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .map(({ order: _order, ...r }) => (r.score >= 1 / (1 + LEAD_DEPTH) ? { ...r, lead: true } : r));
    return { results, visited: this.walk.visited };
  }

  /**
   * The repository modules a Python prefix star-imports (`from toolz import *`): the summaries of their files, after the imports not
   * used yet. Dev Python line cases (40), merged and reranked recall@10: 0.912 -> 0.938 (globals 0.833 -> 1.000); validation unchanged.
   */
  private emitWildcardModules(scope: Scope): void {
    for (const imp of scope.extraction.imports) {
      if (!imp.wildcard || this.walk.exhausted) continue;
      const key = this.symbols.pythonModule(imp.module, scope.path);
      if (key !== undefined) this.walk.emitModuleMembers([{ kind: 'module', key }], UNUSED_IMPORT_DEPTH + 1, `from ${imp.module} import *`);
    }
  }

  /**
   * The classes of the edited Java file's package (and of its wildcard-imported packages) that the prefix used (far above: the chains
   * cover the last RECENT_LINES lines) or whose name shares words with the lines just above
   * (`console = ...` -> DefaultConsole): more shared words first, then those used.
   */
  private emitPackageClasses(scope: Scope, usedNames: ReadonlySet<string>, nearWords?: ReadonlySet<string>): void {
    const own = new Set(scope.extraction.classes.map((c) => c.name));
    // A wildcard import (`import a.b.*;`) makes a package's classes as visible as the file's own package's.
    const packages = new Set([
      scope.extraction.packageName ?? '',
      ...scope.extraction.imports.filter((i) => i.wildcard && !i.isStatic).map((i) => i.module),
    ]);
    const visible = [...packages]
      .flatMap((p) => this.symbols.javaPackageClasses(p, scope.path))
      .filter((c) => c.path !== scope.path && !own.has(c.name));
    const picked = visible
      .map((cls) => ({ cls, overlap: nearOverlap(cls.name, nearWords), used: usedNames.has(cls.name) }))
      .filter((c) => c.overlap > 0 || c.used)
      .sort((a, b) => b.overlap - a.overlap || Number(b.used) - Number(a.used) || a.cls.name.localeCompare(b.cls.name))
      .slice(0, MAX_PACKAGE_CLASSES);
    for (const { cls, overlap, used } of picked) {
      const why = [used ? 'used in the file' : '', overlap > 0 ? `${overlap} word(s) of it nearby` : ''].filter(Boolean).join('; ');
      // Sharing words with the lines just above is as near as a chain used above (emitted after them).
      const depth = overlap > 0 ? RECENT_DEPTH : PACKAGE_CLASS_DEPTH;
      this.emit({ kind: 'class', cls, instance: false }, depth, `${cls.name} (same package; ${why})`);
    }
    // A class the file uses is one it works with, not one it is written beside.
    const sibling = picked.find((p) => p.overlap >= SIBLING_MIN_WORDS && !p.used);
    if (sibling) this.emitFieldTypes(sibling.cls, visible, new Set(picked.map((p) => p.cls.name)));
  }

  /** The classes of `visible` that the fields of `sibling` are declared with, except those named in `skip`; MAX_SIBLING_TYPES at most. */
  private emitFieldTypes(sibling: KbClass, visible: readonly KbClass[], skip: ReadonlySet<string>): void {
    const byName = new Map(visible.map((c) => [c.name, c] as const));
    const emitted = new Set<string>();
    for (const field of this.symbols.classMembers(sibling)) {
      if (field.kind !== 'classVariable') continue;
      for (const name of identifierTokens(field.signature)) {
        if (emitted.size >= MAX_SIBLING_TYPES) return;
        const cls = byName.get(name);
        if (!cls || skip.has(name) || emitted.has(name)) continue;
        emitted.add(name);
        this.emit({ kind: 'class', cls, instance: false }, PACKAGE_CLASS_DEPTH, `${name} (a field's type in ${sibling.name})`);
      }
    }
  }

  /**
   * One snippet per repository file the prefix imports names from: each imported name's
   * declaration on one line (a class header, a signature, a variable). A module importing thirty
   * names (`from .log import log, log_enabled, ERROR, BASIC`) gets them all in a few places, ahead
   * of the chains used above. Files whose names were used nearest the cursor come first, then
   * those with names not used yet (sharing words with the lines above first), then the rest.
   */
  private emitImportGroups(scope: Scope, recent: readonly Chain[], usedNames?: ReadonlySet<string>, nearWords?: ReadonlySet<string>): void {
    const recentRank = new Map<string, number>();
    recent.forEach((c, i) => {
      const head = c[0]?.name;
      if (head !== undefined && !recentRank.has(head)) recentRank.set(head, i);
    });
    const rankOf = (bound: string): number => {
      const r = recentRank.get(bound);
      if (r !== undefined) return r;
      if (usedNames?.has(bound) !== false) return 2 * MAX_RANK;
      return MAX_RANK - nearOverlap(bound, nearWords);
    };
    const groups = new Map<string, { defs: (KbItem | KbClass)[]; rank: number }>();
    for (const imp of scope.extraction.imports) {
      const bound = imp.alias ?? imp.name;
      if (imp.wildcard || bound === undefined || this.walk.exhausted) continue;
      const rank = rankOf(bound);
      for (const e of this.importTargetOfUnfinished(imp, scope)) {
        const def = e.kind === 'item' ? e.item : e.kind === 'class' ? e.cls : undefined;
        if (!def) continue;
        const group = groups.get(def.path) ?? { defs: [], rank };
        groups.set(def.path, group);
        group.rank = Math.min(group.rank, rank);
        if (!group.defs.includes(def)) group.defs.push(def);
      }
    }
    for (const [path, group] of [...groups].sort((a, b) => a[1].rank - b[1].rank)) {
      // One name from a file: the definition itself (its snippet or class summary), not a one-line group.
      if (group.defs.length === 1) {
        this.emit(entityOf(group.defs[0]!), IMPORT_GROUP_DEPTH, `import ${group.defs[0]!.name}`);
        continue;
      }
      const lines = [`# ${path} (imported here)`];
      for (const d of group.defs.slice(0, MAX_MODULE_LINES)) lines.push(declarationLine(d));
      if (group.defs.length > MAX_MODULE_LINES) lines.push(`# also: ${alsoList(group.defs.slice(MAX_MODULE_LINES).map((d) => d.name))}`);
      const module = moduleName(path);
      const names = group.defs.map((d) => d.name);
      this.emitSnippet(
        {
          id: `${path}#imported:${names.join(',')}`,
          kind: 'module',
          path,
          name: module.slice(module.lastIndexOf('.') + 1),
          qualifiedName: module,
          range: { startLine: 0, endLine: 0 },
          text: lines.join('\n'),
        },
        IMPORT_GROUP_DEPTH,
        `imports ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}`,
      );
    }
  }

  /**
   * For each imported repository module (`from . import exceptions`), the definitions the file
   * reads from it (`exceptions.BadRequestKeyError`) wherever it does (MODULE_ATTRIBUTE_DEPTH),
   * resolved as the walk resolves a module's members (a package's re-exports included).
   */
  private emitModuleAttributes(scope: Scope, attributesUsed: (bound: string) => ReadonlySet<string>): void {
    for (const imp of scope.extraction.imports) {
      const bound = imp.alias ?? imp.name;
      if (imp.wildcard || bound === undefined || this.walk.exhausted) continue;
      for (const e of this.importTargetOfUnfinished(imp, scope)) {
        if (e.kind !== 'module') continue;
        for (const name of attributesUsed(bound))
          for (const m of this.walk.memberOf(e, name)) this.emit(m, MODULE_ATTRIBUTE_DEPTH, `${bound}.${name} (used in the file)`);
      }
    }
  }

  /**
   * What an import of the resolved scope names, resolved once per request (the groups, the imports not used yet and the fallback all ask).
   */
  private importTargetOfUnfinished(imp: KbImport, scope: Scope): Entity[] {
    let targets = this.scopeImports.get(imp);
    if (!targets) this.scopeImports.set(imp, (targets = this.walk.importTarget(imp, scope, 0)));
    return targets;
  }

  private emitSnippet(snippet: Snippet, depth: number, reason: string): void {
    const score = 1 / (1 + depth);
    const existing = this.emitted.get(snippet.id);
    if (!existing) this.emitted.set(snippet.id, { snippet, score, reason, order: this.emitted.size });
    else if (score > existing.score) Object.assign(existing, { score, reason });
  }

  private emit(e: Entity, depth: number, reason: string): void {
    let snippet: Snippet | undefined;
    if (e.kind === 'item') snippet = snippetOfItem(e.item);
    // Summaries depend on the repository tables only: built once until the knowledge base changes.
    else if (e.kind === 'class')
      snippet = this.symbols.cached(`class:${e.cls.path}#${e.cls.qualifiedName}`, () => classSummary(this.symbols, e.cls));
    else if (e.kind === 'moduleSummary') snippet = this.symbols.cached(`module:${e.path}`, () => moduleSummary(this.symbols, e.path));
    if (snippet) this.emitSnippet(snippet, depth, reason);
  }
}

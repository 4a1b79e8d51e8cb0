// Walks the unfinished file's dataflow graph back from the last line's variables (DraCo edges:
// assign, as, comesfrom, type, successor) to imported entities, and resolves them to
// knowledge-base classes and items in other files.
import type { FileExtraction, KbClass, KbImport, KbItem, Lang } from '../../kb/types';
import { snippetOfItem, type ScoredSnippet, type Snippet } from '../types';
import { chainText, JAVA_KEYWORDS, JAVA_TYPE_IGNORE, PYTHON_KEYWORDS, PYTHON_TYPE_IGNORE, chainsOfText, typeChains, type Binding, type Chain, type FileFlow, type LocalClass } from './flowGraph';
import { nearestCopy, type RepoSymbols } from './repoSymbols';
import { identifierParts } from '../sparse/codeTerms';
import { escapeRegExp } from '../../util/regex';

export type FlowEntity = Entity;
type Scope = FlowScope;

type Entity =
  | { kind: 'module'; key: string }
  | { kind: 'class'; cls: KbClass; instance: boolean }
  | { kind: 'item'; item: KbItem }
  | { kind: 'local'; cls: LocalClass; instance: boolean }
  | { kind: 'moduleSummary'; path: string };

/** Where names are looked up: the unfinished file (with its flow) or a repository file. */
export interface FlowScope {
  path: string;
  lang: Lang;
  extraction: FileExtraction;
  flow?: FileFlow;
}

const MAX_DEPTH = 6;
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
 * How much farther than a class its Java superclasses and interfaces rank: half a step, so an
 * inherited member's class (Parser -> Recognizer.getVocabulary) comes right behind it. Chosen on
 * the same 59 cases: reranked recall@10 0.879 with a whole step, 0.896 with 0.5 and with 0.25
 * (dataflow alone 0.862 each). Python keeps a whole step (not measured there).
 */
function baseStep(lang: Lang): number {
  return lang === 'java' ? 0.5 : 1;
}
/** Signatures a class summary shows; the other members are listed by name. */
const MAX_CLASS_MEMBERS = 40;
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
/** Ranks of the import groups: a name used in the chains above ranks by their order, below MAX_RANK. */
const MAX_RANK = 1000;
/** Overloads of one name a class summary shows in full. */
const MAX_OVERLOADS = 2;
/**
 * Definitions a module summary shows as signatures; the rest are listed by name. Dev Python
 * cases: 40 and 120 give the same merged recall@10 (0.718), with median context text in the
 * first 10 of 4,658 and 4,969 characters.
 */
const MAX_MODULE_LINES = 40;
/** Names a summary lists after its signatures. */
const MAX_ALSO_NAMES = 300;
/** A summary line longer than this is cut (a long default value, a many-parameter signature). */
const MAX_SUMMARY_LINE = 120;

export interface FlowResolution {
  results: ScoredSnippet[];
  /** Nodes and edges of the walk, for the trace. */
  visited: number;
}

export class FlowResolver {
  private readonly emitted = new Map<string, ScoredSnippet & { order: number }>();
  private readonly busy = new Set<string>();
  private readonly scopeImports = new Map<KbImport, Entity[]>();
  private steps = 0;
  private unfinished: Scope | undefined;

  constructor(
    private readonly symbols: RepoSymbols,
    private readonly maxSteps = 5000,
  ) {}

  /**
   * Seeds first (score by walk distance), then the chains used in the lines above the seed line
   * (`recent`, nearest first, scored below any direct dependency), then the file's other
   * repository imports (low scores). With `usedNames` (the identifiers of the prefix outside its
   * import statements), imports not used yet are resolved after the chains used above, those
   * sharing more of `nearWords` (lower-cased identifier parts of the lines just above) first.
   */
  resolve(scope: Scope, recent: readonly Chain[] = [], usedNames?: ReadonlySet<string>, nearWords?: ReadonlySet<string>): FlowResolution {
    const flow = scope.flow;
    if (flow) {
      // The chain nearest the cursor first: it is what the line is about to use.
      for (const seed of [...flow.seeds].reverse()) this.resolveChain(seed, scope, 0, chainText(seed));
      // What the code just above used is what the next line most often uses again (a class, a
      // module's member, a method of a typed variable): resolved through the same graph.
      for (const chain of recent) {
        if (this.steps > this.maxSteps) break;
        this.resolveChain(chain, scope, RECENT_DEPTH, `${chainText(chain)} (used above)`);
      }
      // The classes of the types the enclosing class and method use, nearest the cursor first.
      for (const [rank, ref] of flow.typeRefs.entries()) {
        if (this.steps > this.maxSteps) break;
        for (const e of this.resolveHeadChain(ref.chain, scope, TYPE_REF_DEPTH)) {
          if (e.kind !== 'class') continue;
          this.emit(e, TYPE_REF_DEPTH, `${chainText(ref.chain)} (type used above, ${rank + 1}. nearest)`);
        }
      }
      if (scope.lang === 'python') this.emitImportGroups(scope, recent, usedNames, nearWords);
      // A name imported but not used yet is imported for the code still to be written.
      if (usedNames) {
        const unused = scope.extraction.imports
          .map((imp, order) => ({ imp, order, bound: imp.alias ?? imp.name }))
          .filter((u): u is { imp: KbImport; order: number; bound: string } => !u.imp.wildcard && u.bound !== undefined && !usedNames.has(u.bound))
          .map((u) => ({ ...u, overlap: nearOverlap(u.bound, nearWords) }))
          .sort((a, b) => b.overlap - a.overlap || a.order - b.order);
        // The ones sharing words with the lines just above first (`def delete(...)` -> delete_operation).
        for (const { imp, bound, overlap } of unused) {
          if (this.steps > this.maxSteps) break;
          const targets = this.importTargetOfUnfinished(imp, scope);
          const reason = `import ${bound} (not used yet${overlap > 0 ? `; ${overlap} word(s) of it nearby` : ''})`;
          for (const e of targets) this.emit(e, UNUSED_IMPORT_DEPTH, reason);
          this.emitModuleMembers(targets, UNUSED_IMPORT_DEPTH + 1, reason);
        }
      }
    }
    for (const imp of scope.extraction.imports) {
      if (this.steps > this.maxSteps) break;
      for (const e of this.importTargetOfUnfinished(imp, scope)) this.emit(e, 8, `import ${imp.name ?? imp.module}`);
    }
    // Reached from the last line within LEAD_DEPTH edges: a direct dependency (not an import fallback).
    const results = [...this.emitted.values()]
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .map(({ order: _order, ...r }) => (r.score >= 1 / (1 + LEAD_DEPTH) ? { ...r, lead: true } : r));
    return { results, visited: this.steps };
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
      if (imp.wildcard || bound === undefined || this.steps > this.maxSteps) continue;
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

  /** What an import of the resolved scope names, resolved once per request (the groups, the imports not used yet and the fallback all ask). */
  private importTargetOfUnfinished(imp: KbImport, scope: Scope): Entity[] {
    let targets = this.scopeImports.get(imp);
    if (!targets) this.scopeImports.set(imp, (targets = this.importTarget(imp, scope, 0)));
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
    else if (e.kind === 'class') snippet = this.symbols.cached(`class:${e.cls.path}#${e.cls.qualifiedName}`, () => this.classSummary(e.cls));
    else if (e.kind === 'moduleSummary') snippet = this.symbols.cached(`module:${e.path}`, () => this.moduleSummary(e.path));
    if (snippet) this.emitSnippet(snippet, depth, reason);
  }

  private resolveChain(chain: Chain, scope: Scope, depth: number, reason: string): Entity[] {
    const head = chain[0];
    if (!head || depth > MAX_DEPTH || ++this.steps > this.maxSteps) return [];
    let current = this.resolveHead(head.name, scope, depth, reason, head.partial === true && chain.length === 1);
    for (const e of current) this.emit(e, depth, reason);
    for (const e of current) if (e.kind === 'class') this.emitBases(e.cls, depth + baseStep(e.cls.lang), reason);
    // A class of the unfinished file itself is excluded; its parent classes (successor) are not.
    for (const e of current) {
      if (e.kind === 'local' && this.unfinished) for (const base of e.cls.bases) this.resolveChain(base, this.unfinished, depth + 1, `${e.cls.name} (successor)`);
    }
    if (this.headCalled(head, scope)) current = current.flatMap((e) => this.callResult(e, depth));
    for (const e of current) this.emit(e, depth, reason);
    // `nodes.Const(...)` used above: the next line may use another member of `nodes`.
    this.emitModuleMembers(current, depth + 1, reason);
    for (let i = 1; i < chain.length && current.length > 0; i++) {
      const seg = chain[i]!;
      if (seg.name === '[]') return [];
      current = dedupe(current.flatMap((e) => this.member(e, seg.name, depth + i, seg.partial)));
      // The member itself is what the completion needs; emit it before following its value.
      for (const e of current) this.emit(e, depth + i - 1, `${reason} (comesfrom)`);
      if (seg.call) current = current.flatMap((e) => this.callResult(e, depth + i));
      for (const e of current) this.emit(e, depth + i, reason);
      for (const e of current) if (e.kind === 'class' && e.instance) this.emitBases(e.cls, depth + i + baseStep(e.cls.lang), reason);
      if (i === chain.length - 1) this.emitModuleMembers(current, depth + i + 1, reason);
    }
    return current;
  }

  /**
   * A chain ending at a module (`u` for `import pkg.util as u`): the next line most likely uses one
   * of its members, so the summaries of the module and of the modules it re-exports with `*`.
   */
  private emitModuleMembers(entities: Entity[], depth: number, reason: string): void {
    for (const e of entities) {
      if (e.kind !== 'module') continue;
      for (const path of this.moduleFiles(e.key)) this.emit({ kind: 'moduleSummary', path }, depth, `${reason} (module summary)`);
    }
  }

  /** A module's file and the repository files it star-imports (a package's `from .core import *`). */
  private moduleFiles(key: string): string[] {
    const path = this.symbols.pythonModuleFile(key);
    if (!path) return [];
    const out = [path];
    for (const i of this.symbols.file(path)?.imports ?? []) {
      if (!i.wildcard) continue;
      const sub = this.symbols.pythonModule(i.module, path);
      const file = sub === undefined ? undefined : this.symbols.pythonModuleFile(sub);
      if (file && !out.includes(file)) out.push(file);
    }
    return out;
  }

  /**
   * The repository classes a class extends or implements, as summaries one step further away:
   * members are often inherited (`tb.error()` on a subclass of the class that defines error).
   */
  private emitBases(cls: KbClass, depth: number, reason: string, seen = new Set<string>()): void {
    if (depth > MAX_DEPTH || cls.bases.length === 0) return;
    const key = `${cls.path}#${cls.qualifiedName}`;
    if (seen.has(key)) return;
    seen.add(key);
    for (const base of this.baseClasses(cls, depth)) {
      this.emit({ kind: 'class', cls: base, instance: false }, depth, `${reason} <- ${cls.name} (successor)`);
      this.emitBases(base, depth + baseStep(base.lang), reason, seen);
    }
  }

  /** The repository classes a class's bases (`extends` / `implements` / Python bases) resolve to, in its own file's scope. */
  private baseClasses(cls: KbClass, depth: number): KbClass[] {
    const x = this.symbols.file(cls.path);
    if (!x) return [];
    const scope: Scope = { path: cls.path, lang: cls.lang, extraction: x };
    const out: KbClass[] = [];
    for (const base of cls.bases) {
      const chain = base.replace(/<.*$/s, '').split('.').map((s) => ({ name: s.trim() }));
      for (const b of this.resolveHeadChain(chain, scope, depth)) if (b.kind === 'class') out.push(b.cls);
    }
    return out;
  }

  private resolveHead(name: string, scope: Scope, depth: number, reason: string, partial = false): Entity[] {
    const found = this.resolveName(name, scope, depth, reason);
    if (found.length > 0 || !partial || !scope.flow) return found;
    // The identifier is still being typed: the nearest variable or import it may become.
    const flow = scope.flow;
    const names = [...flow.bindings.keys(), ...scope.extraction.imports.map((i) => i.alias ?? i.name ?? '')].filter((n) => n.startsWith(name) && !n.includes('.'));
    return dedupe(names.slice(0, 3).flatMap((n) => this.resolveName(n, scope, depth, reason)));
  }

  private resolveName(name: string, scope: Scope, depth: number, reason: string): Entity[] {
    const flow = scope.flow;
    if (flow) {
      if ((name === 'self' || name === 'this' || name === 'cls') && flow.enclosingClass) return [{ kind: 'local', cls: flow.enclosingClass, instance: name !== 'cls' }];
      const bindings = flow.bindings.get(name);
      if (bindings && bindings.length > 0) return this.bindingValues(name, bindings.slice(-2), scope, depth, reason);
      const fn = flow.functions.get(name);
      if (fn) return fn.returns.flatMap((t) => instances(this.resolveChain(t, scope, depth + 1, `${reason} <- ${name} (type)`)));
      const cls = flow.classes.get(name);
      if (cls) return [{ kind: 'local', cls, instance: false }];
    } else {
      const top = this.symbols.topLevelDefinition(scope.path, name);
      if (top) return [entityOf(top)];
    }
    const imported = scope.extraction.imports.filter((i) => !i.wildcard && (i.alias ?? i.name) === name);
    if (imported.length > 0) return dedupe(imported.flatMap((i) => this.importTarget(i, scope, depth)));
    if (scope.lang === 'java') return this.javaTypeByName(name, scope);
    // Python wildcard imports (`from pkg.config import *`).
    for (const i of scope.extraction.imports) {
      if (!i.wildcard) continue;
      const key = this.symbols.pythonModule(i.module, scope.path);
      if (key === undefined) continue;
      const found = this.member({ kind: 'module', key }, name, depth);
      if (found.length > 0) return found;
    }
    return [];
  }

  private bindingValues(name: string, bindings: readonly Binding[], scope: Scope, depth: number, reason: string): Entity[] {
    const key = `${scope.path}:${name}`;
    if (this.busy.has(key)) return [];
    this.busy.add(key);
    try {
      const out: Entity[] = [];
      for (const b of bindings) {
        for (const t of b.types) out.push(...instances(this.resolveChain(t, scope, depth + 1, `${reason} <- ${chainText(t)} (type)`)));
        for (const v of b.values) out.push(...this.resolveChain(v, scope, depth + 1, `${reason} <- ${chainText(v)} (${b.edge})`));
      }
      return dedupe(out);
    } finally {
      this.busy.delete(key);
    }
  }

  importTarget(imp: KbImport, scope: Scope, depth: number): Entity[] {
    if (depth > MAX_DEPTH) return [];
    if (scope.lang === 'java') {
      if (imp.wildcard) return [];
      if (imp.isStatic) {
        const owner = this.symbols.javaClass(imp.module, scope.path);
        if (!owner || !imp.name) return [];
        return this.member({ kind: 'class', cls: owner, instance: false }, imp.name, depth);
      }
      const cls = this.symbols.javaClass(imp.module === '' ? (imp.name ?? '') : `${imp.module}.${imp.name ?? ''}`, scope.path);
      return cls ? [{ kind: 'class', cls, instance: false }] : [];
    }
    if (imp.name === undefined) {
      // `import a.b` binds `a`; `import a.b as c` binds the module a.b.
      const dotted = imp.alias && imp.alias !== imp.module.split('.')[0] ? imp.module : (imp.module.split('.')[0] ?? imp.module);
      const key = this.symbols.pythonModule(dotted, scope.path);
      return key === undefined ? [] : [{ kind: 'module', key }];
    }
    const key = this.symbols.pythonModule(imp.module, scope.path);
    if (key === undefined) return [];
    return this.member({ kind: 'module', key }, imp.name, depth + 1);
  }

  private member(e: Entity, name: string, depth: number, partial = false): Entity[] {
    if (depth > MAX_DEPTH || ++this.steps > this.maxSteps) return [];
    switch (e.kind) {
      case 'module': {
        const path = this.symbols.pythonModuleFile(e.key);
        if (path) {
          const def = this.symbols.topLevelDefinition(path, name);
          if (def) return [entityOf(def)];
          if (partial) {
            const started = this.symbols.topLevelDefinitions(path).filter((d) => d.name.startsWith(name));
            if (started.length > 0) return started.slice(0, 5).map(entityOf);
          }
        }
        const sub = e.key === '' ? name : `${e.key}/${name}`;
        if (this.symbols.moduleExists(sub)) return [{ kind: 'module', key: sub }];
        // Re-exports: `from .models import Cart` in a package's __init__.py.
        const x = path ? this.symbols.file(path) : undefined;
        if (!x || !path) return [];
        const scope: Scope = { path, lang: x.lang, extraction: x };
        const reexport = x.imports.filter((i) => !i.wildcard && (i.alias ?? i.name) === name);
        const out = reexport.flatMap((i) => this.importTarget(i, scope, depth + 1));
        if (out.length > 0) return dedupe(out);
        for (const i of x.imports) {
          if (!i.wildcard) continue;
          const key = this.symbols.pythonModule(i.module, path);
          if (key !== undefined && key !== e.key) out.push(...this.member({ kind: 'module', key }, name, depth + 1));
        }
        return dedupe(out);
      }
      case 'class':
        return this.classMember(e.cls, name, depth, new Set(), partial);
      case 'local': {
        const out: Entity[] = [];
        const flow = this.unfinished;
        const field = flow?.flow?.bindings.get(`self.${name}`) ?? flow?.flow?.bindings.get(`this.${name}`);
        if (flow && field) out.push(...this.bindingValues(`self.${name}`, field.slice(-2), flow, depth + 1, `self.${name}`));
        if (out.length > 0 || !flow) return out;
        for (const base of e.cls.bases) {
          for (const b of this.resolveChain(base, flow, depth + 1, `${e.cls.name} (successor)`)) {
            if (b.kind === 'class') out.push(...this.classMember(b.cls, name, depth + 1, new Set()));
          }
        }
        return out;
      }
      case 'item':
        return this.itemValue(e.item, depth).flatMap((v) => this.member(v, name, depth + 1));
      case 'moduleSummary':
        return [];
    }
  }

  /**
   * What a receiver chain (`cart`, `self.gateway`, `make_gateway(n)`) evaluates to, calls
   * followed to their return types; nothing is emitted. For receiver typing (check/receiverMembers).
   */
  evaluate(chain: Chain, scope: Scope): FlowEntity[] {
    this.typingReceivers = true;
    return this.resolveHeadChainWithCalls(chain, scope, 0);
  }

  /** Set by evaluate(): calls of the edited file's functions are typed by their return (retrieval keeps its measured walk). */
  private typingReceivers = false;

  /**
   * Whether a chain's head is a call whose result still has to be taken: when typing receivers, a
   * function of the file being edited is already typed by its declared return (resolveName).
   */
  private headCalled(head: Chain[number], scope: Scope): boolean {
    if (head.call !== true) return false;
    return !(this.typingReceivers && scope.flow?.functions.has(head.name) === true && !scope.flow.bindings.has(head.name));
  }

  /** The entities a member name of an entity names (class members inherited included, module names). */
  memberOf(e: FlowEntity, name: string): FlowEntity[] {
    return this.member(e, name, 0);
  }

  /** What calling an entity gives: a class's instance, a function's declared return type. */
  callOf(e: FlowEntity): FlowEntity[] {
    return this.callResult(e, 0);
  }

  /** The value of a variable or property item (its declared type, else its initialiser). */
  valueOfItem(item: KbItem): FlowEntity[] {
    return this.itemValue(item, 0);
  }

  /** The repository classes one base of a class (as written in its header) resolves to. */
  resolveBase(cls: KbClass, base: string): KbClass[] {
    const x = this.symbols.file(cls.path);
    if (!x) return [];
    const scope: Scope = { path: cls.path, lang: cls.lang, extraction: x };
    const chain = base.replace(/<.*$/s, '').replace(/\[.*$/s, '').split('.').map((s) => ({ name: s.trim() }));
    return this.resolveHeadChain(chain, scope, 0).flatMap((b) => (b.kind === 'class' ? [b.cls] : []));
  }

  /** Set the unfinished file's scope (for `self.x` lookups) before resolve(). */
  withUnfinished(scope: Scope): this {
    this.unfinished = scope;
    return this;
  }

  private classMember(cls: KbClass, name: string, depth: number, seen: Set<string>, partial = false): Entity[] {
    const key = `${cls.path}#${cls.qualifiedName}`;
    if (seen.has(key) || depth > MAX_DEPTH) return [];
    seen.add(key);
    let members = this.symbols.classMembers(cls).filter((m) => m.name === name);
    if (members.length === 0 && partial) members = this.symbols.classMembers(cls).filter((m) => m.name.startsWith(name));
    if (members.length > 0) return members.slice(0, 3).map((item) => ({ kind: 'item', item }));
    const nested = this.symbols.nestedClass(cls, name);
    if (nested) return [{ kind: 'class', cls: nested, instance: false }];
    // successor edges: look in the parent classes.
    const out: Entity[] = [];
    for (const base of this.baseClasses(cls, depth + 1)) {
      this.emit({ kind: 'class', cls: base, instance: false }, depth + 1, `${cls.name} (successor)`);
      out.push(...this.classMember(base, name, depth + 1, seen, partial));
    }
    return out;
  }

  /** Resolve a dotted name in a repository file without emitting the steps. */
  private resolveHeadChain(chain: Chain, scope: Scope, depth: number): Entity[] {
    const head = chain[0];
    if (!head) return [];
    let current = this.resolveHead(head.name, scope, depth, '');
    for (let i = 1; i < chain.length && current.length > 0; i++) current = current.flatMap((e) => this.member(e, chain[i]!.name, depth + i));
    return current;
  }

  private callResult(e: Entity, depth: number): Entity[] {
    if (e.kind === 'class' && !e.instance) return [{ ...e, instance: true }];
    if (e.kind === 'local' && !e.instance) return [{ ...e, instance: true }];
    if (e.kind === 'item' && (e.item.kind === 'function' || e.item.kind === 'classFunction')) {
      // A Java constructor call `new Foo()` names the class, handled above; here: the return type.
      return this.typesIn(returnTypeText(e.item), e.item.path, e.item.lang, depth + 1);
    }
    return [];
  }

  /** The value of a variable item (its declared type, else its initialiser), or a property's return type. */
  private itemValue(item: KbItem, depth: number): Entity[] {
    if (item.kind === 'classFunction' || item.kind === 'function') {
      return item.lang === 'python' && /@(\w+\.)?(cached_)?property\b/.test(item.text) ? this.typesIn(returnTypeText(item), item.path, item.lang, depth + 1) : [];
    }
    const declared = variableTypeText(item);
    if (declared) return this.typesIn(declared, item.path, item.lang, depth + 1);
    const init = initialiserText(item);
    if (!init) return [];
    const x = this.symbols.file(item.path);
    if (!x) return [];
    const scope: Scope = { path: item.path, lang: item.lang, extraction: x };
    const out: Entity[] = [];
    for (const chain of chainsOfText(init, item.lang === 'java' ? JAVA_KEYWORDS : PYTHON_KEYWORDS)) {
      if (chain.length === 1 && !chain[0]!.call && item.className) {
        // `self.cart = cart`: the type hint of that parameter of the same class's __init__.
        const ctor = this.symbols.membersOf(item.path, item.className).find((m) => m.name === '__init__');
        const hint = ctor ? new RegExp(`\\b${escapeRegExp(chain[0]!.name)}\\s*:\\s*([^,=)]+)`).exec(ctor.signature)?.[1] : undefined;
        if (hint) out.push(...this.typesIn(hint, item.path, item.lang, depth + 1));
        continue;
      }
      out.push(...this.resolveHeadChainWithCalls(chain, scope, depth + 1));
    }
    return dedupe(out);
  }

  private resolveHeadChainWithCalls(chain: Chain, scope: Scope, depth: number): Entity[] {
    const head = chain[0];
    if (!head) return [];
    let current = this.resolveHead(head.name, scope, depth, '');
    if (this.headCalled(head, scope)) current = current.flatMap((e) => this.callResult(e, depth));
    for (let i = 1; i < chain.length && current.length > 0; i++) {
      current = current.flatMap((e) => this.member(e, chain[i]!.name, depth + i));
      if (chain[i]!.call) current = current.flatMap((e) => this.callResult(e, depth + i));
    }
    return current;
  }

  /** Instances of the repository classes named in a type text, resolved in a repository file. */
  private typesIn(typeText: string | undefined, path: string, lang: Lang, depth: number): Entity[] {
    if (!typeText || depth > MAX_DEPTH) return [];
    const x = this.symbols.file(path);
    const scope: Scope | undefined = path === this.unfinished?.path ? this.unfinished : x ? { path, lang, extraction: x } : undefined;
    if (!scope) return [];
    const chains = typeChains(typeText, lang === 'java' ? JAVA_TYPE_IGNORE : PYTHON_TYPE_IGNORE);
    return dedupe(chains.flatMap((c) => instances(this.resolveHeadChain(c, scope, depth))));
  }

  private javaTypeByName(name: string, scope: Scope): Entity[] {
    const pkg = scope.extraction.packageName;
    const same = this.symbols.javaClass(pkg ? `${pkg}.${name}` : name, scope.path);
    if (same) return [{ kind: 'class', cls: same, instance: false }];
    // Nested classes of the file's own classes.
    const own = scope.extraction.classes.find((c) => c.name === name);
    if (own && !scope.flow) return [{ kind: 'class', cls: own, instance: false }];
    for (const i of scope.extraction.imports) {
      if (!i.wildcard) continue;
      if (i.isStatic) {
        const owner = this.symbols.javaClass(i.module, scope.path);
        const found = owner ? this.classMember(owner, name, 1, new Set()) : [];
        if (found.length > 0) return found;
      } else {
        const cls = this.symbols.javaClass(`${i.module}.${name}`, scope.path);
        if (cls) return [{ kind: 'class', cls, instance: false }];
      }
    }
    // Same-package classes without an import are covered above; a unique class of that name elsewhere is a fair guess.
    // A nested class of a repository class the file's classes extend (`Kind` inside a subclass of `Token`).
    if (scope.flow && !this.busy.has('nested-of-bases')) {
      this.busy.add('nested-of-bases');
      try {
        for (const local of scope.flow.classes.values()) {
          for (const base of local.bases) {
            for (const b of this.resolveHeadChain(base, scope, 1)) {
              const nested = b.kind === 'class' ? this.symbols.nestedClass(b.cls, name) : undefined;
              if (nested) return [{ kind: 'class', cls: nested, instance: false }];
            }
          }
        }
      } finally {
        this.busy.delete('nested-of-bases');
      }
    }
    if (/^\p{Lu}/u.test(name)) {
      const named = this.symbols.classesNamed(name).filter((c) => c.lang === 'java' && !c.qualifiedName.includes('.'));
      // Copies of one class in several source trees count once: the nearest.
      const distinct = new Set(named.map((c) => `${this.symbols.file(c.path)?.packageName ?? ''}.${c.qualifiedName}`));
      if (distinct.size === 1) {
        const cls = nearestCopy(named, scope.path);
        if (cls) return [{ kind: 'class', cls, instance: false }];
      }
    }
    return [];
  }

  private classSummary(cls: KbClass): Snippet {
    const { shown, others } = summaryMembers(this.symbols.classMembers(cls));
    const lines: string[] = [];
    if (cls.lang === 'python') {
      lines.push(`# ${cls.path}`, cls.header.trim());
      if (cls.docstring) lines.push(`    """${cls.docstring.split('\n', 1)[0]}"""`);
      for (const m of shown) {
        const sig = summaryLine(m.signature);
        lines.push(`    ${m.kind === 'classFunction' ? `${sig} ...` : sig}`);
      }
      if (others.length > 0) lines.push(`    # also: ${alsoList(others)}`);
      if (shown.length === 0 && !cls.docstring) lines.push('    ...');
    } else {
      lines.push(`// ${cls.path}`, `${cls.header.trim()} {`);
      for (const m of shown) lines.push(`    ${summaryLine(m.signature)};`);
      if (others.length > 0) lines.push(`    // also: ${alsoList(others)}`);
      lines.push('}');
    }
    return {
      id: `${cls.path}#class:${cls.qualifiedName}`,
      kind: 'class',
      path: cls.path,
      name: cls.name,
      qualifiedName: cls.qualifiedName,
      range: cls.range,
      text: lines.join('\n'),
    };
  }

  /** A Python module's top-level definitions, one line each (class headers, signatures, variables). */
  private moduleSummary(path: string): Snippet | undefined {
    const x = this.symbols.file(path);
    if (!x) return undefined;
    const defs = this.symbols.topLevelDefinitions(path).sort((a, b) => a.range.startLine - b.range.startLine);
    if (defs.length === 0) return undefined;
    const lines = [`# ${path}`];
    for (const d of defs.slice(0, MAX_MODULE_LINES)) lines.push(declarationLine(d));
    if (defs.length > MAX_MODULE_LINES) lines.push(`# also: ${alsoList(defs.slice(MAX_MODULE_LINES).map((d) => d.name))}`);
    const module = moduleName(path);
    return {
      id: `${path}#module`,
      kind: 'module',
      path,
      name: module.slice(module.lastIndexOf('.') + 1),
      qualifiedName: module,
      range: { startLine: 0, endLine: defs.reduce((end, d) => Math.max(end, d.range.endLine), 0) },
      text: lines.join('\n'),
    };
  }
}

/**
 * The members a class summary shows as signatures (at most MAX_CLASS_MEMBERS, at most
 * MAX_OVERLOADS per name, in source order) and the names of the others, each once.
 */
function summaryMembers(members: readonly KbItem[]): { shown: KbItem[]; others: string[] } {
  const shown: KbItem[] = [];
  const perName = new Map<string, number>();
  const others = new Set<string>();
  for (const m of members) {
    const n = perName.get(m.name) ?? 0;
    if (shown.length < MAX_CLASS_MEMBERS && n < MAX_OVERLOADS) {
      shown.push(m);
      perName.set(m.name, n + 1);
    } else if (n === 0) others.add(m.name);
  }
  return { shown, others: [...others] };
}

/** The names a summary lists after its signatures, at most MAX_ALSO_NAMES (a generated module can define thousands). */
function alsoList(names: readonly string[]): string {
  const shown = names.slice(0, MAX_ALSO_NAMES).join(', ');
  return names.length > MAX_ALSO_NAMES ? `${shown} and ${names.length - MAX_ALSO_NAMES} more` : shown;
}

/** How many identifier parts (3+ characters) of a name are among the words of the lines just above. */
function nearOverlap(name: string, nearWords: ReadonlySet<string> | undefined): number {
  return nearWords ? identifierParts(name).filter((p) => p.length >= 3 && nearWords.has(p.toLowerCase())).length : 0;
}

/** A Python definition in a summary: a class header or a function signature with ` ...`, a variable as declared. */
function declarationLine(d: KbItem | KbClass): string {
  if ('header' in d) return `${summaryLine(d.header)} ...`;
  return d.kind === 'function' || d.kind === 'classFunction' ? `${summaryLine(d.signature)} ...` : summaryLine(d.signature);
}

/** `pkg/sub/__init__.py` -> pkg.sub; `pkg/mod.py` -> pkg.mod. */
function moduleName(path: string): string {
  return path.replace(/(\/__init__)?\.pyi?$/, '').replace(/\//g, '.');
}

/** A declaration on one line, cut at MAX_SUMMARY_LINE characters. */
function summaryLine(text: string): string {
  const line = text.replace(/\s*\n\s*/g, ' ').trim();
  return line.length <= MAX_SUMMARY_LINE ? line : `${line.slice(0, MAX_SUMMARY_LINE - 3).trimEnd()}...`;
}

function entityOf(def: KbItem | KbClass): Entity {
  return 'kind' in def && (def.kind === 'function' || def.kind === 'classFunction' || def.kind === 'classVariable' || def.kind === 'globalVariable')
    ? { kind: 'item', item: def as KbItem }
    : { kind: 'class', cls: def as KbClass, instance: false };
}

function instances(entities: Entity[]): Entity[] {
  return entities.map((e) => (e.kind === 'class' || e.kind === 'local' ? { ...e, instance: true } : e));
}

function entityKey(e: Entity): string {
  switch (e.kind) {
    case 'module':
      return `m:${e.key}`;
    case 'class':
      return `c:${e.cls.path}#${e.cls.qualifiedName}:${e.instance}`;
    case 'item':
      return `i:${e.item.id}`;
    case 'local':
      return `l:${e.cls.name}:${e.instance}`;
    case 'moduleSummary':
      return `s:${e.path}`;
  }
}

function dedupe(entities: Entity[]): Entity[] {
  const seen = new Set<string>();
  return entities.filter((e) => {
    const k = entityKey(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** `def f(...) -> X:` -> X; Java `public static Foo<Bar> make(...)` -> Foo<Bar>. */
export function returnTypeText(item: KbItem): string | undefined {
  const sig = item.signature;
  if (item.lang === 'python') return /->\s*([\s\S]+?)\s*:?\s*$/.exec(sig)?.[1];
  const at = sig.indexOf(`${item.name}(`) >= 0 ? sig.indexOf(`${item.name}(`) : sig.indexOf(item.name);
  if (at <= 0) return undefined;
  return sig.slice(0, at).replace(/@\w+(\([^)]*\))?/g, ' ').replace(/^\s*<[^>]*>/, ' ');
}

/** A variable's declared type: `x: T = v` (Python) or `private final T x = v` (Java). */
export function variableTypeText(item: KbItem): string | undefined {
  const sig = item.signature;
  if (item.lang === 'python') return /^[\p{L}\p{N}_.]+\s*:\s*([^=]+?)\s*(=|$)/u.exec(sig)?.[1];
  const decl = sig.split('=', 1)[0] ?? '';
  const at = decl.lastIndexOf(item.name);
  return at > 0 ? decl.slice(0, at).replace(/@\w+(\([^)]*\))?/g, ' ') : undefined;
}

function initialiserText(item: KbItem): string | undefined {
  const m = /^[^=]*?(?<![=!<>])=(?!=)([\s\S]*)$/.exec(item.signature);
  return m?.[1]?.trim();
}

// The expression evaluator over the symbol table (DraCo's edges: assign, as, comesfrom, type,
// successor): what a name, an attribute chain or a call in the unfinished file or a repository
// file stands for (a module, a repository class or its instance, an item, a class of the file
// being edited). Dataflow retrieval ranks what the walk reaches (its sink); receiver typing reads
// what an expression evaluates to.
import type { FileExtraction, KbClass, KbImport, KbItem, Lang } from '../kb/types';
import {
  chainText,
  JAVA_KEYWORDS,
  JAVA_TYPE_IGNORE,
  PYTHON_KEYWORDS,
  PYTHON_TYPE_IGNORE,
  chainsOfText,
  typeChains,
  type Binding,
  type Chain,
  type FileFlow,
  type LocalClass,
} from '../flow/flowGraph';
import { escapeRegExp } from '../util/regex';
import { initialiserText, returnTypeText, variableTypeText } from './declaredTypes';
import { nearestCopy, type SymbolTable } from '../kb/symbolTable';

export type Entity =
  | { kind: 'module'; key: string }
  | { kind: 'class'; cls: KbClass; instance: boolean }
  | { kind: 'item'; item: KbItem }
  | { kind: 'local'; cls: LocalClass; instance: boolean }
  | { kind: 'moduleSummary'; path: string };

/** Where names are looked up: the unfinished file (with its flow) or a repository file. */
export interface Scope {
  path: string;
  lang: Lang;
  extraction: FileExtraction;
  flow?: FileFlow;
}

/** Called with every entity the walk reaches, at its distance from the start and with the edges taken. */
type ReachSink = (e: Entity, depth: number, reason: string) => void;

interface EvaluatorOptions {
  /** The unfinished file's scope (for `self.x` lookups and its own classes' bases). */
  unfinished?: Scope;
  sink?: ReachSink;
  /**
   * A call of a function of the file being edited is typed by its declared return once (receiver
   * typing); without it, the call's result is taken again, as dataflow retrieval's measured walk does.
   */
  typedLocalCalls?: boolean;
  /** Name lookups and member steps before the walk stops. */
  maxSteps?: number;
}

const MAX_DEPTH = 6;
/**
 * How much farther than a class its Java superclasses and interfaces rank: half a step, so an
 * inherited member's class (Parser -> Recognizer.getVocabulary) comes right behind it. Chosen on
 * the same 59 cases as dataflow retrieval's TYPE_REF_DEPTH: reranked recall@10 0.879 with a whole
 * step, 0.896 with 0.5 and with 0.25 (dataflow alone 0.862 each). Python keeps a whole step (not
 * measured there).
 */
function baseStep(lang: Lang): number {
  return lang === 'java' ? 0.5 : 1;
}

export class Evaluator {
  private readonly busy = new Set<string>();
  private steps = 0;
  private readonly unfinished: Scope | undefined;
  private readonly sink: ReachSink | undefined;
  private readonly typedLocalCalls: boolean;
  private readonly maxSteps: number;

  constructor(
    /** The table names are looked up in (one knowledge base's, as it was when the request began). */
    readonly symbols: SymbolTable,
    options: EvaluatorOptions = {},
  ) {
    this.unfinished = options.unfinished;
    this.sink = options.sink;
    this.typedLocalCalls = options.typedLocalCalls ?? false;
    this.maxSteps = options.maxSteps ?? 5000;
  }

  /** Steps taken so far (for the trace). */
  get visited(): number {
    return this.steps;
  }

  /** Whether the walk has used up its steps. */
  get exhausted(): boolean {
    return this.steps > this.maxSteps;
  }

  private emit(e: Entity, depth: number, reason: string): void {
    this.sink?.(e, depth, reason);
  }

  /** Walk a chain from its head, reporting every entity reached to the sink; returns what the whole chain names. */
  resolveChain(chain: Chain, scope: Scope, depth: number, reason: string): Entity[] {
    const head = chain[0];
    if (!head || depth > MAX_DEPTH || ++this.steps > this.maxSteps) return [];
    let current = this.resolveHead(head.name, scope, depth, reason, head.partial === true && chain.length === 1);
    for (const e of current) this.emit(e, depth, reason);
    for (const e of current) if (e.kind === 'class') this.emitBases(e.cls, depth + baseStep(e.cls.lang), reason);
    // A class of the unfinished file itself is excluded; its parent classes (successor) are not.
    for (const e of current) {
      if (e.kind === 'local' && this.unfinished)
        for (const base of e.cls.bases) this.resolveChain(base, this.unfinished, depth + 1, `${e.cls.name} (successor)`);
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
  emitModuleMembers(entities: Entity[], depth: number, reason: string): void {
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
      const chain = base
        .replace(/<.*$/s, '')
        .split('.')
        .map((s) => ({ name: s.trim() }));
      for (const b of this.resolveHeadChain(chain, scope, depth)) if (b.kind === 'class') out.push(b.cls);
    }
    return out;
  }

  private resolveHead(name: string, scope: Scope, depth: number, reason: string, partial = false): Entity[] {
    const found = this.resolveName(name, scope, depth, reason);
    if (found.length > 0 || !partial || !scope.flow) return found;
    // The identifier is still being typed: the nearest variable or import it may become.
    const flow = scope.flow;
    const names = [...flow.bindings.keys(), ...scope.extraction.imports.map((i) => i.alias ?? i.name ?? '')].filter(
      (n) => n.startsWith(name) && !n.includes('.'),
    );
    return dedupe(names.slice(0, 3).flatMap((n) => this.resolveName(n, scope, depth, reason)));
  }

  private resolveName(name: string, scope: Scope, depth: number, reason: string): Entity[] {
    const flow = scope.flow;
    if (flow) {
      if ((name === 'self' || name === 'this' || name === 'cls') && flow.enclosingClass)
        return [{ kind: 'local', cls: flow.enclosingClass, instance: name !== 'cls' }];
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

  /** What an import binds its name to, seen from the scope it is written in. */
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
   * followed to their return types; nothing reported but the steps of its names' bindings.
   */
  evaluate(chain: Chain, scope: Scope): Entity[] {
    return this.resolveHeadChainWithCalls(chain, scope, 0);
  }

  /** Whether a chain's head is a call whose result still has to be taken (typedLocalCalls). */
  private headCalled(head: Chain[number], scope: Scope): boolean {
    if (head.call !== true) return false;
    return !(this.typedLocalCalls && scope.flow?.functions.has(head.name) === true && !scope.flow.bindings.has(head.name));
  }

  /** The entities a member name of an entity names (class members inherited included, module names). */
  memberOf(e: Entity, name: string): Entity[] {
    return this.member(e, name, 0);
  }

  /** What calling an entity gives: a class's instance, a function's declared return type. */
  callOf(e: Entity): Entity[] {
    return this.callResult(e, 0);
  }

  /** The value of a variable or property item (its declared type, else its initialiser). */
  valueOfItem(item: KbItem): Entity[] {
    return this.itemValue(item, 0);
  }

  /** The repository classes one base of a class (as written in its header) resolves to. */
  resolveBase(cls: KbClass, base: string): KbClass[] {
    const x = this.symbols.file(cls.path);
    if (!x) return [];
    const scope: Scope = { path: cls.path, lang: cls.lang, extraction: x };
    const chain = base
      .replace(/<.*$/s, '')
      .replace(/\[.*$/s, '')
      .split('.')
      .map((s) => ({ name: s.trim() }));
    return this.resolveHeadChain(chain, scope, 0).flatMap((b) => (b.kind === 'class' ? [b.cls] : []));
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

  /** Resolve a dotted name in a repository file without reporting the steps. */
  resolveHeadChain(chain: Chain, scope: Scope, depth: number): Entity[] {
    const head = chain[0];
    if (!head) return [];
    let current = this.resolveHead(head.name, scope, depth, '');
    for (let i = 1; i < chain.length && current.length > 0; i++)
      current = current.flatMap((e) => this.member(e, chain[i]!.name, depth + i));
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
      return item.lang === 'python' && /@(\w+\.)?(cached_)?property\b/.test(item.text)
        ? this.typesIn(returnTypeText(item), item.path, item.lang, depth + 1)
        : [];
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
}

export function entityOf(def: KbItem | KbClass): Entity {
  return 'kind' in def &&
    (def.kind === 'function' || def.kind === 'classFunction' || def.kind === 'classVariable' || def.kind === 'globalVariable')
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

// Receiver typing at a dereference (monitor-guided decoding, docs/ARCHITECTURE.md "Papers: implementation notes" "Checking completions
// against the repository"): for text ending in `x.` or `x.part`, the repository entity `x` is and
// the names it has (members inherited included, a module's top-level names). Anything not proven
// from the repository (the standard library, third-party bases, containers) stays unconstrained.
import type { KbClass, KbItem, Lang } from '../kb/types';
import type { Parsers } from '../kb/parsers';
import { chainsOfText, JAVA_KEYWORDS, PYTHON_KEYWORDS, type Chain } from '../flow/flowGraph';
import { UnfinishedAnalyses } from '../flow/unfinished';
import type { KnowledgeBase } from '../kb/KnowledgeBase';
import { returnTypeText, variableTypeText } from '../symbols/declaredTypes';
import { Evaluator, type Entity, type Scope } from '../symbols/evaluate';
import type { SymbolTable } from '../kb/symbolTable';
import type { Disposable } from '../util/disposable';
import { bareTypeName, findOpenCall, parseParameters, type CallSignature, type Parameter } from './callArguments';
import { throwIfAborted } from '../util/errors';
import { escapeRegExp } from '../util/regex';
import { identifierEndingAt } from '../util/identifierAtEnd';

/** The text a receiver is typed in; `analyses`: the request's, so its parses are shared with the other stages. */
export interface TypedFile {
  path: string;
  lang: Lang;
  prefix: string;
  analyses?: UnfinishedAnalyses;
}

interface Dereference {
  /** The receiver expression as written (`self.cart`, `make_gateway("x")`). */
  receiver: string;
  /** The identifier already typed after the dot ('' right after it). */
  partial: string;
}

export interface ReceiverMembers extends Dereference {
  /** Every name the receiver is proven to have. */
  names: ReadonlySet<string>;
  /** What the receiver resolved to, for the trace (`class pyshop/models.py#Cart`). */
  entities: string[];
}

/**
 * The dereference the text ends in, read backwards over identifiers, dots and balanced call
 * parentheses; undefined when the text does not end in one (a string, a number, an index, a
 * parenthesised expression or a comment before the dot).
 */
export function findDereference(prefix: string, lang: Lang): Dereference | undefined {
  const partial = identifierEndingAt(prefix);
  let end = prefix.length - partial.length;
  if (prefix[end - 1] !== '.') return undefined;
  end--;
  const lineStart = prefix.lastIndexOf('\n', end - 1) + 1;
  const line = prefix.slice(lineStart, end);
  // Inside a comment or a string literal: nothing to check.
  const code = line.replace(/(["'])(?:\\.|(?!\1).)*\1/g, '0');
  if (/["']/.test(code) || (lang === 'python' ? code.includes('#') : code.includes('//'))) return undefined;
  let i = end;
  for (;;) {
    if (prefix[i - 1] === ')') {
      let depth = 0;
      let j = i - 1;
      for (; j >= lineStart; j--) {
        const c = prefix[j];
        if (c === ')') depth++;
        else if (c === '(' && --depth === 0) break;
      }
      if (j < lineStart) return undefined;
      i = j;
    }
    const ident = identifierEndingAt(prefix, i, lineStart);
    if (!ident) return undefined;
    i -= ident.length;
    if (prefix[i - 1] !== '.') break;
    i--;
  }
  const before = prefix[i - 1];
  if (before !== undefined && /[\p{L}\p{N}_$.\])]/u.test(before)) return undefined;
  const receiver = prefix.slice(i, end);
  if (/^\p{N}/u.test(receiver) || /\s/.test(receiver.replace(/\([^]*\)/g, ''))) return undefined;
  return { receiver, partial };
}

/**
 * The one attribute chain an expression is (`a.b(c(d)).e` -> a, b(), e), when its lexical chain is
 * the whole expression; undefined otherwise (two chains, an operator, an index).
 */
function wholeChain(expr: string, lang: Lang): Chain | undefined {
  const chains = chainsOfText(expr, lang === 'java' ? JAVA_RECEIVER_KEYWORDS : PYTHON_KEYWORDS);
  const chain = chains.length === 1 ? chains[0] : undefined;
  if (!chain || chain.length === 0) return undefined;
  let bare = expr;
  while (/\([^()]*\)/.test(bare)) bare = bare.replace(/\([^()]*\)/g, '');
  return bare === chain.map((s) => s.name).join('.') ? chain : undefined;
}

/** Python names every object has (not listed in the knowledge base). */
const PYTHON_OBJECT = [
  '__class__',
  '__dict__',
  '__doc__',
  '__module__',
  '__init__',
  '__repr__',
  '__str__',
  '__eq__',
  '__ne__',
  '__hash__',
  '__getattribute__',
  '__setattr__',
  '__delattr__',
  '__dir__',
  '__format__',
  '__reduce__',
  '__sizeof__',
  '__init_subclass__',
  '__new__',
  '__slots__',
  '__annotations__',
  '__weakref__',
];
const PYTHON_CLASS = ['__name__', '__qualname__', '__mro__', '__bases__', '__subclasses__', 'mro', '__dataclass_fields__'];
const PYTHON_MODULE = [
  '__name__',
  '__file__',
  '__doc__',
  '__all__',
  '__path__',
  '__package__',
  '__spec__',
  '__loader__',
  '__dict__',
  '__version__',
];
/** Python bases that add no public members. */
const PYTHON_PLAIN_BASES = new Set(['object', 'ABC', 'abc.ABC', 'Generic', 'typing.Generic', 'Protocol', 'typing.Protocol']);
const JAVA_OBJECT = ['getClass', 'hashCode', 'equals', 'toString', 'notify', 'notifyAll', 'wait', 'clone', 'finalize'];
const JAVA_ENUM = ['name', 'ordinal', 'compareTo', 'values', 'valueOf', 'getDeclaringClass', 'describeConstable'];
/**
 * After a Java type name: its enum's static methods, and the class literal (`X.class`; checkCompletion refuses `X.class =`,
 * `X.class(`).
 */
const JAVA_ENUM_STATIC = ['values', 'valueOf'];
/** Qualified `X.this` / `X.super`: only where X is a class around the cursor. */
const JAVA_QUALIFIED = ['this', 'super'];

/** Whether a Java member can follow its type name (`Prices.format`): static, an interface constant or an enum constant. */
function javaStatic(m: KbItem, cls: KbClass): boolean {
  const head = m.signature.replace(/@[\p{L}_$][\p{L}\p{N}_$.]*(\([^)]*\))?\s*/gu, '').split(/[(=]/)[0] ?? '';
  if (/\bstatic\b/.test(head)) return true;
  if (m.kind !== 'classVariable') return false;
  if (cls.kind === 'interface') return true;
  return cls.kind === 'enum' && new RegExp(`^${escapeRegExp(m.name)}\\s*(\\(|\\{|,|;|$)`, 'u').test(m.signature.trim());
}

/**
 * Java names the edited prefix declares as members (`Type name =`, `Type name;`, `Type name(`, a
 * line's first declaration; `static` ones only, for a type name): not a parameter or any identifier.
 */
const JAVA_ANNOTATION = String.raw`@[\p{L}_$][\p{L}\p{N}_$.]*(?:\([^)\n]*\))?`;
const JAVA_MODIFIERS = 'public|protected|private|static|final|abstract|synchronized|native|transient|volatile|default|strictfp';
function javaDeclaredNames(prefix: string, staticOnly: boolean): string[] {
  const out: string[] = [];
  const decl = new RegExp(
    String.raw`^\s*(?:${JAVA_ANNOTATION}\s+)*((?:(?:${JAVA_MODIFIERS})\s+)*)` +
      String.raw`[\p{L}_$][\p{L}\p{N}_$.<>[\], ?]*?\s+([\p{L}_$][\p{L}\p{N}_$]*)\s*[=;(]`,
    'gmu',
  );
  for (const m of prefix.matchAll(decl)) if (!staticOnly || /\bstatic\b/.test(m[1] ?? '')) out.push(m[2]!);
  return out;
}
/** `this` starts a receiver chain. */
const JAVA_RECEIVER_KEYWORDS: ReadonlySet<string> = new Set([...JAVA_KEYWORDS].filter((k) => k !== 'this'));
const JAVA_PLAIN_BASES = new Set(['Object', 'java.lang.Object']);

/** A declared type that is a container or generic (`List[Cart]`, `Map<K, V>`): its element type is not the receiver's. */
function isContainerType(typeText: string | undefined): boolean {
  if (typeText === undefined) return false;
  const t = typeText
    .replace(/["']/g, '')
    .replace(/^\s*(typing\.)?Optional\[(.*)\]\s*$/s, '$2')
    .replace(/\|\s*None\b|\bNone\s*\|/g, '')
    .trim();
  return /[[<]/.test(t);
}

/** Whether the prefix declares `name` (a variable, a field or a function's return) with a container type, or as a Java array. */
function declaredAsContainer(prefix: string, name: string, lang: Lang): boolean {
  const n = escapeRegExp(name);
  if (lang === 'python') {
    for (const m of prefix.matchAll(new RegExp(`(?:^|[^\\w.]|self\\.|cls\\.)${n}\\s*:\\s*([^=\\n]+)`, 'gmu')))
      if (isContainerType(m[1])) return true;
    for (const m of prefix.matchAll(new RegExp(`\\bdef\\s+${n}\\s*\\([^]*?\\)\\s*->\\s*([^:\\n]+):`, 'gu')))
      if (isContainerType(m[1])) return true;
    return false;
  }
  return new RegExp(`(>|\\])\\s*${n}\\s*[=;,)(]`, 'u').test(prefix) || new RegExp(`\\b${n}\\s*\\[\\s*\\]`, 'u').test(prefix);
}

function describe(e: Entity): string {
  switch (e.kind) {
    case 'module':
      return `module ${e.key}`;
    case 'class':
      return `${e.instance ? 'instance of' : 'class'} ${e.cls.path}#${e.cls.qualifiedName}`;
    case 'local':
      return `${e.instance ? 'instance of' : 'class'} ${e.cls.name} (this file)`;
    case 'item':
      return `${e.item.kind} ${e.item.path}#${e.item.qualifiedName}`;
    case 'moduleSummary':
      return `module ${e.path}`;
  }
}

/** Types receivers with the knowledge base's symbol table and the expression evaluator. */
export class ReceiverTyper implements Disposable {
  constructor(
    private readonly kb: Pick<KnowledgeBase, 'symbols'>,
    private readonly parsers: Parsers,
  ) {}

  /** The valid member names at the dereference the prefix ends in; undefined when none or not proven. */
  membersAt(file: TypedFile, signal: AbortSignal): ReceiverMembers | undefined {
    throwIfAborted(signal);
    const deref = findDereference(file.prefix, file.lang);
    if (!deref) return undefined;
    const superCall = /^super(\(\))?$/.test(deref.receiver);
    const chain: Chain | undefined = superCall ? [{ name: 'super' }] : wholeChain(deref.receiver, file.lang);
    if (!chain) return undefined;
    // The prefix up to the receiver, so the flow is the one at the dereference.
    const { scope, resolver } = this.scopeAt(file, file.prefix.length - deref.partial.length - 1 - deref.receiver.length, signal);
    const entities = this.evaluate(resolver, chain, scope, file.prefix, superCall);
    if (!entities || entities.length === 0) return undefined;
    if (deref.receiver === 'self' && entities.some((e) => this.mixinLike(resolver, e, scope))) return undefined;
    const names = new Set<string>();
    for (const e of entities) {
      const of = this.namesOf(resolver, e, scope, file.prefix, new Set());
      if (!of) return undefined;
      for (const n of of) names.add(n);
    }
    if (names.size === 0) return undefined;
    return { ...deref, names, entities: entities.map(describe) };
  }

  /**
   * The repository callable of the call the prefix ends inside (`CheckoutService(cart, `), its
   * parameters, and per argument position the name in scope that fits (same name, else a binding
   * of the parameter's type). Undefined when the callee is not proven to be a repository callable.
   */
  callAt(file: TypedFile, signal: AbortSignal): CallSignature | undefined {
    throwIfAborted(signal);
    const open = findOpenCall(file.prefix, file.lang);
    if (!open) return undefined;
    const chain = wholeChain(open.callee, file.lang);
    if (!chain) return undefined;
    const cutAt = open.argsStart - 1 - open.callee.length;
    const { scope, resolver } = this.scopeAt(file, cutAt, signal);
    const flow = scope.flow!;
    const entities = this.evaluate(resolver, chain, scope, file.prefix, false, false);
    if (!entities || entities.length === 0) return undefined;
    const overloads: Parameter[][] = [];
    let variadic = false;
    for (const e of entities) {
      const of = this.parametersOf(resolver.symbols, e, scope);
      if (!of) return undefined;
      for (const o of of) {
        overloads.push(o.params);
        if (o.variadic) variadic = true;
      }
    }
    if (overloads.length === 0) return undefined;
    const maxArgs = Math.max(...overloads.map((o) => o.length));
    const minArgs = Math.min(...overloads.map((o) => o.filter((p) => !p.optional).length));
    // Names in scope before the call's line, with the class each is bound to where the resolver proves one.
    const callLine = file.prefix.slice(0, cutAt).split('\n').length - 1;
    const inScope: Array<{ name: string; line: number; types: string[] }> = [];
    for (const [name, bindings] of flow.bindings) {
      if (name === 'self' || name === 'this' || name === 'cls' || name.includes('.')) continue;
      const before = bindings.filter((b) => b.line < callLine && b.edge !== 'field');
      const b = before.at(-1);
      if (!b) continue;
      const types = new Set<string>();
      for (const t of b.types) {
        const last = t.at(-1)?.name;
        if (last) types.add(last);
      }
      if (types.size === 0) {
        for (const v of b.values) {
          for (const e of resolver.evaluate(v, scope)) if ((e.kind === 'class' || e.kind === 'local') && e.instance) types.add(e.cls.name);
        }
      }
      inScope.push({ name, line: b.line, types: [...types] });
    }
    inScope.sort((a, b) => b.line - a.line);
    const preferred: (string | undefined)[] = [];
    for (let i = 0; i < maxArgs; i++) {
      let pick: string | undefined;
      for (const o of overloads) {
        const p = o[i];
        if (!p) continue;
        pick = inScope.find((v) => v.name === p.name)?.name;
        if (pick) break;
      }
      if (!pick) {
        for (const o of overloads) {
          const type = bareTypeName(o[i]?.type);
          if (!type) continue;
          pick = inScope.find((v) => v.types.includes(type))?.name;
          if (pick) break;
        }
      }
      preferred.push(pick);
    }
    return { callee: open.callee, entities: entities.map(describe), overloads, variadic, maxArgs, minArgs, preferred };
  }

  /** The dataflow scope of the prefix cut at `cutAt` (the expression's start) and a resolver over it. */
  private scopeAt(file: TypedFile, cutAt: number, signal: AbortSignal): { scope: Scope; resolver: Evaluator } {
    const symbols = this.kb.symbols.table();
    const analyses = file.analyses ?? new UnfinishedAnalyses();
    const { flow, extraction } = analyses.analyse(this.parsers, file.path, file.lang, file.prefix.slice(0, cutAt));
    throwIfAborted(signal);
    const scope: Scope = { path: file.path, lang: file.lang, extraction, flow };
    return { scope, resolver: new Evaluator(symbols, { unfinished: scope, typedLocalCalls: true }) };
  }

  /** A callable entity's parameter lists (a class: its constructors); undefined when not a proven repository callable. */
  private parametersOf(symbols: SymbolTable, e: Entity, scope: Scope): Array<{ params: Parameter[]; variadic: boolean }> | undefined {
    let cls: KbClass | undefined;
    if (e.kind === 'class' && !e.instance) cls = e.cls;
    else if (e.kind === 'local' && !e.instance) cls = symbols.file(scope.path)?.classes.find((c) => c.name === e.cls.name);
    else if (e.kind === 'item' && (e.item.kind === 'function' || e.item.kind === 'classFunction')) {
      const item = e.item;
      const dropReceiver = item.lang === 'python' && item.kind === 'classFunction' && !/@staticmethod\b/.test(item.text);
      const parsed = parseParameters(item.signature, item.lang, dropReceiver);
      return parsed ? [parsed] : undefined;
    }
    if (!cls || cls.kind === 'record' || cls.kind === 'interface') return undefined;
    const members = symbols.classMembers(cls);
    if (cls.lang === 'python') {
      const init = members.filter((m) => m.name === '__init__');
      // No __init__ of its own: inherited or generated (a dataclass) — not proven here.
      if (init.length !== 1) return undefined;
      const parsed = parseParameters(init[0]!.signature, 'python', true);
      return parsed ? [parsed] : undefined;
    }
    const ctors = members.filter((m) => m.name === cls.name && m.kind === 'classFunction');
    if (ctors.length === 0) return cls.kind === 'class' ? [{ params: [], variadic: false }] : undefined;
    const out: Array<{ params: Parameter[]; variadic: boolean }> = [];
    for (const c of ctors) {
      const parsed = parseParameters(c.signature, 'java', false);
      if (!parsed) return undefined;
      out.push(parsed);
    }
    return out;
  }

  /** The receiver's entities, each step proven; undefined as soon as one is not. `values`: a variable or property stands for its value. */
  private evaluate(
    resolver: Evaluator,
    chain: Chain,
    scope: Scope,
    prefix: string,
    superCall: boolean,
    values = true,
  ): Entity[] | undefined {
    const flow = scope.flow!;
    const head = chain[0]!;
    let current: Entity[];
    if (superCall) {
      const cls = flow.enclosingClass;
      if (!cls || cls.bases.length === 0) return undefined;
      current = [];
      for (const base of cls.bases) {
        const found = resolver.evaluate(base, scope).filter((e) => e.kind === 'class' || e.kind === 'local');
        if (found.length === 0) return undefined;
        current.push(...found.map((e) => ({ ...e, instance: true }) as Entity));
      }
      return current;
    }
    if (declaredAsContainer(prefix, head.name, scope.lang)) return undefined;
    // Every binding of a variable must be proven, not only the one the resolver can follow.
    const bindings = head.name === 'self' || head.name === 'this' || head.name === 'cls' ? undefined : flow.bindings.get(head.name);
    if (bindings && bindings.length > 0) {
      for (const b of bindings.slice(-2)) {
        const sources = b.types.length > 0 ? b.types : b.values;
        if (sources.length === 0) return undefined;
        for (const s of sources) if (resolver.evaluate(s, scope).length === 0) return undefined;
      }
    }
    current = resolver.evaluate([head], scope);
    for (let i = 1; i < chain.length && current.length > 0; i++) {
      const seg = chain[i]!;
      if (seg.name === '[]') return undefined;
      if (scope.lang === 'python' && declaredAsContainer(prefix, seg.name, 'python') && current.some((e) => e.kind === 'local'))
        return undefined;
      current = current.flatMap((e) => this.valueOf(resolver, e) ?? [e]).flatMap((e) => resolver.memberOf(e, seg.name));
      if (seg.call) {
        const called: Entity[] = [];
        for (const e of current) {
          if (e.kind === 'item' && isContainerType(returnTypeText(e.item))) return undefined;
          called.push(...resolver.callOf(e));
        }
        current = called;
      }
    }
    if (!values) return current;
    const out: Entity[] = [];
    for (const e of current) {
      const v = this.valueOf(resolver, e);
      if (v === undefined) out.push(e);
      else if (v.length === 0) return undefined;
      else out.push(...v);
    }
    return out;
  }

  /** An item's value (a variable's class, a property's return type); undefined for other entities. */
  private valueOf(resolver: Evaluator, e: Entity): Entity[] | undefined {
    if (e.kind !== 'item') return undefined;
    const item = e.item;
    if (item.kind === 'function' || item.kind === 'classFunction') {
      // A function or method object (not a property) has no repository members.
      if (!(item.lang === 'python' && /@(\w+\.)?(cached_)?property\b/.test(item.text))) return [];
      if (isContainerType(returnTypeText(item))) return [];
    } else if (isContainerType(variableTypeText(item))) return [];
    return resolver.valueOfItem(item).filter((v) => v.kind !== 'item');
  }

  private namesOf(resolver: Evaluator, e: Entity, scope: Scope, prefix: string, seen: Set<string>): string[] | undefined {
    const symbols = resolver.symbols;
    switch (e.kind) {
      case 'module': {
        if (seen.has(`m:${e.key}`)) return [];
        seen.add(`m:${e.key}`);
        const out = [...symbols.pythonSubmodules(e.key), ...PYTHON_MODULE];
        const path = symbols.pythonModuleFile(e.key);
        if (!path) return out;
        const x = symbols.file(path);
        if (!x || x.hasSyntaxErrors) return undefined;
        out.push(...symbols.topLevelDefinitions(path).map((d) => d.name));
        for (const imp of x.imports) {
          if (!imp.wildcard) {
            out.push(imp.alias ?? imp.name ?? imp.module.split('.')[0] ?? '');
            continue;
          }
          const key = symbols.pythonModule(imp.module, path);
          if (key === undefined) return undefined;
          const more = this.namesOf(resolver, { kind: 'module', key }, scope, prefix, seen);
          if (!more) return undefined;
          out.push(...more);
        }
        return out;
      }
      case 'class':
        return this.classNames(resolver, e.cls, !e.instance, seen, scope.flow?.enclosingClasses);
      case 'local': {
        // A class of the file being edited: its indexed version, what the prefix adds, its bases.
        const indexed = symbols.file(scope.path)?.classes.find((c) => c.name === e.cls.name);
        if (!indexed) return undefined;
        const own = this.classNames(resolver, indexed, !e.instance, seen, scope.flow?.enclosingClasses);
        if (!own) return undefined;
        const added =
          scope.lang === 'python'
            ? [...prefix.matchAll(/\bdef\s+([\p{L}_][\p{L}\p{N}_]*)|\b(?:self|cls)\.([\p{L}_][\p{L}\p{N}_]*)\s*(?::[^=\n]*)?=/gu)].map(
                (m) => m[1] ?? m[2] ?? '',
              )
            : javaDeclaredNames(prefix, !e.instance);
        return [...own, ...added];
      }
      case 'item':
        return undefined;
      case 'moduleSummary':
        return undefined;
    }
  }

  /**
   * A class's members, its nested classes and its bases' members; undefined when a base is not a repository class. A Java type name
   * (`typeName`) has only its static members, its nested types, `class` and, for a class around the cursor (`enclosing`), `this` and
   * `super`.
   */
  private classNames(
    resolver: Evaluator,
    cls: KbClass,
    typeName: boolean,
    seen: Set<string>,
    enclosing: readonly string[] = [],
  ): string[] | undefined {
    const key = `c:${cls.path}#${cls.qualifiedName}`;
    if (seen.has(key)) return [];
    seen.add(key);
    const symbols = resolver.symbols;
    if (cls.kind === 'record') return undefined;
    const members: readonly KbItem[] = symbols.classMembers(cls);
    if (members.some((m) => m.name === '__getattr__' || m.name === '__getattribute__')) return undefined;
    // A Java constructor is not a member; after a Java type name only static members are.
    const javaType = cls.lang === 'java' && typeName;
    const out = members
      .filter((m) => !(cls.lang === 'java' && m.name === cls.name) && (!javaType || javaStatic(m, cls)))
      .map((m) => m.name);
    const nestedPrefix = `${cls.qualifiedName}.`;
    for (const c of symbols.file(cls.path)?.classes ?? [])
      if (c.qualifiedName.startsWith(nestedPrefix) && !c.qualifiedName.slice(nestedPrefix.length).includes('.')) out.push(c.name);
    if (cls.lang === 'python') {
      out.push(...PYTHON_OBJECT);
      if (typeName) out.push(...PYTHON_CLASS);
    } else if (javaType) {
      out.push('class');
      if (cls.kind === 'enum') out.push(...JAVA_ENUM_STATIC);
      if (enclosing.includes(cls.name)) out.push(...JAVA_QUALIFIED);
    } else {
      out.push(...JAVA_OBJECT);
      if (cls.kind === 'enum') out.push(...JAVA_ENUM);
    }
    const plain = cls.lang === 'python' ? PYTHON_PLAIN_BASES : JAVA_PLAIN_BASES;
    for (const base of cls.bases) {
      const bare = base.replace(/[<[].*$/s, '').trim();
      if (plain.has(bare)) continue;
      const found = resolver.resolveBase(cls, base);
      if (found.length === 0) return undefined;
      for (const b of found) {
        const more = this.classNames(resolver, b, typeName, seen);
        if (!more) return undefined;
        out.push(...more);
      }
    }
    return out;
  }

  /**
   * A Python class with no base and no `__init__` (a mixin: `self.url` is set by the classes that use it) does not prove what `self`
   * lacks.
   */
  private mixinLike(resolver: Evaluator, e: Entity, scope: Scope): boolean {
    const cls =
      e.kind === 'class'
        ? e.cls
        : e.kind === 'local'
          ? resolver.symbols.file(scope.path)?.classes.find((c) => c.name === e.cls.name)
          : undefined;
    if (!cls || cls.lang !== 'python') return false;
    if (cls.bases.some((b) => !PYTHON_PLAIN_BASES.has(b.replace(/[<[].*$/s, '').trim()))) return false;
    return !resolver.symbols.classMembers(cls).some((m) => m.name === '__init__');
  }

  /** The symbol table belongs to the knowledge base: nothing to release here. */
  dispose(): void {}
}

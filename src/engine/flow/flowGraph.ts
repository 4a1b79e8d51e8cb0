// The intra-file dataflow graph of the unfinished file (DraCo, as CodeRAG section 2.2.1 uses it):
// variables and their defining edges (assign, param, forin, as, type), classes with their parent
// classes (successor), attribute chains (comesfrom). Built per language from the prefix's tree.

import type { KbImport } from '../kb/types';
import { JAVA_KEYWORDS as JAVA_KEYWORDS_ONLY, PYTHON_KEYWORDS as PYTHON_KEYWORDS_ONLY } from '../util/codeText';

/** One step of an attribute chain: `a.b(...)` is [{a}, {b, call}]; `x[i]` adds an opaque `[]` step. */
interface Segment {
  name: string;
  call?: boolean;
  /** The identifier being typed at the cursor: members are matched by prefix. */
  partial?: boolean;
}

/** An attribute chain (DraCo's comesfrom edges link each prefix of it to the next). */
export type Chain = Segment[];

export type EdgeKind = 'assign' | 'param' | 'forin' | 'as' | 'type' | 'field';

/** A variable's defining occurrence; the variable depends on its chains (values) and types. */
export interface Binding {
  name: string;
  /** 0-based line of the definition. */
  line: number;
  edge: EdgeKind;
  /** Value chains of the right-hand side (assign / forin / as). */
  values: Chain[];
  /** Declared or hinted types (DraCo type / related_type edges), outer type first. */
  types: Chain[];
}

export interface TypeRef {
  chain: Chain;
  /** 0-based row of its use nearest the cursor in the parsed (folded) prefix: orders the references, not a line of the file. */
  line: number;
}

export interface LocalClass {
  name: string;
  /** Parent classes (successor edges). */
  bases: Chain[];
}

interface LocalFunction {
  name: string;
  returns: Chain[];
}

export interface FileFlow {
  /** Imports inside the functions enclosing the cursor (module-level ones come from the extractor). */
  localImports: KbImport[];
  /** Bindings visible at the cursor (module level, enclosing functions, the enclosing class's fields), in line order. */
  bindings: Map<string, Binding[]>;
  /** The class around the cursor (for `self` / `this`). */
  enclosingClass?: LocalClass;
  /** Java: the names of every class around the cursor, outermost first (the `Outer.this` a nested class may write). */
  enclosingClasses?: string[];
  classes: Map<string, LocalClass>;
  functions: Map<string, LocalFunction>;
  /** Variables of the last unfinished line: where the walk starts. */
  seeds: Chain[];
  /**
   * Java: the types the enclosing class and method use before the cursor (declared types, generic
   * arguments, `new T(`, casts, static receivers, annotations, extends / implements), nearest the
   * cursor first, each once.
   */
  typeRefs: TypeRef[];
  /** 0-based line the seeds were taken from. */
  seedLine: number;
}

export function chainText(chain: Chain): string {
  return chain.map((s) => s.name + (s.call ? '()' : '')).join('.');
}

export function addBinding(flow: FileFlow, binding: Binding): void {
  const list = flow.bindings.get(binding.name);
  if (list) list.push(binding);
  else flow.bindings.set(binding.name, [binding]);
}

export function emptyFlow(): FileFlow {
  return { localImports: [], bindings: new Map(), classes: new Map(), functions: new Map(), seeds: [], typeRefs: [], seedLine: 0 };
}

const IDENT = String.raw`[\p{L}_][\p{L}\p{N}_]*`;
// A dotted chain, each step optionally followed by a call's open parenthesis.
const CHAIN_RE = new RegExp(String.raw`(?<![\p{L}\p{N}_.])${IDENT}(?:\s*\.\s*${IDENT})*(?:\s*\()?`, 'gu');
const STEP_RE = new RegExp(`${IDENT}`, 'gu');
const CONTINUE_RE = new RegExp(String.raw`^\s*\.\s*${IDENT}(?:\s*\.\s*${IDENT})*(?:\s*\()?`, 'u');

/** Index of the `)` closing the parenthesis opened just before `from`, or -1. */
function matchingParen(code: string, from: number): number {
  let depth = 1;
  for (let i = from; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c === 40) depth++;
    else if (c === 41 && --depth === 0) return i;
  }
  return -1;
}

/**
 * Chains of a line of source, read lexically (the unfinished line rarely parses): `a.b(c).d` gives
 * a.b() (and c, then d as a separate chain, since a call's result is not followed lexically).
 */
export function chainsOfText(text: string, keywords: ReadonlySet<string>): Chain[] {
  const out: Chain[] = [];
  // Drop string literals and comments so their words are not taken for variables.
  const code = text.replace(/(["'])(?:\\.|(?!\1).)*\1?/g, ' ').replace(/(#|\/\/).*$/, '');
  for (const m of code.matchAll(CHAIN_RE)) {
    const raw = m[0];
    const names = raw.match(STEP_RE) ?? [];
    const chain: Chain = names.map((name) => ({ name }));
    if (chain.length === 0 || keywords.has(chain[0]!.name)) continue;
    // A call's result followed by more steps (`make().value`): skip the arguments and go on.
    let end = (m.index ?? 0) + raw.length;
    let call = raw.trimEnd().endsWith('(');
    while (call) {
      chain[chain.length - 1]!.call = true;
      const close = matchingParen(code, end);
      const more = close < 0 ? null : CONTINUE_RE.exec(code.slice(close + 1));
      if (!more) break;
      for (const name of more[0].match(STEP_RE) ?? []) chain.push({ name });
      end = close + 1 + more[0].length;
      call = more[0].trimEnd().endsWith('(');
    }
    out.push(chain);
    // An identifier touching the end of the text is still being typed.
    if (end === code.length && /[\p{L}\p{N}_]$/u.test(code)) chain[chain.length - 1]!.partial = true;
  }
  return out;
}

/** Dotted names inside a type expression (`Optional[Cart]`, `Map<String, List<Line>>`), outer first. */
export function typeChains(typeText: string, ignore: ReadonlySet<string>): Chain[] {
  const out: Chain[] = [];
  const cleaned = typeText.replace(/["']/g, ' ');
  const re = new RegExp(`${IDENT}(?:\\s*\\.\\s*${IDENT})*`, 'gu');
  for (const m of cleaned.matchAll(re)) {
    const names = m[0].match(STEP_RE) ?? [];
    if (names.length === 0 || ignore.has(names[0]!)) continue;
    out.push(names.map((name) => ({ name })));
  }
  return out;
}

/** Names the dataflow graph never resolves: the language's keywords, literals and common builtins. */
export const PYTHON_KEYWORDS: ReadonlySet<string> = new Set([
  ...PYTHON_KEYWORDS_ONLY,
  'False',
  'None',
  'True',
  'print',
  'len',
  'str',
  'int',
  'float',
  'bool',
  'list',
  'dict',
  'set',
  'tuple',
  'range',
  'isinstance',
  'super',
  'type',
  'object',
  'bytes',
  'open',
  'getattr',
  'setattr',
  'hasattr',
  'sorted',
  'enumerate',
  'zip',
  'map',
  'filter',
  'sum',
  'min',
  'max',
  'any',
  'all',
  'iter',
  'next',
  'repr',
  'format',
  'id',
  'abs',
  'round',
  'Exception',
  'ValueError',
  'TypeError',
  'KeyError',
  'IndexError',
  'RuntimeError',
  'NotImplementedError',
  'AttributeError',
  'OSError',
  'IOError',
]);

export const PYTHON_TYPE_IGNORE: ReadonlySet<string> = new Set([
  'None',
  'str',
  'int',
  'float',
  'bool',
  'bytes',
  'list',
  'dict',
  'set',
  'tuple',
  'object',
  'type',
  'typing',
  'Optional',
  'Union',
  'List',
  'Dict',
  'Set',
  'Tuple',
  'Any',
  'Callable',
  'Iterable',
  'Iterator',
  'Sequence',
  'Mapping',
  'Type',
  'ClassVar',
  'Final',
  'Generator',
  'Awaitable',
  'Coroutine',
  'Literal',
]);

export const JAVA_KEYWORDS: ReadonlySet<string> = new Set([
  ...JAVA_KEYWORDS_ONLY,
  'var',
  'true',
  'false',
  'null',
  'record',
  'String',
  'Object',
  'System',
  'Integer',
  'Long',
  'Double',
  'Boolean',
  'Math',
  'List',
  'Map',
  'Set',
  'ArrayList',
  'HashMap',
]);

export const JAVA_TYPE_IGNORE: ReadonlySet<string> = new Set([
  'void',
  'int',
  'long',
  'short',
  'byte',
  'char',
  'boolean',
  'float',
  'double',
  'var',
  'String',
  'Object',
  'Integer',
  'Long',
  'Double',
  'Boolean',
  'Character',
  'Byte',
  'Short',
  'Float',
  'List',
  'Map',
  'Set',
  'Collection',
  'Iterable',
  'Optional',
  'ArrayList',
  'HashMap',
  'HashSet',
  'LinkedList',
  'Function',
  'Supplier',
  'Consumer',
  'Predicate',
  'BiFunction',
  'Stream',
  'extends',
  'super',
  'final',
  'public',
  'private',
  'protected',
  'static',
  'abstract',
  'synchronized',
  'native',
  'default',
  'transient',
  'volatile',
]);

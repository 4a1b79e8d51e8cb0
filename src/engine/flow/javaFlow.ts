// Java side of the intra-file dataflow graph (DraCo's edges for Java): local variable and field
// declarations with their declared types, parameters, enhanced for, try-with-resources, catch
// parameters, `this.x` fields, classes with extends/implements (successor), method return types.
import type { Node } from 'web-tree-sitter';
import {
  addBinding,
  chainText,
  emptyFlow,
  JAVA_KEYWORDS,
  JAVA_TYPE_IGNORE,
  typeChains,
  type Chain,
  type EdgeKind,
  type FileFlow,
  type TypeRef,
} from './flowGraph';
import { MAX_NESTING_DEPTH } from '../util/codeText';

function javaChain(node: Node | null): Chain | undefined {
  if (!node) return undefined;
  switch (node.type) {
    case 'identifier':
    case 'type_identifier':
      return [{ name: node.text }];
    case 'this':
      return [{ name: 'this' }];
    case 'scoped_identifier':
    case 'scoped_type_identifier':
      return node.text.split('.').map((s) => ({ name: s.trim() }));
    case 'generic_type':
      return javaChain(node.namedChild(0));
    case 'field_access': {
      const object = javaChain(node.childForFieldName('object'));
      const field = node.childForFieldName('field');
      return object && field ? [...object, { name: field.text }] : undefined;
    }
    case 'method_invocation': {
      const name = node.childForFieldName('name');
      if (!name) return undefined;
      const objectNode = node.childForFieldName('object');
      const object = objectNode ? javaChain(objectNode) : [];
      return object ? [...object, { name: name.text, call: true }] : undefined;
    }
    case 'object_creation_expression': {
      const type = javaChain(node.childForFieldName('type'));
      if (!type || type.length === 0) return undefined;
      return [...type.slice(0, -1), { ...type[type.length - 1]!, call: true }];
    }
    case 'array_access': {
      const array = javaChain(node.childForFieldName('array'));
      return array ? [...array, { name: '[]' }] : undefined;
    }
    case 'parenthesized_expression':
      return javaChain(node.namedChild(0));
    case 'cast_expression':
      return javaChain(node.childForFieldName('type'));
    default:
      return undefined;
  }
}

function valueChains(node: Node | null, out: Chain[] = [], depth = 0): Chain[] {
  if (!node || depth > 6) return out;
  const chain = javaChain(node);
  if (chain) {
    out.push(chain);
    return out;
  }
  if (node.type === 'lambda_expression' || node.type === 'string_literal') return out;
  for (const child of node.namedChildren) valueChains(child, out, depth + 1);
  return out;
}

function declaredTypes(node: Node | null): Chain[] {
  return node ? typeChains(node.text, JAVA_TYPE_IGNORE) : [];
}

const CLASS_LIKE = new Set(['class_declaration', 'interface_declaration', 'enum_declaration', 'record_declaration']);
const METHOD_LIKE = new Set(['method_declaration', 'constructor_declaration', 'compact_constructor_declaration']);

const DESCEND = new Set([
  'program',
  'block',
  'ERROR',
  'class_body',
  'interface_body',
  'enum_body',
  'enum_body_declarations',
  'record_body',
  'constructor_body',
  'switch_block',
  'switch_block_statement_group',
  'switch_rule',
  'resource_specification',
  'catch_clause',
  'finally_clause',
  'expression_statement',
  'static_initializer',
]);

function descends(type: string): boolean {
  return DESCEND.has(type) || type.endsWith('_statement');
}

/** The graph of the parsed prefix at `cursor`; its seeds are the caller's (they do not change the graph). */
export function buildJavaFlow(root: Node, cursor: number): FileFlow {
  const walker = new JavaFlowWalker(cursor);
  walker.walk(root, true, false);
  const flow = walker.flow;
  for (const list of flow.bindings.values()) list.sort((a, b) => a.line - b.line);
  flow.typeRefs = javaTypeRefs(root, cursor);
  return flow;
}

/**
 * One walk over the prefix's declarations and statements: classes, methods and their return types
 * everywhere, bindings only where they are in scope at the cursor (`visible`) or are fields of the
 * cursor's class (`inCursorClass`).
 */
class JavaFlowWalker {
  readonly flow: FileFlow = emptyFlow();
  private readonly cursor: number;

  constructor(cursor: number) {
    this.cursor = cursor;
  }

  walk(node: Node, visible: boolean, inCursorClass: boolean, depth = 0): void {
    // Nesting past any real code's (5,000 blocks) is not walked: the stack stays bounded by design.
    if (depth > MAX_NESTING_DEPTH) return;
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (CLASS_LIKE.has(child.type)) this.walkClass(child, depth);
      else if (METHOD_LIKE.has(child.type)) this.walkMethod(child, depth);
      else this.walkStatement(child, visible, inCursorClass, depth);
    }
  }

  private contains(n: Node): boolean {
    return n.startIndex <= this.cursor && n.endIndex >= this.cursor;
  }

  /** A class, interface, enum or record: its name and bases, its record components as fields, then its body. */
  private walkClass(child: Node, depth: number): void {
    const name = child.childForFieldName('name')?.text ?? '';
    const bases: Chain[] = [];
    for (const c of child.namedChildren) {
      if (c && (c.type === 'superclass' || c.type === 'super_interfaces' || c.type === 'extends_interfaces'))
        bases.push(...declaredTypes(c));
    }
    const cls = { name, bases };
    if (name) this.flow.classes.set(name, cls);
    const here = this.contains(child);
    if (here) {
      this.flow.enclosingClass = cls;
      if (name) (this.flow.enclosingClasses ??= []).push(name);
    }
    if (child.type === 'record_declaration' && here) this.bindRecordComponents(child);
    const body = child.childForFieldName('body');
    if (body) this.walk(body, false, here, depth + 1);
  }

  /** A record's components are `this.` fields of the record the cursor is in. */
  private bindRecordComponents(record: Node): void {
    for (const p of record.childForFieldName('parameters')?.namedChildren ?? []) {
      const pname = p?.childForFieldName('name')?.text;
      if (p && pname)
        addBinding(this.flow, {
          name: `this.${pname}`,
          line: p.startPosition.row,
          edge: 'field',
          values: [],
          types: declaredTypes(p.childForFieldName('type')),
        });
    }
  }

  /** A method or constructor: its return type, and, when the cursor is inside it, its parameters and body. */
  private walkMethod(child: Node, depth: number): void {
    const name = child.childForFieldName('name')?.text;
    if (name && child.type === 'method_declaration')
      this.flow.functions.set(name, { name, returns: declaredTypes(child.childForFieldName('type')) });
    if (!this.contains(child)) return;
    this.bindParameters(child);
    const body = child.childForFieldName('body');
    if (body) this.walk(body, true, false, depth + 1);
  }

  private bindParameters(method: Node): void {
    for (const p of method.childForFieldName('parameters')?.namedChildren ?? []) {
      if (!p || (p.type !== 'formal_parameter' && p.type !== 'spread_parameter')) continue;
      const nameNode =
        p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'variable_declarator')?.childForFieldName('name') ?? null;
      if (nameNode)
        addBinding(this.flow, {
          name: nameNode.text,
          line: nameNode.startPosition.row,
          edge: 'param',
          values: [],
          types: declaredTypes(p.childForFieldName('type') ?? p.namedChild(0)),
        });
    }
  }

  /** Anything but a class or a method: the declarations and statements that bind names, and those that hold them. */
  private walkStatement(child: Node, visible: boolean, inCursorClass: boolean, depth: number): void {
    switch (child.type) {
      case 'field_declaration':
      case 'constant_declaration':
        this.declare(child, 'field', inCursorClass, inCursorClass);
        break;
      case 'local_variable_declaration':
        this.declare(child, 'assign', visible, false);
        this.walk(child, visible, inCursorClass, depth + 1);
        break;
      case 'enhanced_for_statement':
        if (visible) this.bindNamedValue(child, 'forin');
        this.walk(child, visible, inCursorClass, depth + 1);
        break;
      case 'resource':
        if (visible) this.bindNamedValue(child, 'as');
        break;
      case 'catch_formal_parameter':
        if (visible) this.bindCatchParameter(child);
        break;
      case 'assignment_expression':
        if (visible) this.bindAssignment(child);
        this.walk(child, visible, inCursorClass, depth + 1);
        break;
      case 'enum_constant': {
        // A constant's own class body (`Initial { boolean process(Token t) {...} }`): its methods are scopes too.
        const body = child.childForFieldName('body');
        if (body && this.contains(body)) this.walk(body, false, inCursorClass, depth + 1);
        break;
      }
      case 'import_declaration':
      case 'package_declaration':
        break;
      default:
        // Bindings live in statements and declarations: skip expressions, lambdas, literals.
        if (descends(child.type)) this.walk(child, visible, inCursorClass, depth + 1);
    }
  }

  /** A field or local variable declaration's declarators, as fields (`this.x`) and/or plain names. */
  private declare(decl: Node, edge: EdgeKind, visible: boolean, field: boolean): void {
    const types = declaredTypes(decl.childForFieldName('type'));
    for (const d of decl.namedChildren) {
      if (d?.type !== 'variable_declarator') continue;
      const name = d.childForFieldName('name')?.text;
      if (!name) continue;
      const values = valueChains(d.childForFieldName('value'));
      const binding = { name, line: d.startPosition.row, edge, values, types };
      if (field) addBinding(this.flow, { ...binding, name: `this.${name}`, edge: 'field' });
      if (visible) addBinding(this.flow, binding);
    }
  }

  /** An enhanced for's variable or a try resource: its name, declared type and value. */
  private bindNamedValue(node: Node, edge: EdgeKind): void {
    const name = node.childForFieldName('name')?.text;
    if (!name) return;
    addBinding(this.flow, {
      name,
      line: node.startPosition.row,
      edge,
      values: valueChains(node.childForFieldName('value')),
      types: declaredTypes(node.childForFieldName('type')),
    });
  }

  private bindCatchParameter(node: Node): void {
    const name = node.childForFieldName('name')?.text;
    const type = node.namedChildren.find((c) => c?.type === 'catch_type') ?? null;
    if (name) addBinding(this.flow, { name, line: node.startPosition.row, edge: 'param', values: [], types: declaredTypes(type) });
  }

  /** `a.b = value` (no call on the left): the dotted name takes the value. */
  private bindAssignment(node: Node): void {
    const left = javaChain(node.childForFieldName('left'));
    if (!left || !left.every((s) => !s.call)) return;
    addBinding(this.flow, {
      name: left.map((s) => s.name).join('.'),
      line: node.startPosition.row,
      edge: 'assign',
      values: valueChains(node.childForFieldName('right')),
      types: [],
    });
  }
}

/** Type references kept per request: the nearest ones (a long class uses hundreds). */
const MAX_TYPE_REFS = 60;

/**
 * The types the outermost class around the cursor uses before it (its header, fields, method
 * signatures and bodies): type identifiers (generic arguments, casts, `new T(`, arrays included),
 * dotted types as one chain, capitalised static receivers (`Foo.bar()`, `Foo.X`) and annotation
 * names; nearest the cursor first, each once, type parameters and ignored JDK types left out.
 */
function javaTypeRefs(root: Node, cursor: number): TypeRef[] {
  const outer =
    root.namedChildren.find((c) => c !== null && CLASS_LIKE.has(c.type) && c.startIndex <= cursor && c.endIndex >= cursor) ?? null;
  if (!outer) return [];
  const found: TypeRef[] = [];
  const typeParams = new Set<string>();
  const add = (chain: Chain, node: Node): void => {
    const head = chain[0]?.name;
    if (!head || JAVA_TYPE_IGNORE.has(head) || JAVA_KEYWORDS.has(head) || typeParams.has(head)) return;
    found.push({ chain, line: node.startPosition.row });
  };
  const visit = (node: Node): void => {
    if (node.startIndex >= cursor) return;
    switch (node.type) {
      case 'type_parameter': {
        const name = node.namedChildren.find((c) => c?.type === 'type_identifier' || c?.type === 'identifier');
        if (name) typeParams.add(name.text);
        break;
      }
      case 'type_identifier':
        add([{ name: node.text }], node);
        return;
      case 'scoped_type_identifier':
        add(
          node.text.split('.').map((s) => ({ name: s.trim() })),
          node,
        );
        return;
      case 'marker_annotation':
      case 'annotation': {
        const name = node.childForFieldName('name');
        if (name)
          add(
            name.text.split('.').map((s) => ({ name: s.trim() })),
            node,
          );
        break;
      }
      case 'method_invocation':
      case 'field_access': {
        const object = node.childForFieldName('object');
        if (object?.type === 'identifier' && /^\p{Lu}/u.test(object.text) && !/^[\p{Lu}\d_]+$/u.test(object.text))
          add([{ name: object.text }], object);
        break;
      }
      case 'line_comment':
      case 'block_comment':
      case 'string_literal':
        return;
    }
    for (const c of node.namedChildren) if (c) visit(c);
  };
  visit(outer);
  const seen = new Set<string>();
  const out: TypeRef[] = [];
  for (const ref of found.sort((a, b) => b.line - a.line)) {
    const key = chainText(ref.chain);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(ref);
    if (out.length >= MAX_TYPE_REFS) break;
  }
  return out;
}

// Java side of the intra-file dataflow graph (DraCo's edges for Java): local variable and field
// declarations with their declared types, parameters, enhanced for, try-with-resources, catch
// parameters, `this.x` fields, classes with extends/implements (successor), method return types.
import type { Node } from 'web-tree-sitter';
import { addBinding, chainsOfText, emptyFlow, JAVA_KEYWORDS, JAVA_TYPE_IGNORE, typeChains, type Chain, type EdgeKind, type FileFlow } from './flowGraph';

export function javaChain(node: Node | null): Chain | undefined {
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

const DESCEND = new Set(['program', 'block', 'ERROR', 'class_body', 'interface_body', 'enum_body', 'enum_body_declarations', 'record_body', 'constructor_body', 'switch_block', 'switch_block_statement_group', 'switch_rule', 'resource_specification', 'catch_clause', 'finally_clause', 'expression_statement', 'static_initializer']);

function descends(type: string): boolean {
  return DESCEND.has(type) || type.endsWith('_statement');
}

export function buildJavaFlow(root: Node, cursor: number, seedText: string, seedLine: number): FileFlow {
  const flow = emptyFlow();
  flow.seedLine = seedLine;
  flow.seeds = chainsOfText(seedText, JAVA_KEYWORDS);
  const contains = (n: Node): boolean => n.startIndex <= cursor && n.endIndex >= cursor;

  const declare = (decl: Node, edge: EdgeKind, visible: boolean, field: boolean): void => {
    const types = declaredTypes(decl.childForFieldName('type'));
    for (const d of decl.namedChildren) {
      if (d?.type !== 'variable_declarator') continue;
      const name = d.childForFieldName('name')?.text;
      if (!name) continue;
      const values = valueChains(d.childForFieldName('value'));
      const binding = { name, line: d.startPosition.row, edge, values, types };
      if (field) addBinding(flow, { ...binding, name: `this.${name}`, edge: 'field' });
      if (visible) addBinding(flow, binding);
    }
  };

  const walk = (node: Node, visible: boolean, inCursorClass: boolean): void => {
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (CLASS_LIKE.has(child.type)) {
        const name = child.childForFieldName('name')?.text ?? '';
        const bases: Chain[] = [];
        for (const c of child.namedChildren) {
          if (c && (c.type === 'superclass' || c.type === 'super_interfaces' || c.type === 'extends_interfaces')) bases.push(...declaredTypes(c));
        }
        const cls = { name, bases };
        if (name) flow.classes.set(name, cls);
        const here = contains(child);
        if (here) flow.enclosingClass = cls;
        if (child.type === 'record_declaration') {
          for (const p of child.childForFieldName('parameters')?.namedChildren ?? []) {
            const pname = p?.childForFieldName('name')?.text;
            if (p && pname && here) addBinding(flow, { name: `this.${pname}`, line: p.startPosition.row, edge: 'field', values: [], types: declaredTypes(p.childForFieldName('type')) });
          }
        }
        const body = child.childForFieldName('body');
        if (body) walk(body, false, here);
        continue;
      }
      if (METHOD_LIKE.has(child.type)) {
        const name = child.childForFieldName('name')?.text;
        if (name && child.type === 'method_declaration') flow.functions.set(name, { name, returns: declaredTypes(child.childForFieldName('type')) });
        const here = contains(child);
        if (here) {
          for (const p of child.childForFieldName('parameters')?.namedChildren ?? []) {
            if (!p || (p.type !== 'formal_parameter' && p.type !== 'spread_parameter')) continue;
            const nameNode = p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'variable_declarator')?.childForFieldName('name') ?? null;
            if (nameNode) addBinding(flow, { name: nameNode.text, line: nameNode.startPosition.row, edge: 'param', values: [], types: declaredTypes(p.childForFieldName('type') ?? p.namedChild(0)) });
          }
          const body = child.childForFieldName('body');
          if (body) walk(body, true, false);
        }
        continue;
      }
      switch (child.type) {
        case 'field_declaration':
        case 'constant_declaration':
          declare(child, 'field', inCursorClass, inCursorClass);
          break;
        case 'local_variable_declaration':
          declare(child, 'assign', visible, false);
          walk(child, visible, inCursorClass);
          break;
        case 'enhanced_for_statement': {
          const name = child.childForFieldName('name')?.text;
          if (name && visible) addBinding(flow, { name, line: child.startPosition.row, edge: 'forin', values: valueChains(child.childForFieldName('value')), types: declaredTypes(child.childForFieldName('type')) });
          walk(child, visible, inCursorClass);
          break;
        }
        case 'resource': {
          const name = child.childForFieldName('name')?.text;
          if (name && visible) addBinding(flow, { name, line: child.startPosition.row, edge: 'as', values: valueChains(child.childForFieldName('value')), types: declaredTypes(child.childForFieldName('type')) });
          break;
        }
        case 'catch_formal_parameter': {
          const name = child.childForFieldName('name')?.text;
          const type = child.namedChildren.find((c) => c?.type === 'catch_type') ?? null;
          if (name && visible) addBinding(flow, { name, line: child.startPosition.row, edge: 'param', values: [], types: declaredTypes(type) });
          break;
        }
        case 'assignment_expression': {
          const left = javaChain(child.childForFieldName('left'));
          if (left && visible && left.every((s) => !s.call)) {
            const name = left.map((s) => s.name).join('.');
            addBinding(flow, { name, line: child.startPosition.row, edge: 'assign', values: valueChains(child.childForFieldName('right')), types: [] });
          }
          walk(child, visible, inCursorClass);
          break;
        }
        case 'import_declaration':
        case 'package_declaration':
          break;
        default:
          // Bindings live in statements and declarations: skip expressions, lambdas, literals.
          if (descends(child.type)) walk(child, visible, inCursorClass);
      }
    }
  };
  walk(root, true, false);
  for (const list of flow.bindings.values()) list.sort((a, b) => a.line - b.line);
  return flow;
}

// Python side of the intra-file dataflow graph (DraCo): assignments (incl. annotated and tuple
// targets), parameters with type hints, for-in, with-as, walrus, `self.x` fields, classes and
// their parents, functions and their return hints. Read from a tree of the prefix, which may
// hold ERROR nodes; whatever parsed is used.
import type { Node } from 'web-tree-sitter';
import type { KbImport } from '../kb/types';
import { addBinding, emptyFlow, PYTHON_TYPE_IGNORE, typeChains, type Chain, type EdgeKind, type FileFlow } from './flowGraph';
import { MAX_NESTING_DEPTH } from '../util/codeText';

/** The attribute chain of an expression node, or undefined when it is not one. */
function pythonChain(node: Node | null): Chain | undefined {
  if (!node) return undefined;
  switch (node.type) {
    case 'identifier':
      return [{ name: node.text }];
    case 'attribute': {
      const object = pythonChain(node.childForFieldName('object'));
      const attr = node.childForFieldName('attribute');
      return object && attr ? [...object, { name: attr.text }] : undefined;
    }
    case 'call': {
      const fn = pythonChain(node.childForFieldName('function'));
      if (!fn || fn.length === 0) return undefined;
      const last = fn[fn.length - 1]!;
      return [...fn.slice(0, -1), { ...last, call: true }];
    }
    case 'subscript': {
      const value = pythonChain(node.childForFieldName('value'));
      return value ? [...value, { name: '[]' }] : undefined;
    }
    case 'parenthesized_expression':
    case 'await':
      return pythonChain(node.namedChild(0));
    default:
      return undefined;
  }
}

/** Value chains of an expression: itself when it is a chain, else the chains inside it (`a or b()` -> a, b()). */
function valueChains(node: Node | null, out: Chain[] = [], depth = 0): Chain[] {
  if (!node || depth > 6) return out;
  const chain = pythonChain(node);
  if (chain) {
    out.push(chain);
    return out;
  }
  if (node.type === 'lambda' || node.type === 'string') return out;
  for (const child of node.namedChildren) valueChains(child, out, depth + 1);
  return out;
}

function targetNames(node: Node | null): Node[] {
  if (!node) return [];
  if (node.type === 'identifier' || node.type === 'attribute') return [node];
  if (['pattern_list', 'tuple_pattern', 'list_pattern', 'tuple', 'list', 'parenthesized_expression'].includes(node.type)) {
    return node.namedChildren.flatMap((c) => targetNames(c));
  }
  return [];
}

function targetName(node: Node): string | undefined {
  const chain = pythonChain(node);
  return chain && chain.every((s) => !s.call && s.name !== '[]') ? chain.map((s) => s.name).join('.') : undefined;
}

function hint(node: Node | null): Chain[] {
  return node ? typeChains(node.text, PYTHON_TYPE_IGNORE) : [];
}

/** The bindings of one import statement, as the knowledge base's extractor records them. */
function pythonImports(stmt: Node): KbImport[] {
  const line = stmt.startPosition.row;
  const out: KbImport[] = [];
  if (stmt.type === 'import_statement') {
    for (const n of stmt.childrenForFieldName('name')) {
      if (!n) continue;
      if (n.type === 'aliased_import') {
        const module = n.childForFieldName('name')?.text;
        const alias = n.childForFieldName('alias')?.text;
        if (module) out.push({ module, ...(alias ? { alias } : {}), line });
      } else {
        out.push({ module: n.text, alias: n.text.split('.', 1)[0] ?? n.text, line });
      }
    }
    return out;
  }
  const module = stmt.childForFieldName('module_name')?.text ?? '';
  for (const c of stmt.namedChildren) {
    if (c?.type === 'wildcard_import') out.push({ module, wildcard: true, line });
  }
  for (const n of stmt.childrenForFieldName('name')) {
    if (!n) continue;
    const nameNode = n.type === 'aliased_import' ? n.childForFieldName('name') : n;
    const alias = n.type === 'aliased_import' ? n.childForFieldName('alias')?.text : undefined;
    if (nameNode) out.push({ module, name: nameNode.text, alias: alias ?? nameNode.text, line });
  }
  return out;
}

const DESCEND = new Set([
  'block',
  'module',
  'ERROR',
  'expression_statement',
  'with_item',
  'parenthesized_expression',
  'list_comprehension',
  'set_comprehension',
  'dictionary_comprehension',
  'generator_expression',
]);

function descends(type: string): boolean {
  return DESCEND.has(type) || type.endsWith('_statement') || type.endsWith('_clause');
}

/** The graph of the parsed prefix at `cursor`; its seeds are the caller's (they do not change the graph). */
export function buildPythonFlow(root: Node, cursor: number): FileFlow {
  const flow = emptyFlow();
  const contains = (n: Node): boolean => n.startIndex <= cursor && n.endIndex >= cursor;

  const bind = (target: Node, edge: EdgeKind, values: Chain[], types: Chain[], receiver: string | undefined, visible: boolean): void => {
    const name = targetName(target);
    if (!name) return;
    // `self.x = ...` in any method of the cursor's class is a field; other locals only in visible scopes.
    if (receiver && name.startsWith(`${receiver}.`)) {
      addBinding(flow, { name: `self.${name.slice(receiver.length + 1)}`, line: target.startPosition.row, edge: 'field', values, types });
    } else if (visible) {
      addBinding(flow, { name, line: target.startPosition.row, edge, values, types });
    }
  };

  const walk = (node: Node, visible: boolean, receiver: string | undefined, inCursorClass: boolean, depth = 0): void => {
    // Nesting past any real code's is not walked: the stack stays bounded by design.
    if (depth > MAX_NESTING_DEPTH) return;
    for (const child of node.namedChildren) {
      if (!child) continue;
      switch (child.type) {
        case 'class_definition': {
          const name = child.childForFieldName('name')?.text;
          const bases = child.childForFieldName('superclasses');
          const cls = { name: name ?? '', bases: bases ? valueChains(bases) : [] };
          if (name && visible) flow.classes.set(name, cls);
          const here = contains(child);
          if (here) flow.enclosingClass = cls;
          const body = child.childForFieldName('body');
          if (body) walk(body, false, undefined, here, depth + 1);
          break;
        }
        case 'function_definition': {
          const name = child.childForFieldName('name')?.text;
          const returns = hint(child.childForFieldName('return_type'));
          if (name && visible) flow.functions.set(name, { name, returns });
          const here = contains(child);
          const params = child.childForFieldName('parameters');
          const first = params?.namedChildren.find((p) => p !== null);
          const self =
            inCursorClass && first ? (first.type === 'identifier' ? first.text : first.childForFieldName('name')?.text) : undefined;
          if (here && params) {
            for (const p of params.namedChildren) {
              if (!p) continue;
              const nameNode =
                p.type === 'identifier'
                  ? p
                  : (p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'identifier') ?? null);
              if (!nameNode) continue;
              const types = hint(p.childForFieldName('type'));
              const values = valueChains(p.childForFieldName('value'));
              addBinding(flow, { name: nameNode.text, line: nameNode.startPosition.row, edge: 'param', values, types });
            }
          }
          const body = child.childForFieldName('body');
          if (body) walk(body, here, self, false, depth + 1);
          break;
        }
        case 'decorated_definition':
          walk(child, visible, receiver, inCursorClass, depth + 1);
          break;
        case 'assignment': {
          const right = child.childForFieldName('right');
          const values = right?.type === 'assignment' ? [] : valueChains(right);
          const types = hint(child.childForFieldName('type'));
          for (const t of targetNames(child.childForFieldName('left'))) bind(t, 'assign', values, types, receiver, visible);
          if (right?.type === 'assignment') walk(child, visible, receiver, inCursorClass, depth + 1);
          break;
        }
        case 'for_statement':
        case 'for_in_clause': {
          const values = valueChains(child.childForFieldName('right'));
          for (const t of targetNames(child.childForFieldName('left'))) bind(t, 'forin', values, [], receiver, visible);
          walk(child, visible, receiver, inCursorClass, depth + 1);
          break;
        }
        case 'as_pattern': {
          const value = child.namedChild(0);
          const alias = child.childForFieldName('alias') ?? child.namedChildren.find((c) => c?.type === 'as_pattern_target') ?? null;
          const values = valueChains(value);
          for (const t of targetNames(alias?.type === 'as_pattern_target' ? alias.namedChild(0) : alias))
            bind(t, 'as', values, [], receiver, visible);
          break;
        }
        case 'named_expression': {
          const name = child.childForFieldName('name');
          if (name) bind(name, 'assign', valueChains(child.childForFieldName('value')), [], receiver, visible);
          walk(child, visible, receiver, inCursorClass, depth + 1);
          break;
        }
        case 'import_statement':
        case 'import_from_statement':
          // Module-level imports come from the extractor; these are imports inside functions.
          if (visible && node.type !== 'module') flow.localImports.push(...pythonImports(child));
          break;
        default:
          // Bindings live in statements (and comprehensions, walrus): skip data literals and calls.
          if (descends(child.type)) walk(child, visible, receiver, inCursorClass, depth + 1);
      }
    }
  };
  walk(root, true, undefined, false);
  for (const list of flow.bindings.values()) list.sort((a, b) => a.line - b.line);
  return flow;
}

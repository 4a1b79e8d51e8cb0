// Cross-file uses in a Python file: names bound by imports (module-level and a function's own),
// followed through re-exports and attribute chains; function spans for body cases.
import type { Node } from 'web-tree-sitter';
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { KbImport } from '../engine/kb/types';
import type { CrossfileSymbols, PyResolved } from './crossfileSymbols';
import { classDef, itemDef, rowsOf, sameNode, Uses, type FileAnalysis, type FunctionSpan } from './crossfileUses';

const PY_PROPERTY_DECORATOR = /^@(?:[\w.]*\.)?(?:property|cached_property|setter|getter|deleter)\b/;
const PY_PARAMETER_PARENTS = new Set([
  'parameters',
  'lambda_parameters',
  'list_splat_pattern',
  'dictionary_splat_pattern',
  'typed_parameter',
]);

export function analyzePython(symbols: CrossfileSymbols, kb: KnowledgeBase, path: string, root: Node): FileAnalysis {
  const uses = new Uses(path);
  const excludedRows = new Set<number>();
  const functions: FunctionSpan[] = [];
  const imports = kb.file(path)?.imports ?? [];
  const bindings = new Map<string, PyResolved | undefined>();
  const binding = (name: string): PyResolved | undefined => {
    if (bindings.has(name)) return bindings.get(name);
    let result: PyResolved | undefined;
    const imp = imports.find((i) => i.alias === name && !i.wildcard);
    if (imp) result = symbols.pyBinding(imp, path);
    else {
      for (const w of imports) {
        if (!w.wildcard) continue;
        const key = symbols.pyModuleKey(w.module, path);
        const r = key !== undefined ? symbols.pyResolveIn(key, name) : undefined;
        if (r && r.kind !== 'module') {
          result = r;
          break;
        }
      }
    }
    bindings.set(name, result);
    return result;
  };

  // Imports inside a function bind their names in that function only (the KB keeps module-level ones).
  const scopes: Map<string, KbImport>[] = [];
  const scopedBinding = (name: string): PyResolved | undefined => {
    for (let i = scopes.length - 1; i >= 0; i--) {
      const imp = scopes[i]!.get(name);
      if (imp) return symbols.pyBinding(imp, path);
    }
    return binding(name);
  };

  const useChain = (names: string[], rows: number[]): void => {
    let r = scopedBinding(names[0]!);
    let i = 1;
    while (r?.kind === 'module' && i < names.length) {
      r = symbols.pyResolveIn(r.key, names[i]!);
      i++;
    }
    if (!r || r.kind === 'module') return;
    const row = rows[i - 1]!;
    if (r.kind === 'item') {
      uses.add(row, itemDef(r.item));
      return;
    }
    uses.add(row, classDef(r.cls));
    if (i < names.length) for (const m of symbols.members(r.cls, names[i]!)) uses.add(rows[i]!, itemDef(m));
  };

  const visit = (node: Node, classes: string[], inFunction: boolean): void => {
    switch (node.type) {
      case 'import_statement':
      case 'import_from_statement':
      case 'future_import_statement':
        rowsOf(node, excludedRows);
        return;
      case 'comment':
        return;
      case 'string':
        // Only an f-string's interpolations hold code.
        for (const c of node.namedChildren) if (c?.type === 'interpolation') visit(c, classes, inFunction);
        return;
      case 'class_definition': {
        const body = node.childForFieldName('body');
        const name = node.childForFieldName('name')?.text ?? '';
        markHeader(node, body, excludedRows);
        for (const c of node.namedChildren)
          if (c && !sameNode(node.childForFieldName('name'), c)) visit(c, inFunction ? classes : [...classes, name], inFunction);
        return;
      }
      case 'function_definition': {
        const body = node.childForFieldName('body');
        const nameNode = node.childForFieldName('name');
        const headerEnd = markHeader(node, body, excludedRows);
        if (!inFunction && nameNode && body) functions.push(pythonSpan(node, nameNode.text, classes, headerEnd, body));
        const local = new Map<string, KbImport>();
        if (body) for (const imp of pythonLocalImports(body)) if (imp.alias !== undefined) local.set(imp.alias, imp);
        scopes.push(local);
        for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, classes, true);
        scopes.pop();
        return;
      }
      case 'identifier': {
        const parent = node.parent;
        if (!parent) return;
        if (PY_PARAMETER_PARENTS.has(parent.type)) return;
        if (
          (parent.type === 'keyword_argument' || parent.type === 'default_parameter' || parent.type === 'typed_default_parameter') &&
          sameNode(parent.childForFieldName('name'), node)
        )
          return;
        if (parent.type === 'attribute' && sameNode(parent.childForFieldName('attribute'), node)) return;
        const names = [node.text];
        const rows = [node.startPosition.row];
        let cur = node;
        for (;;) {
          const p = cur.parent;
          if (p?.type !== 'attribute' || !sameNode(p.childForFieldName('object'), cur)) break;
          const attr = p.childForFieldName('attribute');
          if (!attr) break;
          names.push(attr.text);
          rows.push(attr.startPosition.row);
          cur = p;
        }
        useChain(names, rows);
        return;
      }
      default:
        for (const c of node.namedChildren) if (c) visit(c, classes, inFunction);
    }
  };
  visit(root, [], false);
  return { path, lang: 'python', defsByRow: uses.defsByRow, excludedRows, functions };
}

/** Import bindings anywhere in a function body, nested functions and classes excluded (they have their own scope). */
function pythonLocalImports(body: Node): KbImport[] {
  const out: KbImport[] = [];
  const walk = (node: Node): void => {
    for (const c of node.namedChildren) {
      if (!c || c.type === 'function_definition' || c.type === 'class_definition') continue;
      if (c.type === 'import_statement' || c.type === 'import_from_statement') out.push(...pythonImportBindings(c));
      else walk(c);
    }
  };
  walk(body);
  return out;
}

/** The bindings of one import statement, as the knowledge base's Python extractor records them. */
function pythonImportBindings(stmt: Node): KbImport[] {
  const line = stmt.startPosition.row;
  const out: KbImport[] = [];
  if (stmt.type === 'import_statement') {
    for (const n of stmt.childrenForFieldName('name')) {
      if (n?.type === 'aliased_import') {
        const module = n.childForFieldName('name');
        const alias = n.childForFieldName('alias');
        if (module && alias) out.push({ module: module.text, alias: alias.text, line });
      } else if (n) {
        out.push({ module: n.text, alias: n.text.split('.', 1)[0] ?? n.text, line });
      }
    }
    return out;
  }
  const module = stmt.childForFieldName('module_name')?.text ?? '';
  for (const c of stmt.childrenForFieldName('name')) {
    if (c?.type === 'aliased_import') {
      const name = c.childForFieldName('name');
      const alias = c.childForFieldName('alias');
      if (name) out.push({ module, name: name.text, alias: alias ? alias.text : name.text, line });
    } else if (c?.type === 'dotted_name') {
      out.push({ module, name: c.text, alias: c.text, line });
    }
  }
  return out;
}

/** Exclude a definition's header rows; returns the row the header ends on. */
function markHeader(node: Node, body: Node | null, excludedRows: Set<number>): number {
  const start = node.startPosition.row;
  let end = body ? Math.max(start, body.startPosition.row - 1) : start;
  // Python: the header ends at the `:`; a body on the same line makes a one-line definition.
  for (const c of node.children) {
    if (c?.type === ':') end = c.endPosition.row;
  }
  for (let r = start; r <= end; r++) excludedRows.add(r);
  return end;
}

function pythonSpan(def: Node, name: string, classes: string[], headerEndRow: number, body: Node): FunctionSpan {
  const span: FunctionSpan = { name, headerEndRow, bodyFirstRow: headerEndRow + 1, bodyLastRow: def.endPosition.row };
  if (classes.length > 0) span.className = classes.join('.');
  if (body.startPosition.row <= headerEndRow) span.excluded = 'one-line body';
  else if (name === '__init__' || name === '__new__') span.excluded = 'constructor';
  else {
    const decorated = def.parent?.type === 'decorated_definition' ? def.parent : undefined;
    for (const d of decorated?.namedChildren ?? []) {
      if (d?.type === 'decorator' && PY_PROPERTY_DECORATOR.test(d.text)) span.excluded = 'property accessor';
    }
  }
  return span;
}

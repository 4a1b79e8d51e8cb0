// Cross-file uses in a Java file: repository types (imported, same package, wildcard), static
// imports and members, member calls typed by their receiver's declaration (see crossfile.ts);
// method spans for body cases.
import type { Node } from 'web-tree-sitter';
import type { KnowledgeBase } from '../engine/kb/KnowledgeBase';
import type { KbClass, KbItem } from '../engine/kb/types';
import { javaFieldType, javaReturnType } from '../engine/symbols/declaredTypes';
import type { CrossfileSymbols } from './crossfileSymbols';
import { classDef, isTestPath, itemDef, rowsOf, sameNode, Uses, type FileAnalysis, type FunctionSpan } from './crossfileUses';

/**
 * Methods of Object and of the JDK interfaces repository classes commonly implement (Iterator,
 * Collection, Map, Appendable, streams, functional interfaces): a call to one on a receiver of
 * unknown type says nothing about the repository.
 */
const OBJECT_METHODS = new Set(
  (
    'toString equals hashCode getClass clone finalize notify notifyAll wait compareTo close run call get apply accept test ' +
    'hasNext next remove iterator size isEmpty contains add addAll clear put putAll containsKey containsValue keySet ' +
    'values entrySet getKey getValue ' +
    'append length charAt subSequence read write flush stream forEach map filter of valueOf name ordinal'
  ).split(' '),
);
/** A member call `x.m(...)` counts only when `m` names methods of at most this many repository classes. */
const MAX_MEMBER_CANDIDATE_CLASSES = 3;

const JAVA_TYPES = new Set([
  'class_declaration',
  'interface_declaration',
  'enum_declaration',
  'record_declaration',
  'annotation_type_declaration',
]);
const JAVA_METHODS = new Set(['method_declaration', 'constructor_declaration', 'compact_constructor_declaration']);
const JAVA_ACCESSOR = /^(?:get|set|is)[A-Z0-9_]/;

const JAVA_DECLARATION_NAME_PARENTS = new Set([
  'variable_declarator',
  'formal_parameter',
  'spread_parameter',
  'catch_formal_parameter',
  'enum_constant',
  'labeled_statement',
  'inferred_parameters',
  'resource',
]);

export function analyzeJava(symbols: CrossfileSymbols, kb: KnowledgeBase, path: string, root: Node, text: string): FileAnalysis {
  const uses = new Uses(path);
  const excludedRows = new Set<number>();
  const functions: FunctionSpan[] = [];
  const x = kb.file(path);
  const pkg = x?.packageName ?? '';
  const imports = x?.imports ?? [];
  const ownClassNames = new Set((x?.classes ?? []).map((c) => c.name));
  const ownMemberNames = new Set((x?.items ?? []).map((i) => i.name));
  const typeCache = new Map<string, KbClass | undefined>();

  const resolveType = (name: string): KbClass | undefined => {
    if (typeCache.has(name)) return typeCache.get(name);
    let cls: KbClass | undefined;
    if (!ownClassNames.has(name)) {
      const explicit = imports.find((i) => !i.isStatic && !i.wildcard && i.name === name);
      if (explicit) cls = symbols.javaClass(explicit.module ? `${explicit.module}.${name}` : name);
      else {
        cls = symbols.javaTopLevel(pkg, name);
        for (const w of imports) {
          if (cls) break;
          if (w.wildcard && !w.isStatic) cls = symbols.javaTopLevel(w.module, name);
        }
      }
    }
    // Main code never compiles against test sources (a test helper named like a JDK class).
    const result = cls && cls.path !== path && !(isTestPath(cls.path) && !isTestPath(path)) ? cls : undefined;
    typeCache.set(name, result);
    return result;
  };

  /** `Outer.Inner` resolves `Outer` in this file, then its nested class. */
  const resolveTypePath = (dotted: string): KbClass | undefined => {
    const [first, ...rest] = dotted.split('.');
    const outer = first !== undefined ? resolveType(first) : undefined;
    if (!outer || rest.length === 0) return outer;
    const outerPkg = kb.file(outer.path)?.packageName;
    return symbols.javaClass(`${outerPkg ? `${outerPkg}.` : ''}${outer.qualifiedName}.${rest.join('.')}`);
  };

  const staticMember = (name: string): KbItem[] => {
    for (const i of imports) {
      if (i.isStatic && !i.wildcard && i.name === name) {
        const cls = symbols.javaClass(i.module);
        return cls ? symbols.members(cls, name) : [];
      }
    }
    for (const i of imports) {
      if (!i.isStatic || !i.wildcard) continue;
      const cls = symbols.javaClass(i.module);
      const found = cls ? symbols.members(cls, name) : [];
      if (found.length > 0) return found;
    }
    return [];
  };

  const declared = javaDeclarations(root);
  const ownClass = (classes: string[]): KbClass | undefined => (x?.classes ?? []).find((c) => c.qualifiedName === classes.join('.'));

  /** The repository class a declared type text names, seen from `from` (undefined: outside the repository). */
  const typeClass = (typeText: string, from: string): KbClass | undefined => {
    const simple = typeText
      .replace(/@\w+(\([^)]*\))?/g, ' ')
      .replace(/<[\s\S]*$/, '')
      .replace(/\[\s*\]/g, '')
      .replace(/\s+/g, '');
    if (simple === '' || simple === 'var') return undefined;
    return from === path ? (resolveTypePath(simple) ?? ownTypePath(simple)) : symbols.javaTypeIn(from, simple);
  };
  /** `Own` or `Own.Inner`, classes of this file (a receiver typed by one, for inherited members). */
  const ownTypePath = (dotted: string): KbClass | undefined => symbols.javaTypeIn(path, dotted);

  /**
   * What a call's receiver is: a repository class (its members, inherited ones included), a type
   * outside the repository or a type variable (`outside`: no definition), or unknown (undefined).
   */
  const receiverType = (node: Node | null, classes: string[], depth = 0): Receiver => {
    if (!node || depth > 6) return undefined;
    switch (node.type) {
      case 'this':
      case 'super': {
        const own = ownClass(classes);
        if (!own) return undefined;
        if (node.type === 'this') return { cls: own };
        const bases = symbols.javaBases(own);
        return bases[0] ? { cls: bases[0] } : own.bases.length > 0 ? 'outside' : undefined;
      }
      case 'identifier': {
        const type = declared(node.text, node);
        if (type === null) return undefined;
        if (type !== undefined) return typeOrOutside(typeClass(type, path), type);
        if (/^[A-Z]/.test(node.text)) return typeOrOutside(resolveType(node.text) ?? ownTypePath(node.text), node.text);
        // A field inherited from a repository superclass.
        const own = ownClass(classes);
        const field = own ? symbols.javaMembersDeep(own, node.text, 'classVariable').find((m) => m.kind === 'classVariable') : undefined;
        return field ? typeOfMember(field) : undefined;
      }
      case 'field_access': {
        const object = node.childForFieldName('object');
        const field = node.childForFieldName('field');
        if (!field) return undefined;
        if (object?.type === 'this') {
          const type = declared(field.text, node, true);
          if (type === null) return undefined;
          if (type !== undefined) return typeOrOutside(typeClass(type, path), type);
        }
        const owner = receiverType(object, classes, depth + 1);
        if (owner === undefined || owner === 'outside') return owner;
        const member = symbols.javaMembersDeep(owner.cls, field.text, 'classVariable').find((m) => m.kind === 'classVariable');
        if (member) return typeOfMember(member);
        const nested = symbols.javaTypeIn(owner.cls.path, `${owner.cls.qualifiedName}.${field.text}`);
        return nested ? { cls: nested } : undefined;
      }
      case 'method_invocation': {
        const object = node.childForFieldName('object');
        const name = node.childForFieldName('name')?.text;
        if (!name) return undefined;
        const owner = object ? receiverType(object, classes, depth + 1) : ownClass(classes) ? { cls: ownClass(classes)! } : undefined;
        if (owner === undefined || owner === 'outside') return owner;
        const methods = symbols.javaMembersDeep(owner.cls, name, 'classFunction').filter((m) => m.kind === 'classFunction');
        const types = new Set(methods.map((m) => javaReturnType(m)).filter((t): t is string => t !== undefined));
        // Overloads returning different types, or none known: unknown.
        if (types.size !== 1) return undefined;
        const type = [...types][0]!;
        return typeOrOutside(typeClass(type, methods[0]!.path), type);
      }
      case 'object_creation_expression': {
        const type = node.childForFieldName('type');
        return type ? typeOrOutside(typeClass(type.text, path), type.text) : undefined;
      }
      case 'cast_expression': {
        const type = node.childForFieldName('type');
        return type ? typeOrOutside(typeClass(type.text, path), type.text) : undefined;
      }
      case 'parenthesized_expression':
        return receiverType(node.namedChild(0), classes, depth + 1);
      case 'string_literal':
      case 'array_creation_expression':
      case 'class_literal':
        return 'outside';
      default:
        return undefined;
    }
  };
  const typeOfMember = (m: KbItem): Receiver => {
    const type = javaFieldType(m);
    return type === undefined ? undefined : typeOrOutside(typeClass(type, m.path), type);
  };

  const memberCall = (row: number, name: string, receiver: Node | null, classes: string[]): void => {
    // A receiver whose type is known decides: its class's members (inherited ones included), or nothing outside the repository.
    const type = receiverType(receiver, classes);
    if (type === 'outside') return;
    if (type) {
      for (const m of symbols.javaMembersDeep(type.cls, name, 'classFunction')) uses.add(row, itemDef(m));
      return;
    }
    // `Type.method(...)` on a type outside the repository (`Objects.requireNonNull`).
    if (receiver?.type === 'identifier' && /^[A-Z]/.test(receiver.text)) return;
    if (OBJECT_METHODS.has(name) || ownMemberNames.has(name)) return;
    const candidates = symbols.javaMethodsNamed(name).filter((m) => m.path !== path && !isTestPath(m.path));
    const classes2 = new Set(candidates.map((m) => `${m.path}\0${m.className ?? ''}`));
    if (classes2.size === 0 || classes2.size > MAX_MEMBER_CANDIDATE_CLASSES) return;
    for (const m of candidates) uses.add(row, itemDef(m));
  };

  const visit = (node: Node, classes: string[], inMethod: boolean): void => {
    const t = node.type;
    if (t === 'import_declaration' || t === 'package_declaration') {
      rowsOf(node, excludedRows);
      return;
    }
    if (t === 'line_comment' || t === 'block_comment' || t === 'string_literal' || t === 'character_literal') return;
    if (JAVA_TYPES.has(t)) {
      const body = node.childForFieldName('body');
      const nameNode = node.childForFieldName('name');
      markJavaHeader(node, body, excludedRows);
      const inner = inMethod ? classes : [...classes, nameNode?.text ?? ''];
      for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, inner, inMethod);
      return;
    }
    if (JAVA_METHODS.has(t)) {
      const body = node.childForFieldName('body');
      const nameNode = node.childForFieldName('name');
      markJavaHeader(node, body, excludedRows);
      if (!inMethod && body && nameNode) {
        const span = javaSpan(t, nameNode.text, classes, body, text);
        if (span) functions.push(span);
      }
      for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, classes, true);
      return;
    }
    switch (t) {
      case 'type_identifier': {
        // In `Outer.Inner` only the outer name is looked up.
        const parent = node.parent;
        if (parent?.type === 'scoped_type_identifier' && !sameNode(parent.namedChildren[0], node)) return;
        const cls = resolveType(node.text);
        if (cls) uses.add(node.startPosition.row, classDef(cls));
        return;
      }
      case 'method_invocation': {
        const object = node.childForFieldName('object');
        const nameNode = node.childForFieldName('name');
        if (nameNode) {
          const name = nameNode.text;
          const row = nameNode.startPosition.row;
          if (!object) {
            const statics = staticMember(name);
            for (const m of statics) uses.add(row, itemDef(m));
            // A method inherited from a repository superclass, called without a receiver.
            const own = ownClass(classes);
            if (statics.length === 0 && own && !ownMemberNames.has(name))
              for (const m of symbols.javaMembersDeep(own, name, 'classFunction')) uses.add(row, itemDef(m));
          } else {
            const cls = object.type === 'identifier' && declared(object.text, object) === undefined ? resolveType(object.text) : undefined;
            if (cls) for (const m of symbols.javaMembersDeep(cls, name, 'classFunction')) uses.add(row, itemDef(m));
            else memberCall(row, name, object, classes);
          }
        }
        for (const c of node.namedChildren) if (c && !sameNode(nameNode, c)) visit(c, classes, inMethod);
        return;
      }
      case 'field_access': {
        const object = node.childForFieldName('object');
        const field = node.childForFieldName('field');
        if (object && field && object.type !== 'this') {
          // `Type.FIELD`, or a field of a receiver whose type is a repository class.
          const cls = object.type === 'identifier' && declared(object.text, object) === undefined ? resolveType(object.text) : undefined;
          const owner = cls ? { cls } : receiverType(object, classes);
          if (owner && owner !== 'outside')
            for (const m of symbols.javaMembersDeep(owner.cls, field.text, 'classVariable').filter((m) => m.kind === 'classVariable'))
              uses.add(field.startPosition.row, itemDef(m));
        }
        if (object) visit(object, classes, inMethod);
        return;
      }
      case 'identifier': {
        const parent = node.parent;
        if (parent && JAVA_DECLARATION_NAME_PARENTS.has(parent.type) && sameNode(parent.childForFieldName('name'), node)) return;
        if (parent?.type === 'inferred_parameters' || parent?.type === 'lambda_expression') return;
        const row = node.startPosition.row;
        const statics = staticMember(node.text);
        if (statics.length > 0) {
          for (const m of statics) uses.add(row, itemDef(m));
          return;
        }
        if (/^[A-Z]/.test(node.text)) {
          const cls = resolveType(node.text);
          if (cls) uses.add(row, classDef(cls));
        }
        return;
      }
      default:
        for (const c of node.namedChildren) if (c) visit(c, classes, inMethod);
    }
  };
  visit(root, [], false);
  return { path, lang: 'java', defsByRow: uses.defsByRow, excludedRows, functions };
}

const JAVA_TYPED_DECLARATIONS = new Set([
  'formal_parameter',
  'spread_parameter',
  'catch_formal_parameter',
  'resource',
  'enhanced_for_statement',
]);

/** A call receiver's type: a repository class, `outside` (a JDK or library type, a type variable), or unknown (undefined). */
type Receiver = { cls: KbClass } | 'outside' | undefined;

function typeOrOutside(cls: KbClass | undefined, typeText: string): Receiver {
  if (cls) return { cls };
  // A type variable (`T`, `E2`) may stand for a repository class: unknown, not outside.
  return /^[A-Z][A-Z0-9]?$/.test(typeText.replace(/<[\s\S]*$/, '').trim()) ? undefined : 'outside';
}

interface JavaDeclaration {
  type: string | null;
  /** Offsets of the scope the name is visible in, and where the declaration starts. */
  scopeStart: number;
  scopeEnd: number;
  at: number;
  field: boolean;
}

/**
 * The declared type of a variable name at a use: the innermost declaration (local, parameter,
 * enhanced-for or resource variable, catch parameter, field) whose scope holds the use and, for a
 * local, that starts before it. Returns the type's text, null for `var` or an unreadable type,
 * undefined when the name is not declared in the file (a class name, an inherited field).
 * `fieldsOnly`: `this.x`.
 */
function javaDeclarations(root: Node): (name: string, use: Node, fieldsOnly?: boolean) => string | null | undefined {
  const byName = new Map<string, JavaDeclaration[]>();
  const record = (name: string, typeNode: Node | null, scope: Node | null, at: number, field: boolean): void => {
    if (!scope) return;
    const text = typeNode?.text.replace(/\s+/g, ' ').trim();
    const decl: JavaDeclaration = {
      type: text && text !== 'var' ? text : null,
      scopeStart: scope.startIndex,
      scopeEnd: scope.endIndex,
      at: field ? scope.startIndex : at,
      field,
    };
    const list = byName.get(name);
    if (list) list.push(decl);
    else byName.set(name, [decl]);
  };
  const visit = (node: Node): void => {
    if (node.type === 'variable_declarator') {
      const parent = node.parent;
      const name = node.childForFieldName('name');
      if (
        name &&
        parent &&
        (parent.type === 'local_variable_declaration' || parent.type === 'field_declaration' || parent.type === 'constant_declaration')
      ) {
        const field = parent.type !== 'local_variable_declaration';
        record(name.text, parent.childForFieldName('type'), parent.parent, node.startIndex, field);
      }
    } else if (JAVA_TYPED_DECLARATIONS.has(node.type)) {
      const name = node.childForFieldName('name') ?? node.namedChildren.find((c) => c?.type === 'identifier') ?? null;
      const type = node.childForFieldName('type') ?? node.namedChildren.find((c) => c && /type/.test(c.type)) ?? null;
      // Parameters are visible in their method or lambda; a catch parameter in its clause; a resource in its try.
      let scope: Node | null = node.type === 'enhanced_for_statement' ? node : node.parent;
      while (
        scope &&
        (scope.type === 'formal_parameters' || scope.type === 'resource_specification' || scope.type === 'catch_formal_parameter')
      )
        scope = scope.parent;
      if (name) record(name.text, type, scope, node.startIndex, false);
    } else if (node.type === 'record_declaration') {
      for (const p of node.childForFieldName('parameters')?.namedChildren ?? []) {
        const name = p?.childForFieldName('name');
        if (p && name) record(name.text, p.childForFieldName('type'), node, node.startIndex, true);
      }
    }
    for (const c of node.namedChildren) if (c) visit(c);
  };
  visit(root);
  return (name, use, fieldsOnly = false) => {
    let best: JavaDeclaration | undefined;
    for (const d of byName.get(name) ?? []) {
      if (fieldsOnly && !d.field) continue;
      if (use.startIndex < d.scopeStart || use.startIndex > d.scopeEnd || use.startIndex < d.at) continue;
      if (!best || d.scopeEnd - d.scopeStart < best.scopeEnd - best.scopeStart) best = d;
    }
    return best === undefined ? undefined : best.type;
  };
}

/** Java headers run from the declaration (annotations included) to the row of the body's `{`. */
function markJavaHeader(node: Node, body: Node | null, excludedRows: Set<number>): void {
  const end = body ? body.startPosition.row : node.endPosition.row;
  for (let r = node.startPosition.row; r <= end; r++) excludedRows.add(r);
}

function javaSpan(type: string, name: string, classes: string[], body: Node, text: string): FunctionSpan | undefined {
  const openRow = body.startPosition.row;
  const closeRow = body.endPosition.row;
  const span: FunctionSpan = { name, headerEndRow: openRow, bodyFirstRow: openRow + 1, bodyLastRow: closeRow - 1 };
  if (classes.length > 0) span.className = classes.join('.');
  if (type !== 'method_declaration') span.excluded = 'constructor';
  else if (JAVA_ACCESSOR.test(name)) span.excluded = 'getter or setter';
  else if (closeRow <= openRow + 1) span.excluded = 'one-line body';
  else {
    // The `{` must end its line and the `}` must stand alone, so the body is whole lines.
    const afterOpen = text.slice(
      body.startIndex + 1,
      text.indexOf('\n', body.startIndex) < 0 ? text.length : text.indexOf('\n', body.startIndex),
    );
    const lineStart = text.lastIndexOf('\n', body.endIndex - 1) + 1;
    const beforeClose = text.slice(lineStart, body.endIndex - 1);
    if (afterOpen.trim() !== '' && !afterOpen.trim().startsWith('//')) span.excluded = 'code after the opening brace';
    else if (beforeClose.trim() !== '') span.excluded = 'code before the closing brace';
  }
  return span;
}

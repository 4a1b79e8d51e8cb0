// Java knowledge-base items (CodeRAG section 2.1 carried over to Java): methods and constructors
// as classFunction, fields (each declarator; enum and interface constants; record components) as
// classVariable. Java has no module-level functions or variables, so no `function` or
// `globalVariable` items. Classes, interfaces, enums, records (nested too) and imports as structure.
import type { Node, Tree } from 'web-tree-sitter';
import type { FileExtraction, KbClass, KbImport, KbItem } from '../types';
import { IdAllocator, TooManyItemsError, capSignature, cleanDoc, dedentLines, lineIndent, makeItem, rangeOf, renderStub } from './common';

interface TypeScope {
  qualifiedName: string;
  /** `header {` lines of this type and its enclosing types, outermost first. */
  headers: string[];
  /** Matching `}` lines, innermost first. */
  closers: string[];
  baseIndent: string;
  /** Members after an enum's constants need a `;` line before them to parse on their own. */
  isEnum: boolean;
}

const TYPE_KINDS: Record<string, KbClass['kind']> = {
  class_declaration: 'class',
  interface_declaration: 'interface',
  enum_declaration: 'enum',
  record_declaration: 'record',
  annotation_type_declaration: 'interface',
};

const METHOD_TYPES = new Set([
  'method_declaration',
  'constructor_declaration',
  'compact_constructor_declaration',
  'annotation_type_element_declaration',
]);
const ANNOTATION_TYPES = new Set(['annotation', 'marker_annotation', 'line_comment', 'block_comment']);

interface RecoveredType {
  kind: KbClass['kind'];
  name: Node;
  /** Where the body's `{` is. */
  bodyStart: number;
}

/**
 * A type declaration the parser turned into an ERROR node (a member mid-edit, `this.`, can make it
 * give up on the whole class): the node's own tokens still read `class Name ... {`, and its named
 * children are the members. Undefined when the node is not one.
 */
function recoveredType(node: Node): RecoveredType | undefined {
  const children = node.children.filter((c): c is Node => c !== null);
  for (let i = 0; i < children.length; i++) {
    const kind = TYPE_KINDS[`${children[i]!.type}_declaration`];
    const name = children[i + 1];
    if (!kind || name?.type !== 'identifier') continue;
    const brace = children.slice(i + 2).find((c) => c.type === '{');
    return brace ? { kind, name, bodyStart: brace.startIndex } : undefined;
  }
  return undefined;
}

/** `maxItems`: more items than this throw TooManyItemsError (the walk stops there). */
export function extractJava(tree: Tree, path: string, source: string, maxItems = Infinity): FileExtraction {
  const x = new JavaExtractor(path, source, maxItems);
  x.walkProgram(tree.rootNode);
  const out: FileExtraction = {
    path,
    lang: 'java',
    items: x.items,
    classes: x.classes,
    imports: x.imports,
    hasSyntaxErrors: tree.rootNode.hasError,
  };
  if (x.packageName !== undefined) out.packageName = x.packageName;
  return out;
}

class JavaExtractor {
  readonly items: KbItem[] = [];
  readonly classes: KbClass[] = [];
  readonly imports: KbImport[] = [];
  packageName: string | undefined;
  private readonly ids: IdAllocator;
  private readonly pathLine: string;

  constructor(
    private readonly path: string,
    private readonly source: string,
    private readonly maxItems: number,
  ) {
    this.ids = new IdAllocator(path);
    this.pathLine = `// ${path}`;
  }

  private addItem(item: KbItem): void {
    if (this.items.length >= this.maxItems) throw new TooManyItemsError(this.maxItems);
    this.items.push(item);
  }

  private slice(node: Node): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  walkProgram(root: Node): void {
    for (const n of root.namedChildren) {
      if (!n) continue;
      if (n.type === 'package_declaration') {
        const name = n.namedChildren.find((c) => c?.type === 'scoped_identifier' || c?.type === 'identifier');
        if (name) this.packageName = this.slice(name);
      } else if (n.type === 'import_declaration') {
        this.addImport(n);
      } else if (TYPE_KINDS[n.type]) {
        this.addType(n, undefined);
      } else if (n.type === 'ERROR') {
        const recovered = recoveredType(n);
        if (recovered) this.addType(n, undefined, recovered);
        else this.walkProgram(n);
      }
    }
  }

  private addImport(n: Node): void {
    let isStatic = false;
    let wildcard = false;
    let target: Node | undefined;
    for (const c of n.children) {
      if (!c) continue;
      if (c.type === 'static') isStatic = true;
      else if (c.type === 'asterisk') wildcard = true;
      else if (c.type === 'scoped_identifier' || c.type === 'identifier') target = c;
    }
    if (!target) return;
    const full = this.slice(target).replace(/\s+/g, '');
    const imp: KbImport = { module: full, line: n.startPosition.row };
    if (!wildcard) {
      const dot = full.lastIndexOf('.');
      imp.module = dot >= 0 ? full.slice(0, dot) : '';
      imp.name = full.slice(dot + 1);
      imp.alias = imp.name;
    } else {
      imp.wildcard = true;
    }
    if (isStatic) imp.isStatic = true;
    this.imports.push(imp);
  }

  /** Where the declaration starts once leading annotations (kept in `modifiers`) are skipped. */
  private startAfterAnnotations(node: Node): number {
    const mods = node.firstChild;
    if (mods?.type !== 'modifiers') return node.startIndex;
    for (const c of mods.children) {
      if (c && !ANNOTATION_TYPES.has(c.type)) return c.startIndex;
    }
    return mods.nextSibling?.startIndex ?? node.startIndex;
  }

  /** The Javadoc comment right before a declaration, if any. */
  private javadocNode(node: Node): Node | undefined {
    const prev = node.previousSibling;
    if (prev?.type === 'block_comment' && this.source.startsWith('/**', prev.startIndex) && prev.endIndex - prev.startIndex > 4)
      return prev;
    return undefined;
  }

  private javadoc(node: Node): string {
    const doc = this.javadocNode(node);
    if (!doc) return '';
    const inner = this.source.slice(doc.startIndex + 3, doc.endIndex - 2);
    const lines = inner.split('\n').map((l) => l.replace(/^\s*\*(?!\/) ?/, ''));
    return cleanDoc(lines.join('\n'));
  }

  /** `recovered`: the type is an ERROR node the parser made of a declaration it could not close (its members are the node's children). */
  private addType(node: Node, parent: TypeScope | undefined, recovered?: RecoveredType): void {
    const kind = recovered?.kind ?? TYPE_KINDS[node.type];
    const nameNode = recovered?.name ?? node.childForFieldName('name');
    if (!kind || !nameNode || nameNode.isMissing) return;
    const name = this.slice(nameNode);
    const qualifiedName = parent ? `${parent.qualifiedName}.${name}` : name;
    const body = recovered ? node : node.childForFieldName('body');
    const header = this.source
      .slice(this.startAfterAnnotations(node), recovered ? recovered.bodyStart : body ? body.startIndex : node.endIndex)
      .trim();
    const bases: string[] = [];
    for (const c of node.namedChildren) {
      if (!c) continue;
      if (c.type === 'superclass') {
        for (const t of c.namedChildren) if (t) bases.push(this.slice(t));
      } else if (c.type === 'super_interfaces' || c.type === 'extends_interfaces') {
        const list = c.namedChildren.find((t) => t?.type === 'type_list');
        for (const t of list?.namedChildren ?? []) if (t) bases.push(this.slice(t));
      }
    }
    this.classes.push({
      name,
      qualifiedName,
      lang: 'java',
      path: this.path,
      kind,
      header,
      bases,
      docstring: this.javadoc(node),
      range: rangeOf(node),
    });
    const indent = lineIndent(this.source, node);
    const scope: TypeScope = {
      qualifiedName,
      headers: [...(parent?.headers ?? []), ...(parent?.isEnum ? [`${indent};`] : []), `${indent}${header} {`],
      closers: [`${indent}}`, ...(parent?.closers ?? [])],
      baseIndent: parent ? parent.baseIndent : indent,
      isEnum: kind === 'enum',
    };
    if (kind === 'record') this.addRecordComponents(node, scope);
    if (body) this.walkBody(body, scope);
  }

  private walkBody(body: Node, scope: TypeScope): void {
    for (const m of body.namedChildren) {
      if (!m) continue;
      if (METHOD_TYPES.has(m.type)) this.addMethod(m, scope);
      else if (m.type === 'field_declaration' || m.type === 'constant_declaration') this.addField(m, scope);
      else if (m.type === 'enum_constant') this.addEnumConstant(m, scope);
      else if (TYPE_KINDS[m.type]) this.addType(m, scope);
      else if (m.type === 'enum_body_declarations' || m.type === 'ERROR') this.walkBody(m, scope);
    }
  }

  private stub(scope: TypeScope, definition: string): string {
    const d = (s: string): string => dedentLines(s, scope.baseIndent);
    return renderStub(this.pathLine, scope.headers.map(d), d(definition), scope.closers.map(d), '// ...');
  }

  /** The declaration with its Javadoc, indented as in the source. */
  private definitionText(node: Node, scope: TypeScope): string {
    const doc = this.javadocNode(node);
    const indent = lineIndent(this.source, node);
    const decl = indent + this.slice(node);
    const text = doc ? `${lineIndent(this.source, doc)}${this.slice(doc)}\n${decl}` : decl;
    return scope.isEnum && node.type !== 'enum_constant' ? `${indent};\n${text}` : text;
  }

  private addMethod(m: Node, scope: TypeScope): void {
    const nameNode = m.childForFieldName('name');
    if (!nameNode || nameNode.isMissing) return;
    const name = this.slice(nameNode);
    const body = m.childForFieldName('body');
    let signature = this.source.slice(this.startAfterAnnotations(m), body ? body.startIndex : m.endIndex).trim();
    if (signature.endsWith(';')) signature = signature.slice(0, -1).trimEnd();
    this.addItem(
      makeItem(this.ids, 'java', this.path, {
        kind: 'classFunction',
        name,
        qualifiedName: `${scope.qualifiedName}.${name}`,
        signature,
        docstring: this.javadoc(m),
        range: rangeOf(m),
        className: scope.qualifiedName,
        text: this.stub(scope, this.definitionText(m, scope)),
      }),
    );
  }

  private addField(f: Node, scope: TypeScope): void {
    const type = f.childForFieldName('type');
    const prefix = type ? this.source.slice(this.startAfterAnnotations(f), type.endIndex).trim() : '';
    const docstring = this.javadoc(f);
    const text = this.stub(scope, this.definitionText(f, scope));
    for (const d of f.childrenForFieldName('declarator')) {
      const nameNode = d?.childForFieldName('name');
      if (!d || !nameNode || nameNode.isMissing) continue;
      const name = this.slice(nameNode);
      this.addItem(
        makeItem(this.ids, 'java', this.path, {
          kind: 'classVariable',
          name,
          qualifiedName: `${scope.qualifiedName}.${name}`,
          signature: capSignature(`${prefix} ${this.slice(d)}`.trim()),
          docstring,
          range: rangeOf(f),
          className: scope.qualifiedName,
          text,
        }),
      );
    }
  }

  private addEnumConstant(c: Node, scope: TypeScope): void {
    const nameNode = c.childForFieldName('name');
    if (!nameNode || nameNode.isMissing) return;
    const name = this.slice(nameNode);
    const body = c.childForFieldName('body');
    const signature = this.source.slice(this.startAfterAnnotations(c), body ? body.startIndex : c.endIndex).trim();
    this.addItem(
      makeItem(this.ids, 'java', this.path, {
        kind: 'classVariable',
        name,
        qualifiedName: `${scope.qualifiedName}.${name}`,
        signature: capSignature(signature),
        docstring: this.javadoc(c),
        range: rangeOf(c),
        className: scope.qualifiedName,
        text: this.stub(scope, this.definitionText(c, scope)),
      }),
    );
  }

  /** A record's components are its fields (the header already declares them). */
  private addRecordComponents(record: Node, scope: TypeScope): void {
    const params = record.childForFieldName('parameters');
    for (const p of params?.namedChildren ?? []) {
      if (p?.type !== 'formal_parameter') continue;
      const nameNode = p.childForFieldName('name');
      if (!nameNode) continue;
      const name = this.slice(nameNode);
      this.addItem(
        makeItem(this.ids, 'java', this.path, {
          kind: 'classVariable',
          name,
          qualifiedName: `${scope.qualifiedName}.${name}`,
          signature: this.slice(p),
          docstring: '',
          range: rangeOf(p),
          className: scope.qualifiedName,
          text: this.stub(scope, ''),
        }),
      );
    }
  }
}

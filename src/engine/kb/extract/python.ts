// Python knowledge-base items (CodeRAG section 2.1): module functions, methods, class variables
// (class-body assignments and `self.x = ...` in methods), global variables; classes and imports.
// Rules: definitions inside functions are not items (nested defs, local classes, locals); module
// and class bodies see through if/try/with blocks; a variable is one item per name and scope
// (first occurrence), while a re-defined function gets `@2`; the receiver of `self.x` is the
// method's first parameter (so `cls.x = ...` in a classmethod counts, a staticmethod has none).
import type { Node, Tree } from 'web-tree-sitter';
import type { FileExtraction, KbClass, KbImport, KbItem } from '../types';
import { IdAllocator, TooManyItemsError, capSignature, cleanDoc, dedentLines, lineIndent, makeItem, rangeOf, renderStub } from './common';
import { escapeRegExp } from '../../util/regex';

interface ClassScope {
  qualifiedName: string;
  /** Stub header lines of this class and its enclosing classes, outermost first. */
  headers: string[];
  /** Indent of the outermost class, removed from stubs so that they start at column 0. */
  baseIndent: string;
  /** Variable names already emitted for this class (one item per name, first occurrence). */
  variables: Set<string>;
}

// Compound statements whose blocks still belong to the enclosing scope (module or class body).
const COMPOUND = new Set(['if_statement', 'try_statement', 'with_statement', 'for_statement', 'while_statement', 'match_statement']);
// At module and class level only these compound statements count (definitions under a loop are rare).
const SCOPE_COMPOUND = new Set(['if_statement', 'try_statement', 'with_statement']);

/** `maxItems`: more items than this throw TooManyItemsError (the walk stops there). */
export function extractPython(tree: Tree, path: string, source: string, maxItems = Infinity): FileExtraction {
  const x = new PythonExtractor(path, source, maxItems);
  const steps = x.walkModule(tree.rootNode);
  while (!steps.next().done);
  return x.extraction(tree);
}

/**
 * extractPython awaiting `pause` after each statement of a module or class body: the walk of a
 * large module (nova's libvirt test_driver.py, 1.3 MB and 1,260 items) held the event loop about
 * 130 ms in one go on a busy 2-core machine. The same extraction.
 */
export async function extractPythonPaced(
  tree: Tree,
  path: string,
  source: string,
  maxItems: number,
  pause: () => Promise<void>,
): Promise<FileExtraction> {
  const x = new PythonExtractor(path, source, maxItems);
  const steps = x.walkModule(tree.rootNode);
  while (!steps.next().done) await pause();
  return x.extraction(tree);
}

class PythonExtractor {
  readonly items: KbItem[] = [];
  readonly classes: KbClass[] = [];
  readonly imports: KbImport[] = [];
  private readonly ids: IdAllocator;
  private readonly globals = new Set<string>();
  private readonly receiverPatterns = new Map<string, RegExp>();
  private readonly pathLine: string;

  constructor(
    private readonly path: string,
    private readonly source: string,
    private readonly maxItems: number,
  ) {
    this.ids = new IdAllocator(path);
    this.pathLine = `# ${path}`;
  }

  extraction(tree: Tree): FileExtraction {
    return {
      path: this.path,
      lang: 'python',
      items: this.items,
      classes: this.classes,
      imports: this.imports,
      hasSyntaxErrors: tree.rootNode.hasError,
    };
  }

  private addItem(item: KbItem): void {
    if (this.items.length >= this.maxItems) throw new TooManyItemsError(this.maxItems);
    this.items.push(item);
  }

  private slice(node: Node): string {
    return this.source.slice(node.startIndex, node.endIndex);
  }

  /** Walks a module's statements, yielding after each one (a caller may hand the event loop back there). */
  *walkModule(block: Node): Generator<void, void, void> {
    for (const stmt of block.namedChildren) {
      if (!stmt) continue;
      switch (stmt.type) {
        case 'function_definition':
          this.addFunction(stmt, stmt, undefined);
          break;
        case 'class_definition':
          yield* this.addClass(stmt, stmt, undefined);
          break;
        case 'decorated_definition':
          yield* this.addDecorated(stmt, undefined);
          break;
        case 'expression_statement':
          this.addGlobals(stmt);
          break;
        case 'import_statement':
        case 'import_from_statement':
        case 'future_import_statement':
          this.addImport(stmt);
          break;
        case 'ERROR':
          // Error recovery can wrap valid definitions; keep what is still well-formed.
          yield* this.walkModule(stmt);
          break;
        default:
          if (SCOPE_COMPOUND.has(stmt.type)) for (const b of blocksOf(stmt)) yield* this.walkModule(b);
      }
      yield;
    }
  }

  private *walkClassBody(block: Node, scope: ClassScope): Generator<void, void, void> {
    for (const stmt of block.namedChildren) {
      if (!stmt) continue;
      switch (stmt.type) {
        case 'function_definition':
          this.addFunction(stmt, stmt, scope);
          break;
        case 'class_definition':
          yield* this.addClass(stmt, stmt, scope);
          break;
        case 'decorated_definition':
          yield* this.addDecorated(stmt, scope);
          break;
        case 'expression_statement':
          this.addClassVariables(stmt, scope);
          break;
        case 'import_statement':
        case 'import_from_statement':
          this.addImport(stmt);
          break;
        case 'ERROR':
          yield* this.walkClassBody(stmt, scope);
          break;
        default:
          if (SCOPE_COMPOUND.has(stmt.type)) for (const b of blocksOf(stmt)) yield* this.walkClassBody(b, scope);
      }
      yield;
    }
  }

  private *addDecorated(outer: Node, scope: ClassScope | undefined): Generator<void, void, void> {
    const def = outer.childForFieldName('definition');
    if (def?.type === 'function_definition') this.addFunction(def, outer, scope);
    else if (def?.type === 'class_definition') yield* this.addClass(def, outer, scope);
  }

  /** `def` header through its colon (falls back to the body start when the colon is missing). */
  private headerEnd(def: Node, body: Node | null): number {
    for (const c of def.children) {
      if (c?.type === ':') return c.endIndex;
    }
    return body ? body.startIndex : def.endIndex;
  }

  private addFunction(def: Node, outer: Node, scope: ClassScope | undefined): void {
    const nameNode = def.childForFieldName('name');
    if (!nameNode || nameNode.isMissing) return;
    const name = this.slice(nameNode);
    const body = def.childForFieldName('body');
    const signature = this.source.slice(def.startIndex, this.headerEnd(def, body)).trim();
    const qualifiedName = scope ? `${scope.qualifiedName}.${name}` : name;
    const definition = scope ? lineIndent(this.source, outer) + this.slice(outer) : this.slice(outer);
    this.addItem(
      makeItem(this.ids, 'python', this.path, {
        kind: scope ? 'classFunction' : 'function',
        name,
        qualifiedName,
        signature,
        docstring: body ? blockDocstring(body, this.source) : '',
        range: rangeOf(outer, def),
        ...(scope ? { className: scope.qualifiedName } : {}),
        text: this.stub(scope, definition),
      }),
    );
    if (scope && body && !isStaticMethod(outer, this.source)) {
      const receiver = firstParameterName(def, this.source);
      const hits = receiver ? receiverAssignments(this.source, body.startIndex, body.endIndex, receiver, this.receiverPatterns) : [];
      // Most methods assign no attribute: skip walking their bodies (node access is the cost).
      if (receiver && hits.length > 0) {
        const header = lineIndent(this.source, def) + signature;
        this.walkMethodBody(body, receiver, header, scope, hits);
      }
    }
  }

  private stub(scope: ClassScope | undefined, definition: string): string {
    if (!scope) return renderStub(this.pathLine, [], definition, [], '# ...');
    if (scope.baseIndent === '') return renderStub(this.pathLine, scope.headers, definition, [], '# ...');
    return renderStub(
      this.pathLine,
      scope.headers.map((h) => dedentLines(h, scope.baseIndent)),
      dedentLines(definition, scope.baseIndent),
      [],
      '# ...',
    );
  }

  private *addClass(def: Node, outer: Node, parent: ClassScope | undefined): Generator<void, void, void> {
    const nameNode = def.childForFieldName('name');
    if (!nameNode || nameNode.isMissing) return;
    const name = this.slice(nameNode);
    const body = def.childForFieldName('body');
    const header = this.source.slice(def.startIndex, this.headerEnd(def, body)).trim();
    const qualifiedName = parent ? `${parent.qualifiedName}.${name}` : name;
    const bases: string[] = [];
    const superclasses = def.childForFieldName('superclasses');
    if (superclasses) {
      for (const b of superclasses.namedChildren) {
        if (b && b.type !== 'keyword_argument' && b.type !== 'comment') bases.push(this.slice(b));
      }
    }
    this.classes.push({
      name,
      qualifiedName,
      lang: 'python',
      path: this.path,
      kind: 'class',
      header,
      bases,
      docstring: body ? blockDocstring(body, this.source) : '',
      range: rangeOf(outer, def),
    });
    if (!body) return;
    // The stub header keeps class decorators (e.g. @dataclass decides what the fields mean).
    const indent = lineIndent(this.source, outer);
    const stubHeader = indent + this.source.slice(outer.startIndex, this.headerEnd(def, body)).trimEnd();
    const scope: ClassScope = {
      qualifiedName,
      headers: parent ? [...parent.headers, stubHeader] : [stubHeader],
      baseIndent: parent ? parent.baseIndent : indent,
      variables: new Set(),
    };
    yield* this.walkClassBody(body, scope);
  }

  private addGlobals(stmt: Node): void {
    for (const assignment of stmt.namedChildren) {
      if (assignment?.type !== 'assignment') continue;
      for (const target of assignmentTargets(assignment)) {
        if (target.type !== 'identifier') continue;
        const name = this.slice(target);
        if (this.globals.has(name)) continue;
        this.globals.add(name);
        this.addItem(
          makeItem(this.ids, 'python', this.path, {
            kind: 'globalVariable',
            name,
            qualifiedName: name,
            signature: capSignature(this.slice(stmt)),
            docstring: attributeDocstring(stmt, this.source),
            range: rangeOf(stmt),
            text: this.stub(undefined, this.slice(stmt)),
          }),
        );
      }
    }
  }

  private addClassVariables(stmt: Node, scope: ClassScope): void {
    for (const assignment of stmt.namedChildren) {
      if (assignment?.type !== 'assignment') continue;
      for (const target of assignmentTargets(assignment)) {
        if (target.type !== 'identifier') continue;
        this.addClassVariable(this.slice(target), stmt, scope, lineIndent(this.source, stmt) + this.slice(stmt));
      }
    }
  }

  private addClassVariable(name: string, stmt: Node, scope: ClassScope, definition: string): void {
    if (scope.variables.has(name)) return;
    scope.variables.add(name);
    this.addItem(
      makeItem(this.ids, 'python', this.path, {
        kind: 'classVariable',
        name,
        qualifiedName: `${scope.qualifiedName}.${name}`,
        signature: capSignature(this.slice(stmt)),
        docstring: attributeDocstring(stmt, this.source),
        range: rangeOf(stmt),
        className: scope.qualifiedName,
        text: this.stub(scope, definition),
      }),
    );
  }

  /** `self.x = ...` anywhere in a method (not in nested functions or classes); `hits` are candidate offsets. */
  private walkMethodBody(block: Node, receiver: string, methodHeader: string, scope: ClassScope, hits: number[]): void {
    for (const stmt of block.namedChildren) {
      if (!stmt || !containsAny(hits, stmt.startIndex, stmt.endIndex)) continue;
      if (stmt.type === 'expression_statement') {
        for (const assignment of stmt.namedChildren) {
          if (assignment?.type !== 'assignment') continue;
          for (const target of assignmentTargets(assignment)) {
            if (target.type !== 'attribute') continue;
            const object = target.childForFieldName('object');
            const attribute = target.childForFieldName('attribute');
            if (object?.type !== 'identifier' || !attribute || this.slice(object) !== receiver) continue;
            const definition = `${methodHeader}\n${lineIndent(this.source, stmt)}${this.slice(stmt)}`;
            this.addClassVariable(this.slice(attribute), stmt, scope, definition);
          }
        }
      } else if (COMPOUND.has(stmt.type) || stmt.type.endsWith('_clause') || stmt.type === 'ERROR') {
        forEachBlock(stmt, (b) => this.walkMethodBody(b, receiver, methodHeader, scope, hits));
      }
    }
  }

  private addImport(stmt: Node): void {
    const line = stmt.startPosition.row;
    if (stmt.type === 'import_statement') {
      for (const n of stmt.childrenForFieldName('name')) {
        if (!n) continue;
        if (n.type === 'aliased_import') {
          const module = n.childForFieldName('name');
          const alias = n.childForFieldName('alias');
          if (module) this.imports.push({ module: this.slice(module), ...(alias ? { alias: this.slice(alias) } : {}), line });
        } else {
          const module = this.slice(n);
          this.imports.push({ module, alias: module.split('.', 1)[0] ?? module, line });
        }
      }
      return;
    }
    const moduleNode = stmt.childForFieldName('module_name');
    const module = stmt.type === 'future_import_statement' ? '__future__' : moduleNode ? this.slice(moduleNode) : '';
    let any = false;
    for (const c of stmt.namedChildren) {
      if (c?.type === 'wildcard_import') {
        this.imports.push({ module, wildcard: true, line });
        any = true;
      }
    }
    for (const c of stmt.childrenForFieldName('name')) {
      if (!c) continue;
      if (c.type === 'aliased_import') {
        const name = c.childForFieldName('name');
        const alias = c.childForFieldName('alias');
        if (name) this.imports.push({ module, name: this.slice(name), alias: alias ? this.slice(alias) : this.slice(name), line });
        any = true;
      } else if (c.type === 'dotted_name') {
        const name = this.slice(c);
        this.imports.push({ module, name, alias: name, line });
        any = true;
      }
    }
    if (!any && module) this.imports.push({ module, line });
  }
}

/**
 * Offsets of `receiver.name` followed by `:` (an annotation) or by an `=` (not `==`) within 500
 * characters, in source[start, end): a cheap text filter before walking a method body. It may
 * over-match (the tree decides) but must not miss `self.a, self.b = ...`, `(self.x) = ...`,
 * `self.x: T` or an annotation that spans lines. The lookahead consumes nothing, so a later
 * `self.b` inside the same window still gets its own hit.
 */
function receiverAssignments(source: string, start: number, end: number, receiver: string, patterns: Map<string, RegExp>): number[] {
  let re = patterns.get(receiver);
  if (!re) {
    const escaped = escapeRegExp(receiver);
    re = new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}\\s*\\.\\s*[\\p{L}\\p{N}_]+(?=\\s*:|[^=]{0,500}=(?!=))`, 'gu');
    patterns.set(receiver, re);
  }
  const hits: number[] = [];
  const text = source.slice(start, end);
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) hits.push(start + m.index);
  return hits;
}

/** Whether a sorted offset list has an entry in [start, end). */
function containsAny(sorted: number[], start: number, end: number): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] ?? 0) < start) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && (sorted[lo] ?? end) < end;
}

/** The blocks of a compound statement, including those of its clauses, in order. */
function blocksOf(stmt: Node): Node[] {
  const blocks: Node[] = [];
  forEachBlock(stmt, (b) => blocks.push(b));
  return blocks;
}

/** Call `fn` on each block of a compound statement, including those of its clauses. */
function forEachBlock(stmt: Node, fn: (block: Node) => void): void {
  for (const c of stmt.namedChildren) {
    if (!c) continue;
    if (c.type === 'block') fn(c);
    else if (c.type.endsWith('_clause')) forEachBlock(c, fn);
  }
}

/** The target nodes of an assignment, including each name of a tuple target and chained targets. */
function assignmentTargets(assignment: Node): Node[] {
  const out: Node[] = [];
  let a: Node | null = assignment;
  while (a?.type === 'assignment') {
    const left = a.childForFieldName('left');
    if (left) collectTargets(left, out);
    a = a.childForFieldName('right');
  }
  return out;
}

function collectTargets(node: Node, out: Node[]): void {
  switch (node.type) {
    case 'identifier':
    case 'attribute':
      out.push(node);
      break;
    case 'pattern_list':
    case 'tuple_pattern':
    case 'list_pattern':
    case 'list_splat_pattern':
    case 'parenthesized_expression':
      for (const c of node.namedChildren) if (c) collectTargets(c, out);
      break;
  }
}

/** The first statement of a body, when it is a plain string literal. */
function blockDocstring(body: Node, source: string): string {
  let stmt = body.firstNamedChild;
  while (stmt?.type === 'comment') stmt = stmt.nextNamedSibling;
  return stmt?.type === 'expression_statement' ? stringLiteralValue(stmt, source) : '';
}

/** The string statement right after an assignment (the attribute-docstring convention). */
function attributeDocstring(stmt: Node, source: string): string {
  const next = stmt.nextNamedSibling;
  return next?.type === 'expression_statement' ? stringLiteralValue(next, source) : '';
}

function stringLiteralValue(stmt: Node, source: string): string {
  if (stmt.namedChildCount !== 1) return '';
  const s = stmt.firstNamedChild;
  if (s?.type !== 'string') return '';
  let start = -1;
  let end = -1;
  for (const c of s.children) {
    if (!c) continue;
    if (c.type === 'string_start') {
      if (/[fF]/.test(source.slice(c.startIndex, c.endIndex))) return '';
      start = c.endIndex;
    } else if (c.type === 'string_end') end = c.startIndex;
    else if (c.type === 'interpolation') return '';
  }
  if (start < 0 || end < start) return '';
  return cleanDoc(source.slice(start, end));
}

function isStaticMethod(outer: Node, source: string): boolean {
  if (outer.type !== 'decorated_definition') return false;
  for (const d of outer.namedChildren) {
    if (d?.type === 'decorator' && /^@\s*staticmethod\b/.test(source.slice(d.startIndex, d.endIndex))) return true;
  }
  return false;
}

function firstParameterName(def: Node, source: string): string | undefined {
  const params = def.childForFieldName('parameters');
  const first = params?.firstNamedChild;
  if (!first) return undefined;
  if (first.type === 'identifier') return source.slice(first.startIndex, first.endIndex);
  if (first.type === 'typed_parameter' || first.type === 'default_parameter' || first.type === 'typed_default_parameter') {
    const id = first.type === 'typed_parameter' ? first.firstNamedChild : first.childForFieldName('name');
    if (id?.type === 'identifier') return source.slice(id.startIndex, id.endIndex);
  }
  return undefined;
}

// Rambo's essential code elements (the body mode's step c): parse a sketch (a drafted body, possibly
// broken) with tree-sitter, which recovers from errors, and collect the types, method calls and
// field accesses it uses; then map each to the repository by name — exact first, else the best
// Jaccard over subword tokens — where a matched class brings its members.
import type { Node } from 'web-tree-sitter';
import type { Lang, KbItem, KbClass } from '../kb/types';
import type { Parsers } from '../kb/parsers';
import { JAVA_KEYWORDS, PYTHON_KEYWORDS } from '../util/codeText';
import type { RepoMethods } from './RepoMethods';
import type { Snippet } from '../retrieve/types';
import { classFragment, headFragment } from './fragments';
import { jaccard, subwordSet } from './tokens';

type ElementKind = 'type' | 'call' | 'field';

export interface SketchElements {
  types: string[];
  calls: string[];
  fields: string[];
}

const JAVA_TYPE_NODES = new Set(['type_identifier']);
const BUILTIN_TYPES = new Set([
  'String',
  'Object',
  'Integer',
  'Long',
  'Double',
  'Boolean',
  'List',
  'Map',
  'Set',
  'ArrayList',
  'HashMap',
  'HashSet',
  'Exception',
  'RuntimeException',
  'int',
  'str',
  'dict',
  'list',
  'set',
  'tuple',
  'bool',
  'float',
  'self',
  'cls',
]);

/** The sketch inside a method of its own, so it parses as a body wherever it came from. */
function wrap(lang: Lang, sketch: string): string {
  if (lang === 'java') return `class __Sketch {\n void __sketch() {\n${sketch}\n}\n}\n`;
  const lines = sketch.split('\n');
  const indents = lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length);
  const min = indents.length > 0 ? Math.min(...indents) : 0;
  return `def __sketch():\n${lines.map((l) => `    ${l.slice(Math.min(min, l.length - l.trimStart().length))}`).join('\n')}\n    pass\n`;
}

/** Types, calls and field accesses a sketch uses, each once, in order of appearance. */
export function extractElements(parsers: Parsers, lang: Lang, sketch: string): SketchElements {
  const out = { types: new Set<string>(), calls: new Set<string>(), fields: new Set<string>() };
  const tree = parsers.parser(lang).parse(wrap(lang, sketch));
  if (!tree) return { types: [], calls: [], fields: [] };
  const keywords = lang === 'java' ? JAVA_KEYWORDS : PYTHON_KEYWORDS;
  const add = (set: Set<string>, name: string | undefined): void => {
    if (name && !keywords.has(name) && !name.startsWith('__sketch') && name !== '__Sketch') set.add(name);
  };
  const visit = (n: Node): void => {
    if (lang === 'java') {
      if (JAVA_TYPE_NODES.has(n.type)) add(out.types, n.text);
      else if (n.type === 'method_invocation') {
        add(out.calls, n.childForFieldName('name')?.text);
        const obj = n.childForFieldName('object');
        // `Foo.bar()`: a capitalised receiver is a type.
        if (obj?.type === 'identifier' && /^[A-Z]/.test(obj.text)) add(out.types, obj.text);
        else if (obj?.type === 'identifier') add(out.fields, obj.text);
      } else if (n.type === 'field_access') {
        add(out.fields, n.childForFieldName('field')?.text);
        const obj = n.childForFieldName('object');
        if (obj?.type === 'identifier' && /^[A-Z]/.test(obj.text)) add(out.types, obj.text);
      } else if (n.type === 'object_creation_expression') add(out.types, n.childForFieldName('type')?.text.replace(/<.*$/, ''));
    } else {
      if (n.type === 'call') {
        const fn = n.childForFieldName('function');
        if (fn?.type === 'identifier') add(/^[A-Z]/.test(fn.text) ? out.types : out.calls, fn.text);
        else if (fn?.type === 'attribute') add(out.calls, fn.childForFieldName('attribute')?.text);
      } else if (n.type === 'attribute' && n.parent?.type !== 'call') {
        add(out.fields, n.childForFieldName('attribute')?.text);
        const obj = n.childForFieldName('object');
        if (obj?.type === 'identifier' && /^[A-Z]/.test(obj.text)) add(out.types, obj.text);
      } else if (n.type === 'attribute' && n.parent?.type === 'call' && n.parent.childForFieldName('function')?.id === n.id) {
        const obj = n.childForFieldName('object');
        if (obj?.type === 'identifier' && /^[A-Z]/.test(obj.text)) add(out.types, obj.text);
        else if (obj?.type === 'attribute') add(out.fields, obj.childForFieldName('attribute')?.text);
      } else if (n.type === 'type') {
        for (const id of n.descendantsOfType('identifier')) if (id) add(out.types, id.text);
      }
    }
    for (const c of n.namedChildren) if (c) visit(c);
  };
  // Where the tree gave up (ERROR nodes), the text still names things: read it lexically.
  const lexical = (text: string): void => {
    for (const m of text.matchAll(/(\.)?\s*([A-Za-z_$][\w$]*)\s*(\()?/g)) {
      const [, dot, name, call] = m;
      if (!name) continue;
      if (call) add(/^[A-Z]/.test(name) && !dot ? out.types : out.calls, name);
      else if (dot) add(out.fields, name);
      else if (/^[A-Z][a-z]/.test(name)) add(out.types, name);
    }
  };
  try {
    visit(tree.rootNode);
    for (const err of tree.rootNode.descendantsOfType('ERROR')) if (err) lexical(err.text);
  } finally {
    tree.delete();
  }
  return { types: [...out.types], calls: [...out.calls], fields: [...out.fields] };
}

export interface MappedElement {
  /** As the sketch wrote it. */
  name: string;
  kind: ElementKind;
  /** The repository name it maps to. */
  matched: string;
  how: 'exact' | 'jaccard';
  score: number;
  /** Where the match is defined (the first definition). */
  path: string;
  /** A matched class: how many member names it brought. */
  members?: number;
}

/** Below this subword Jaccard a name is left unmapped (Rambo keeps any top-1; a tiny model's sketch names are often noise). */
const MIN_NAME_JACCARD = 0.5;

function best(name: string, candidates: Iterable<string>, subwords: Map<string, Set<string>>): { name: string; score: number } | undefined {
  const mine = subwordSet(name);
  let top: { name: string; score: number } | undefined;
  for (const c of candidates) {
    const score = jaccard(mine, subwords.get(c) ?? subwordSet(c));
    if (score > (top?.score ?? 0) || (top && score === top.score && c < top.name)) top = { name: c, score };
  }
  return top && top.score >= MIN_NAME_JACCARD ? top : undefined;
}

/**
 * Map the sketch's elements to repository names. Returns the mapped elements and the identifiers
 * whose using-methods are the usages (each mapped name; a class adds its members' names).
 */
export function mapElements(
  elements: SketchElements,
  repo: RepoMethods,
  lang: Lang,
): { mapped: MappedElement[]; identifiers: string[]; definitions: Snippet[] } {
  const tables = repo.nameTables();
  const classesByName = new Map<string, KbClass[]>();
  for (const c of tables.classes) {
    if (c.lang !== lang) continue;
    const list = classesByName.get(c.name);
    if (list) list.push(c);
    else classesByName.set(c.name, [c]);
  }
  const mapped: MappedElement[] = [];
  const identifiers = new Set<string>();
  // The definitions of what was matched, in the sketch's order: a class with its members, a method or field's first lines.
  const definitions = new Map<string, Snippet>();
  const matchedClasses = new Set<string>();
  const mapOne = (name: string, kind: ElementKind): void => {
    if (kind === 'type') {
      if (BUILTIN_TYPES.has(name) && !classesByName.has(name)) return;
      const hit = classesByName.has(name) ? { name, score: 1 } : best(name, classesByName.keys(), tables.subwords);
      if (!hit) return;
      const c = classesByName.get(hit.name)![0]!;
      const members = repo.membersOf(c);
      identifiers.add(hit.name);
      for (const m of members) identifiers.add(m.name);
      mapped.push({
        name,
        kind,
        matched: hit.name,
        how: hit.name === name ? 'exact' : 'jaccard',
        score: hit.score,
        path: c.path,
        members: members.length,
      });
      matchedClasses.add(c.qualifiedName);
      const def = classFragment(c, members);
      if (!definitions.has(def.id)) definitions.set(def.id, def);
      return;
    }
    const table: Map<string, KbItem[]> = kind === 'call' ? tables.functions : tables.fields;
    const hit = table.has(name) ? { name, score: 1 } : best(name, table.keys(), tables.subwords);
    if (!hit) return;
    const same = table.get(hit.name)!.filter((i) => i.lang === lang);
    const item = same.find((i) => i.className !== undefined && matchedClasses.has(i.className)) ?? same[0] ?? table.get(hit.name)![0]!;
    identifiers.add(hit.name);
    const def = headFragment(item, 6);
    if (!definitions.has(def.id) && !(item.className !== undefined && matchedClasses.has(item.className))) definitions.set(def.id, def);
    mapped.push({ name, kind, matched: hit.name, how: hit.name === name ? 'exact' : 'jaccard', score: hit.score, path: item.path });
  };
  for (const t of elements.types) mapOne(t, 'type');
  for (const c of elements.calls) mapOne(c, 'call');
  for (const f of elements.fields) mapOne(f, 'field');
  return { mapped, identifiers: [...identifiers], definitions: [...definitions.values()] };
}

// How a knowledge item from another file is shown to a model: compact, and without the file's
// string values. A function or method is its enclosing class header(s), its decorators or
// annotations, its signature and its docstring (through the detector), the body elided (`...` in
// Python, `;` in Java: the form classFragment already gives a class's members, and one that still
// parses); a field or global is its declaration; a class or module summary and every window of code
// (ProCC's similar code, Rambo's usages and signature-similar methods, RG-1 windows, the LLM
// reranker's windows) is the code as it is. Every form goes through maskStrings (string literal
// values) and the detector (comments, docstrings). The knowledge base and retrieval keep the whole
// text; only what a prompt shows changes.
//
// The whole body is shown where it tells the model more than it costs: when the whole definition is
// at most SHORT_BODY_CHARS (about 25 tokens) longer than its compact form, which is a getter, a
// property, a one-line return or a delegation (what the line needs is often the field it reads or
// the call it makes), or where the caller asks for the `body` form.
import type { KbItem, Lang } from '../kb/types';
import type { Candidate, Snippet } from '../retrieve/types';
import { maskStrings, redactDoc, scanQuoted } from './maskStrings';
import { redactGeneric } from './redact';
import { commentPrefix } from './templates';

/** `compact`: an item as its declaration; `body`: the whole definition; `code`: the text as it is (windows, summaries). */
export type RenderForm = 'compact' | 'body' | 'code';

/** A whole definition within this many characters of its compact form is shown whole. */
const SHORT_BODY_CHARS = 75;
/**
 * A docstring is shown up to this many lines, its summary, the cut marked: at 6 lines and 400
 * characters the validation Java prompts held four snippets where the top ten wanted room for ten
 * (docs/BENCHMARKS.md "Prompt recall").
 */
const MAX_DOC_LINES = 3;
const MAX_DOC_CHARS = 240;
/** A variable's declaration is shown up to this many lines (a long literal table is cut, marked). */
const MAX_VARIABLE_LINES = 8;
/**
 * A class or module summary (its fields and member signatures) keeps this many lines, each cut at
 * MAX_SUMMARY_LINE_CHARS, and names the rest: whole, one summary took half the validation prompts'
 * repository block; 6 lines, not 10, let more classes in whole (docs/BENCHMARKS.md "Prompt recall").
 */
export const MAX_SUMMARY_LINES = 6;
const MAX_SUMMARY_LINE_CHARS = 120;
/** Names the `also:` line of a cut summary lists at most (a class of hundreds of methods stays a few lines). */
const MAX_SUMMARY_NAMES = 60;
/** Decorators a function shows (each as its first line, arguments over several lines as `(...)`). */
const MAX_DECORATORS = 3;

interface RenderedItem {
  /** The snippet's id (the KbItem id for an item). */
  id: string;
  path: string;
  lang: Lang;
  kind: Snippet['kind'];
  /** The enclosing classes' header blocks, outermost first, as in the file (Java: each ends with `{`); empty at top level or for code. */
  container: string[];
  /** The member as shown, indented as under its container. */
  member: string;
  /** The first line in its file (source order when grouping). */
  line: number;
  /** The whole rendering: container, member and (Java) the closing braces. */
  text: string;
}

export function langOfPath(path: string): Lang {
  return /\.java$/i.test(path) ? 'java' : 'python';
}

/** The code as shown: string values masked, comments and docstrings through the detector. */
export function maskCode(text: string, lang: Lang): string {
  const masked = maskStrings(text, lang).text;
  return redactGeneric(masked).text;
}

/** The text without a leading `# path` / `// path` line of its own file (the prompt heads each snippet with its path). */
function withoutPathLine(text: string, path: string): string {
  const nl = text.indexOf('\n');
  const first = nl < 0 ? text : text.slice(0, nl);
  return /^\s*(#|\/\/)\s*\S+\s*$/.test(first) && first.includes(path) ? text.slice(nl < 0 ? text.length : nl + 1) : text;
}

/**
 * Index just after the `nth` `stop` character at bracket depth 0 from `from`, skipping strings and comments; -1 when there is none.
 * Python's `:` ends a `def`/`class` header, Java's `{` a type header and `{`/`;` a member's declaration.
 */
function afterAtDepth0(text: string, lang: Lang, from: number, stops: string, nth = 1): number {
  let depth = 0;
  let found = 0;
  const n = text.length;
  for (let i = from; i < n; i++) {
    const ch = text[i]!;
    if (depth === 0 && stops.includes(ch)) {
      if (++found === nth) return i + 1;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') depth = Math.max(0, depth - 1);
    else if (ch === '#' && lang === 'python') i = lineEnd(text, i) - 1;
    else if (ch === '/' && lang === 'java' && text[i + 1] === '/') i = lineEnd(text, i) - 1;
    else if (ch === '/' && lang === 'java' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 1;
    } else if (ch === '"' || ch === "'") {
      const triple = text[i + 1] === ch && text[i + 2] === ch;
      const r = scanQuoted(text, i + (triple ? 3 : 1), ch, triple);
      i = Math.max(i, r.end - 1);
    }
  }
  return -1;
}

function lineEnd(text: string, i: number): number {
  const nl = text.indexOf('\n', i);
  return nl < 0 ? text.length : nl;
}

function indentOf(line: string): string {
  return /^[ \t]*/.exec(line)?.[0] ?? '';
}

/** An item's stub split into its class header blocks, its definition and (Java) the closing braces. */
function splitStub(item: KbItem, text: string): { container: string[]; definition: string } {
  const depth = item.className ? item.className.split('.').length : 0;
  const container: string[] = [];
  let at = 0;
  for (let k = 0; k < depth; k++) {
    const end = afterAtDepth0(text, item.lang, at, item.lang === 'python' ? ':' : '{');
    if (end < 0) break;
    let stop = lineEnd(text, end);
    // Java: the `;` line that ends an enum's constants belongs to its header.
    while (item.lang === 'java' && /^\s*;\s*$/.test(text.slice(stop + 1, lineEnd(text, stop + 1))) && stop < text.length)
      stop = lineEnd(text, stop + 1);
    container.push(text.slice(at, stop).replace(/^\n/, ''));
    at = Math.min(text.length, stop + 1);
  }
  let definition = text.slice(at);
  if (item.lang === 'java') {
    const lines = definition.trimEnd().split('\n');
    for (let k = 0; k < container.length && lines.length > 0 && /^\s*}\s*$/.test(lines[lines.length - 1]!); k++) lines.pop();
    definition = lines.join('\n');
  }
  return { container, definition };
}

/** A docstring cut to MAX_DOC_LINES / MAX_DOC_CHARS, through the detector. */
function shortDoc(doc: string): string {
  let lines = doc.split('\n');
  let cut = false;
  if (lines.length > MAX_DOC_LINES) {
    lines = lines.slice(0, MAX_DOC_LINES);
    cut = true;
  }
  let text = lines.join('\n').trimEnd();
  if (text.length > MAX_DOC_CHARS) {
    text = text.slice(0, text.lastIndexOf(' ', MAX_DOC_CHARS) > 0 ? text.lastIndexOf(' ', MAX_DOC_CHARS) : MAX_DOC_CHARS);
    cut = true;
  }
  return redactDoc(cut ? `${text} ...` : text);
}

function pythonDoc(doc: string, indent: string): string {
  const body = shortDoc(doc).replace(/\\/g, '\\\\').replace(/"""/g, '\\"\\"\\"');
  return `${indent}"""${body.split('\n').join(`\n${indent}`)}"""`;
}

function javaDoc(doc: string, indent: string): string {
  const lines = shortDoc(doc).replace(/\*\//g, '* /').split('\n');
  return lines.length === 1
    ? `${indent}/** ${lines[0]} */`
    : `${indent}/**\n${lines.map((l) => `${indent} * ${l}`.trimEnd()).join('\n')}\n${indent} */`;
}

/** A Python function's definition: decorators, the signature, the docstring, `...`. */
function compactPythonFunction(item: KbItem, definition: string): string | undefined {
  const defAt = /^[ \t]*(?:async[ \t]+)?def[ \t]/m.exec(definition);
  if (!defAt) return undefined;
  const end = afterAtDepth0(definition, 'python', defAt.index, ':');
  if (end < 0) return undefined;
  const head = shortDecorators(definition.slice(0, defAt.index)) + definition.slice(defAt.index, end);
  const indent = indentOf(definition.slice(defAt.index));
  const bodyLine = definition
    .slice(end)
    .split('\n')
    .find((l) => l.trim() !== '');
  const inner = bodyLine && indentOf(bodyLine).length > indent.length ? indentOf(bodyLine) : `${indent}    `;
  return item.docstring ? `${head}\n${pythonDoc(item.docstring, inner)}\n${inner}...` : `${head} ...`;
}

/**
 * Decorators as a model needs them: which ones, not their arguments; a decorator list of forty
 * lines (a command-line option per line) otherwise outweighs the function.
 */
function shortDecorators(text: string): string {
  const decorators: string[] = [];
  for (const line of text.split('\n')) {
    const at = /^([ \t]*)@/.exec(line);
    if (!at) continue;
    const first = line.trimEnd();
    const open = (first.match(/\(/g) ?? []).length - (first.match(/\)/g) ?? []).length;
    decorators.push(
      open > 0
        ? `${first.slice(0, first.indexOf('('))}(...)`
        : first.length > MAX_SUMMARY_LINE_CHARS
          ? `${first.slice(0, first.indexOf('(') > 0 ? first.indexOf('(') : MAX_SUMMARY_LINE_CHARS)}(...)`
          : first,
    );
  }
  const kept = decorators.slice(0, MAX_DECORATORS);
  return kept.length === 0 ? text : `${kept.join('\n')}\n`;
}

/** The name a summary line declares (`def name(`, `name = `, `name: T`, Java `type name(` / `type name;`), if any. */
function declaredName(line: string, lang: Lang): string | undefined {
  const t = line.trim();
  if (lang === 'python')
    return /^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)/.exec(t)?.[1] ?? /^(?:self\.)?([A-Za-z_]\w*)\s*[:=]/.exec(t)?.[1];
  return /([A-Za-z_$][\w$]*)\s*(?:\(|=|;|,)/.exec(t.replace(/<[^<>]*>/g, ''))?.[1];
}

/** The names of a summary's own `also:` line (a class of more members than its summary shows lists the rest so). */
function alsoNames(line: string): string[] | undefined {
  const list = /^\s*(?:#|\/\/) also: (.*)$/.exec(line)?.[1];
  return list === undefined ? undefined : list.split(',').flatMap((n) => /^\s*([A-Za-z_$][\w$]*)/.exec(n)?.[1] ?? []);
}

/** A line cut at MAX_SUMMARY_LINE_CHARS, the cut marked. */
function shortLine(line: string): string {
  return line.length > MAX_SUMMARY_LINE_CHARS ? `${line.slice(0, MAX_SUMMARY_LINE_CHARS).trimEnd()} ...` : line;
}

/**
 * A class or module summary in MAX_SUMMARY_LINES lines of at most MAX_SUMMARY_LINE_CHARS; the lines
 * past them become one comment under the header naming what they declare, so members' names stay in sight.
 * Names the code around the cursor uses (`inSight`) are named first: a class of hundreds of members
 * (a table of constants, a large API) then still names the ones the file works with.
 */
function shortSummary(text: string, lang: Lang, inSight?: ReadonlySet<string>, maxLines = MAX_SUMMARY_LINES): string {
  const source = text.split('\n');
  const lines = source.map(shortLine);
  if (lines.length <= maxLines) return lines.join('\n');
  const closing = lang === 'java' && lines.at(-1)?.trim() === '}' ? [lines.at(-1)!] : [];
  // The names come from the lines as written: a summary's own `also:` line is longer than a shown line may be.
  const rest = source.slice(maxLines, source.length - closing.length);
  const indent = indentOf(lines.slice(1).find((l) => l.trim() !== '') ?? '    ');
  const all = [...new Set(rest.flatMap((l) => alsoNames(l) ?? declaredName(l, lang) ?? []))];
  const ordered = inSight ? [...all.filter((n) => inSight.has(n)), ...all.filter((n) => !inSight.has(n))] : all;
  const names = ordered.slice(0, MAX_SUMMARY_NAMES);
  const more = `${indent}${lang === 'python' ? '#' : '//'} also: ${names.length > 0 ? names.join(', ') : '...'}`;
  // Right under the header: a prompt that has to cut the summary short keeps its head, names included.
  return [lines[0]!, more, ...lines.slice(1, maxLines), ...closing].join('\n');
}

/** A Java method's definition: its Javadoc (shortened), annotations and declaration, the body as `;`. */
function compactJavaMethod(item: KbItem, definition: string): string | undefined {
  const start = definition.search(/\S/);
  if (start < 0) return undefined;
  const { doc, rest } = withoutJavadoc(definition);
  const end = afterAtDepth0(rest, 'java', 0, '{;');
  if (end < 0) return undefined;
  const decl = rest.slice(0, end - 1).trimEnd();
  return `${doc(decl)}${decl};`;
}

/** A leading Javadoc comment split off; `doc(decl)` renders the item's docstring, shortened, at the declaration's indent. */
function withoutJavadoc(definition: string): { rest: string; doc: (decl: string) => string } {
  const m = /^(\s*;\n)?([ \t]*)\/\*\*[\s\S]*?\*\/[ \t]*\n/.exec(definition);
  const rest = m ? (m[1] ?? '') + definition.slice(m[0].length) : definition;
  return {
    rest,
    doc: (decl) => {
      if (!m) return '';
      const line = decl.split('\n').find((l) => l.trim() !== '' && l.trim() !== ';') ?? '';
      return `${javaDoc(docOf(m[0]), indentOf(line))}\n`;
    },
  };
}

function docOf(comment: string): string {
  return comment
    .replace(/^\s*;\n/, '')
    .trim()
    .replace(/^\/\*\*|\*\/$/g, '')
    .split('\n')
    .map((l) => l.replace(/^\s*\*(?!\/) ?/, '').trimEnd())
    .join('\n')
    .trim();
}

/** A variable's declaration, cut to MAX_VARIABLE_LINES (Java: its Javadoc shortened). */
function compactVariable(item: KbItem, definition: string): string {
  let text = definition;
  if (item.lang === 'java') {
    const { doc, rest } = withoutJavadoc(definition);
    text = doc(rest) + rest;
  }
  const lines = text.split('\n');
  if (lines.length <= MAX_VARIABLE_LINES) return text;
  const kept = lines.slice(0, MAX_VARIABLE_LINES);
  return `${kept.join('\n')}\n${indentOf(kept[kept.length - 1] ?? '')}${commentPrefix(item.lang)} ...`;
}

function closers(container: readonly string[]): string[] {
  return container.map((h) => `${indentOf(h)}}`).reverse();
}

function assemble(lang: Lang, container: readonly string[], member: string): string {
  const parts = [...container, ...(member.trim() === '' ? [] : [member])];
  if (lang === 'java') parts.push(...closers(container));
  return parts.join('\n');
}

/** Whether `form` shows the snippet as a cut summary (a class or module, compact): the one rendering the names in sight change. */
export function isCutSummary(snippet: Pick<Snippet, 'kind'>, form: RenderForm): boolean {
  return form === 'compact' && (snippet.kind === 'class' || snippet.kind === 'module');
}

/**
 * One snippet as a model is shown it, with its parts (so that a caller can group a file's items).
 * `inSight`: the names the code around the cursor uses (namesInSight), which a cut summary names first.
 */
export function renderSnippet(snippet: Snippet, form: RenderForm = 'compact', inSight?: ReadonlySet<string>): RenderedItem {
  const item = snippet.item;
  const lang = item?.lang ?? langOfPath(snippet.path);
  const base = { id: snippet.id, path: snippet.path, lang, kind: snippet.kind, line: snippet.range.startLine };
  const text = withoutPathLine(snippet.text, snippet.path);
  if (!item || form === 'code' || snippet.kind === 'class' || snippet.kind === 'module' || snippet.kind === 'window') {
    const member = maskCode(isCutSummary(snippet, form) ? shortSummary(text, lang, inSight) : text, lang);
    return { ...base, container: [], member, text: member };
  }
  const { container: rawContainer, definition } = splitStub(item, text);
  const container = rawContainer.map((h) => maskCode(h, lang));
  // The choice is made on the source text, so that only the text shown is masked (the detector is most of the cost).
  let shown = definition;
  if (form === 'compact') {
    if (item.kind === 'function' || item.kind === 'classFunction') {
      const compact = item.lang === 'python' ? compactPythonFunction(item, definition) : compactJavaMethod(item, definition);
      if (compact !== undefined && definition.length > compact.length + SHORT_BODY_CHARS) shown = compact;
    } else shown = compactVariable(item, definition);
  }
  const member = maskCode(shown, lang);
  return { ...base, container, member, text: assemble(lang, container, member) };
}

/**
 * The item in brief, for a prompt with room for more items than their compact forms take: a class
 * or module as its header and the names of its members, a function as its signature under its
 * classes' headers (no docstring, no decorators), a variable as its first line. Undefined where
 * there is none shorter than the compact form (code windows, a one-line item).
 */
export function renderBrief(snippet: Snippet, inSight?: ReadonlySet<string>): string | undefined {
  const item = snippet.item;
  const lang = item?.lang ?? langOfPath(snippet.path);
  const text = withoutPathLine(snippet.text, snippet.path);
  if (snippet.kind === 'class' || snippet.kind === 'module') return maskCode(shortSummary(text, lang, inSight, 1), lang);
  if (!item || snippet.kind === 'window') return undefined;
  const { container: rawContainer, definition } = splitStub(item, text);
  const { rest } = item.lang === 'java' ? withoutJavadoc(definition) : { rest: definition };
  let member: string | undefined;
  if (item.kind === 'function' || item.kind === 'classFunction') {
    // From the start of the declaration's line, so that it keeps its indent (an enum's `;` line is not it).
    const defAt = item.lang === 'python' ? /^[ \t]*(?:async[ \t]+)?def[ \t]/m.exec(rest) : /^(?![ \t]*;[ \t]*$)[ \t]*\S/m.exec(rest);
    const end = defAt ? afterAtDepth0(rest, lang, defAt.index, item.lang === 'python' ? ':' : '{;') : -1;
    if (defAt && end >= 0) {
      const decl = rest.slice(defAt.index, end).trimEnd();
      member = item.lang === 'python' ? `${decl} ...` : `${decl.slice(0, -1).trimEnd()};`;
    }
  } else {
    const first = rest.split('\n').find((l) => l.trim() !== '' && l.trim() !== ';');
    if (first !== undefined) member = shortLine(first);
  }
  if (member === undefined) return undefined;
  return assemble(
    lang,
    rawContainer.map((h) => maskCode(h, lang)),
    maskCode(member, lang),
  );
}

/** Enum `;` lines are not part of a container's identity (a constant's stub has none, a member's has one). */
function containerKey(block: string): string {
  return block.replace(/\n\s*;\s*(?=\n|$)/g, '');
}

/**
 * Several rendered items of ONE file as one text: each enclosing class header written once, members
 * under it in source order (nested classes opened and closed as the order needs).
 */
export function renderFileItems(path: string, items: readonly RenderedItem[]): string {
  const mine = items.filter((i) => i.path === path).sort((a, b) => a.line - b.line);
  const lang = mine[0]?.lang ?? langOfPath(path);
  const out: string[] = [];
  const open: string[] = [];
  const seen = new Set<string>();
  // The lines of the last member written under the open container (a Python `self.x` item repeats its method's header).
  let previous: string[] = [];
  for (const it of mine) {
    if (seen.has(it.text)) continue;
    seen.add(it.text);
    let common = 0;
    while (common < open.length && common < it.container.length && containerKey(open[common]!) === containerKey(it.container[common]!))
      common++;
    while (open.length > common) {
      const h = open.pop()!;
      if (lang === 'java') out.push(`${indentOf(h)}}`);
    }
    if (common < it.container.length || common < open.length) previous = [];
    for (let k = common; k < it.container.length; k++) {
      open.push(it.container[k]!);
      out.push(it.container[k]!);
    }
    // A member after an enum's constants needs the `;` that its own container block carries.
    const last = it.container[it.container.length - 1];
    const semicolon = last === undefined ? undefined : /\n(\s*;)\s*$/.exec(last)?.[1];
    if (lang === 'java' && semicolon !== undefined && !/\n\s*;\s*$/.test(open[open.length - 1]!)) {
      out.push(semicolon);
      open[open.length - 1] = last!;
    }
    let lines = it.member.split('\n');
    if (previous.length > 0 && lines[0] === previous[0]) lines = lines.filter((l) => !previous.includes(l));
    // Java enum constants written one after another are separated by commas (a trailing one is legal).
    if (lang === 'java' && it.kind === 'classVariable' && lines.length > 0 && !/[;}]\s*$/.test(lines[lines.length - 1]!))
      lines[lines.length - 1] += ',';
    if (it.member.trim() !== '' && lines.length > 0) {
      out.push(lines.join('\n'));
      previous = it.member.split('\n');
    }
  }
  while (open.length > 0) {
    const h = open.pop()!;
    if (lang === 'java') out.push(`${indentOf(h)}}`);
  }
  return out.join('\n');
}

/** Characters of the code before / after the cursor whose names count as in sight (a large file costs no more). */
const SIGHT_BEFORE_CHARS = 16_000;
const SIGHT_AFTER_CHARS = 4_000;

/** The identifiers of the code around the cursor: what a cut summary names first. */
export function namesInSight(prefix: string, suffix: string): ReadonlySet<string> {
  const text = `${prefix.slice(-SIGHT_BEFORE_CHARS)}\n${suffix.slice(0, SIGHT_AFTER_CHARS)}`;
  return new Set(text.match(/[A-Za-z_$][\w$]*/g) ?? []);
}

/** The form a candidate is shown in: code for windows, usages, signature-similar methods and ProCC's code; items compact. */
export function formOf(c: Candidate, whole = false): RenderForm {
  const o = c.origin?.kind;
  if (o === 'similar' || o === 'usage' || o === 'signature') return 'code';
  return whole ? 'body' : 'compact';
}

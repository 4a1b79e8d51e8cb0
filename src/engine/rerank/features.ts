// Features of one (query, candidate) pair for the distilled reranker. The shipped distilled model
// is a small network over these features rather than a cross-encoder over tokens: it has to score
// 31 candidates in a few milliseconds on two shared cores. The features say what a reader of the
// BestFit prompt looks at — does the candidate define a name the unfinished line uses or is
// typing, does its class or module appear in the code, how much vocabulary they share — plus
// what retrieval knows (which paths found it, at what rank and score, what kind of item it is).
// The training script reads the same vectors from the distillation data, so the list below is
// the model's input contract: config.json names it and a model trained on another list is refused.
import type { RerankDoc, RerankQuery } from './types';
import type { Candidate, PathName } from '../retrieve/types';
import { identifierTokens, indentOf, JAVA_KEYWORDS, PYTHON_KEYWORDS } from '../util/codeText';
import { identifierEndingAt } from '../util/identifierAtEnd';

export const FEATURE_NAMES = [
  'name_in_last_line',
  'name_in_last3',
  'name_in_query',
  'name_count_log',
  'typed_prefix_of_name',
  'owner_in_last_line',
  'owner_in_query',
  'module_in_query',
  'last_line_idents_covered',
  'last3_idents_covered',
  'query_jaccard',
  'length_log',
  'same_directory',
  'short_name',
  'path_sparse',
  'path_dense',
  'path_dataflow',
  'rank_sparse',
  'rank_dense',
  'rank_dataflow',
  'score_sparse',
  'score_dense',
  'score_dataflow',
  'kind_function',
  'kind_class_function',
  'kind_class_variable',
  'kind_global_variable',
  'kind_class',
  'kind_other',
  'lang_python',
  'name_recency',
  'name_count_context_log',
  'name_imported',
  'owner_recency',
  'owner_imported',
  'module_recency',
  'name_in_scope',
  'owner_in_scope',
  'test_candidate',
  'test_query',
  'merged_position_inv',
  'merged_position',
] as const;

export const FEATURE_COUNT = FEATURE_NAMES.length;

/** A rerank document; the rerank stage attaches the retrieval candidate it came from. */
export type FeatureDoc = RerankDoc & {
  candidate?: Candidate;
  path?: string;
  /** 0-based place in the merged retrieval order (the rerank stage sets it; else the row of the batch). */
  position?: number;
};

/** Words that say nothing about which definition a line needs: both languages' keywords, literals, self/cls, var. */
const KEYWORDS: ReadonlySet<string> = new Set([
  ...PYTHON_KEYWORDS,
  ...JAVA_KEYWORDS,
  'self',
  'cls',
  'True',
  'False',
  'None',
  'true',
  'false',
  'null',
  'var',
]);
const identifiers = identifierTokens;

function meaningful(idents: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const id of idents) if (id.length >= 2 && !KEYWORDS.has(id)) out.add(id);
  return out;
}

/** What a query contributes to every candidate's features, computed once per query. */
interface QueryFeatures {
  path: string;
  dir: string;
  python: boolean;
  lastLine: Set<string>;
  last3: Set<string>;
  all: Set<string>;
  counts: Map<string, number>;
  /** The identifier being typed at the cursor ('' after a space, a dot or a bracket). */
  typed: string;
  /** Over the whole code context (its last CONTEXT_LINES lines): lines between the cursor line and an identifier's last use. */
  lastUse: Map<string, number>;
  /** Over the whole code context: how often each identifier is used. */
  contextCounts: Map<string, number>;
  /** Identifiers on import lines of the code context. */
  imported: Set<string>;
  /** Identifiers used in the function or method the cursor is in. */
  inScope: Set<string>;
}

/** How far back the context features look (a 20,000-line file costs no more than this). */
const CONTEXT_LINES = 3000;
const IMPORT_LINE = /^\s*(?:from\s+\S+\s+import\b|import\b)/;
const PY_DEF = /^\s*(?:async\s+)?def\s/;
const JAVA_CONTROL = /^\s*(?:if|for|while|switch|catch|try|else|do|synchronized|return|new)\b/;

/**
 * The first line of the function or method the cursor is in: the nearest `def` (Python) or
 * method header (Java: a line ending in `{` with a parameter list that is not a control statement)
 * indented no deeper than the last non-blank line; `start` (the first line looked at) when there is none.
 */
function scopeStart(lines: readonly string[], start: number, python: boolean): number {
  let last = lines.length - 1;
  while (last >= start && lines[last]!.trim() === '') last--;
  if (last < start) return start;
  const indent = indentOf(lines[last]!);
  for (let i = last; i >= start; i--) {
    const line = lines[i]!;
    if (line.trim() === '' || indentOf(line) > indent) continue;
    if (python ? PY_DEF.test(line) : /\)[^;(){}]*\{\s*$/.test(line) && line.includes('(') && !JAVA_CONTROL.test(line)) return i;
  }
  return start;
}

/**
 * Over the code context before the cursor (its last CONTEXT_LINES lines): how far back and how
 * often each identifier is used outside import statements, which identifiers are imported
 * (parenthesised and continued Python imports included) and which are used in the enclosing
 * function.
 */
function contextUse(context: string, python: boolean): Pick<QueryFeatures, 'lastUse' | 'contextCounts' | 'imported' | 'inScope'> {
  const lines = context.split('\n');
  const start = Math.max(0, lines.length - CONTEXT_LINES);
  const scope = scopeStart(lines, start, python);
  const lastUse = new Map<string, number>();
  const contextCounts = new Map<string, number>();
  const imported = new Set<string>();
  const inScope = new Set<string>();
  let continuing = false;
  for (let i = start; i < lines.length; i++) {
    const line = lines[i]!;
    const ids = identifiers(line);
    if (continuing || IMPORT_LINE.test(line)) {
      for (const id of ids) imported.add(id);
      const open = (line.match(/\(/g) ?? []).length - (line.match(/\)/g) ?? []).length;
      continuing = (continuing && !line.includes(')')) || open > 0 || /\\\s*$/.test(line);
      continue;
    }
    for (const id of ids) {
      lastUse.set(id, lines.length - 1 - i);
      contextCounts.set(id, (contextCounts.get(id) ?? 0) + 1);
      if (i >= scope) inScope.add(id);
    }
  }
  return { lastUse, contextCounts, imported, inScope };
}

const TEST_PATH = /(?:^|\/)(?:tests?|testing)\/|(?:^|\/)test_[^/]*$|_test\.py$|Tests?\.java$/;

/** 1 on the cursor line, 1/2 five lines up, 0 when never used. */
function recency(q: QueryFeatures, name: string): number {
  if (name === '') return 0;
  const d = q.lastUse.get(name);
  return d === undefined ? 0 : 1 / (1 + d / 5);
}

export function queryFeatures(query: RerankQuery): QueryFeatures {
  // The rerank query's first line is its `# path` header.
  const lines = query.text.split('\n').slice(1);
  const lastLine = lines[lines.length - 1] ?? '';
  const last3 = lines.slice(-3).join('\n');
  const body = lines.join('\n');
  const idents = identifiers(body);
  const counts = new Map<string, number>();
  for (const id of idents) counts.set(id, (counts.get(id) ?? 0) + 1);
  const typed = identifierEndingAt(lastLine, lastLine.length, 0, true);
  const slash = query.path.lastIndexOf('/');
  return {
    path: query.path,
    dir: slash < 0 ? '' : query.path.slice(0, slash),
    python: !query.path.endsWith('.java'),
    lastLine: meaningful(identifiers(lastLine)),
    last3: meaningful(identifiers(last3)),
    all: meaningful(idents),
    counts,
    typed,
    ...contextUse((query.context ?? body).replace(/\r\n?/g, '\n'), !query.path.endsWith('.java')),
  };
}

/** The defined name of a snippet without retrieval metadata: the first `def`/`class`/declaration name. */
function nameFromText(text: string): string {
  const m = /\b(?:def|class|interface|enum)\s+([A-Za-z_$][\w$]*)/.exec(text) ?? /([A-Za-z_$][\w$]*)\s*[(=]/.exec(text);
  return m ? m[1]! : '';
}

function fraction(needles: ReadonlySet<string>, hay: ReadonlySet<string>): number {
  if (needles.size === 0) return 0;
  let hit = 0;
  for (const n of needles) if (hay.has(n)) hit++;
  return hit / needles.size;
}

function rankFeature(c: Candidate | undefined, path: PathName): number {
  const r = c?.ranks[path];
  return r === undefined ? 0 : 1 / (1 + r);
}

function scoreFeature(c: Candidate | undefined, path: PathName): number {
  const s = c?.scores[path];
  return typeof s === 'number' && Number.isFinite(s) ? Math.max(-1, Math.min(1, s)) : 0;
}

/** The feature vector of one candidate (FEATURE_NAMES order). */
export function candidateFeatures(q: QueryFeatures, doc: FeatureDoc, row = 0): Float32Array {
  const c = doc.candidate;
  const name = c?.snippet.name ?? nameFromText(doc.text);
  const qualified = c?.snippet.qualifiedName ?? name;
  const dot = qualified.lastIndexOf('.');
  const owner = dot > 0 ? qualified.slice(qualified.lastIndexOf('.', dot - 1) + 1, dot) : '';
  const path = c?.snippet.path ?? doc.path ?? '';
  const file = path.slice(path.lastIndexOf('/') + 1);
  const module = file.replace(/\.[^.]*$/, '');
  const dir = path.lastIndexOf('/') < 0 ? '' : path.slice(0, path.lastIndexOf('/'));
  const candIdents = meaningful(identifiers(doc.text));
  let inter = 0;
  for (const id of q.all) if (candIdents.has(id)) inter++;
  const union = q.all.size + candIdents.size - inter;
  const kind = c?.snippet.kind;
  const f = new Float32Array(FEATURE_COUNT);
  let i = 0;
  f[i++] = name !== '' && q.lastLine.has(name) ? 1 : 0;
  f[i++] = name !== '' && q.last3.has(name) ? 1 : 0;
  f[i++] = name !== '' && q.all.has(name) ? 1 : 0;
  f[i++] = Math.log1p(q.counts.get(name) ?? 0) / 3;
  f[i++] = q.typed.length >= 1 && name.length > q.typed.length && name.startsWith(q.typed) ? 1 : 0;
  f[i++] = owner !== '' && q.lastLine.has(owner) ? 1 : 0;
  f[i++] = owner !== '' && q.all.has(owner) ? 1 : 0;
  f[i++] = module !== '' && q.all.has(module) ? 1 : 0;
  f[i++] = fraction(q.lastLine, candIdents);
  f[i++] = fraction(q.last3, candIdents);
  f[i++] = union === 0 ? 0 : inter / union;
  f[i++] = Math.log1p(doc.text.length) / 10;
  f[i++] = dir === q.dir ? 1 : 0;
  f[i++] = name.length <= 3 ? 1 : 0;
  for (const p of ['sparse', 'dense', 'dataflow'] as const) f[i++] = c?.paths.includes(p) ? 1 : 0;
  for (const p of ['sparse', 'dense', 'dataflow'] as const) f[i++] = rankFeature(c, p);
  for (const p of ['sparse', 'dense', 'dataflow'] as const) f[i++] = scoreFeature(c, p);
  f[i++] = kind === 'function' ? 1 : 0;
  f[i++] = kind === 'classFunction' ? 1 : 0;
  f[i++] = kind === 'classVariable' ? 1 : 0;
  f[i++] = kind === 'globalVariable' ? 1 : 0;
  f[i++] = kind === 'class' || kind === 'module' ? 1 : 0; // a summary: of a class or of a module
  f[i++] = kind === undefined || kind === 'window' ? 1 : 0;
  f[i++] = q.python ? 1 : 0;
  f[i++] = recency(q, name);
  f[i++] = name === '' ? 0 : Math.log1p(q.contextCounts.get(name) ?? 0) / 4;
  f[i++] = name !== '' && q.imported.has(name) ? 1 : 0;
  f[i++] = recency(q, owner);
  f[i++] = owner !== '' && q.imported.has(owner) ? 1 : 0;
  f[i++] = recency(q, module);
  f[i++] = name !== '' && q.inScope.has(name) ? 1 : 0;
  f[i++] = owner !== '' && q.inScope.has(owner) ? 1 : 0;
  f[i++] = TEST_PATH.test(path) ? 1 : 0;
  f[i++] = TEST_PATH.test(q.path) ? 1 : 0;
  const position = doc.position ?? row;
  f[i++] = 1 / (1 + position);
  f[i++] = Math.min(position, 30) / 30;
  return f;
}

/** Features of every candidate, as one row-major [docs.length, FEATURE_COUNT] matrix. */
export function featureMatrix(query: RerankQuery, docs: readonly FeatureDoc[]): Float32Array {
  const q = queryFeatures(query);
  const out = new Float32Array(docs.length * FEATURE_COUNT);
  docs.forEach((d, r) => out.set(candidateFeatures(q, d, r), r * FEATURE_COUNT));
  return out;
}

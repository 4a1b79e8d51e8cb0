// Completion metrics exactly as docs/BENCHMARKS.md defines them (CodeRAG section 3.1, following
// CCEval's evaluation code): code match (EM, ES), identifier match (EM, F1), and the model-free
// retrieval measures context recall@k, full coverage@k and name coverage@k.
import type { Lang } from '../engine/kb/types';
import { JAVA_KEYWORDS, PYTHON_KEYWORDS } from '../engine/util/codeText';

/**
 * Normalise a completion or ground truth into its comparable lines: split on line breaks, strip
 * each line, drop empty lines and comment lines. Comment lines: `#` for Python, `//` for Java.
 * Extension for Java (documented in BENCHMARK terms as "comment lines"): a line that opens a
 * block comment (`/*` or `/**`) and every line up to the one that closes it are comment lines
 * too, unless code follows the closing `*\/` on that same line; otherwise Javadoc inside a body
 * would count as code.
 */
export function normalizedLines(code: string, lang: Lang): string[] {
  const out: string[] = [];
  let inBlock = false;
  for (const raw of code.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (lang === 'python') {
      if (!line.startsWith('#')) out.push(line);
      continue;
    }
    if (inBlock) {
      const close = line.indexOf('*/');
      if (close < 0) continue;
      inBlock = false;
      if (line.slice(close + 2).trim() === '') continue;
      out.push(line);
      continue;
    }
    if (line.startsWith('//')) continue;
    if (line.startsWith('/*')) {
      const close = line.indexOf('*/', 2);
      if (close < 0) {
        inBlock = true;
        continue;
      }
      if (line.slice(close + 2).trim() === '') continue;
    }
    out.push(line);
  }
  return out;
}

/** The pair compared by every code metric: ground truth and prediction (cut to the truth's line count), joined without separator. */
export function normalizePair(prediction: string, groundTruth: string, lang: Lang): { prediction: string; groundTruth: string } {
  const truth = normalizedLines(groundTruth, lang);
  const pred = normalizedLines(prediction, lang).slice(0, truth.length);
  return { prediction: pred.join(''), groundTruth: truth.join('') };
}

/**
 * Levenshtein distance over UTF-16 code units (insert, delete, substitute cost 1).
 * Common prefix and suffix are trimmed first; then one row of O(min(n, m)) memory.
 */
export function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  let start = 0;
  let endA = a.length;
  let endB = b.length;
  while (start < endA && start < endB && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  let s = a.slice(start, endA);
  let t = b.slice(start, endB);
  if (s.length < t.length) [s, t] = [t, s];
  const n = t.length;
  if (n === 0) return s.length;
  const row = new Uint32Array(n + 1);
  for (let j = 0; j <= n; j++) row[j] = j;
  for (let i = 1; i <= s.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    const c = s.charCodeAt(i - 1);
    for (let j = 1; j <= n; j++) {
      const above = row[j]!;
      const cost = t.charCodeAt(j - 1) === c ? 0 : 1;
      const best = Math.min(above + 1, row[j - 1]! + 1, diagonal + cost);
      row[j] = best;
      diagonal = above;
    }
  }
  return row[n]!;
}

/** ES in percent: 100 * (1 - Levenshtein / max length); two empty strings are identical (100). */
export function editSimilarity(a: string, b: string): number {
  const longest = Math.max(a.length, b.length);
  if (longest === 0) return 100;
  return 100 * (1 - levenshtein(a, b) / longest);
}

// String literals: Python prefixes (r, b, u, f and pairs), triple quotes, Java text blocks, and
// single-quoted strings / char literals. Only terminated literals are removed.
const PY_STRING = /(?:\b[rRbBuUfF]{1,2})?(?:"""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*')/g;
const JAVA_STRING = /"""[\s\S]*?"""|"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*'/g;
const IDENTIFIER = /[_a-zA-Z][_a-zA-Z0-9]*/g;

/** Identifiers of normalised code: string literals removed, keywords dropped, in order of appearance. */
export function identifiers(code: string, lang: Lang): string[] {
  const noStrings = code.replace(lang === 'python' ? PY_STRING : JAVA_STRING, ' ');
  const keywords = lang === 'python' ? PYTHON_KEYWORDS : JAVA_KEYWORDS;
  return (noStrings.match(IDENTIFIER) ?? []).filter((t) => !keywords.has(t));
}

/** F1 (0..1) of two identifier sets; two empty sets agree fully (1). */
export function setF1(predicted: readonly string[], truth: readonly string[]): number {
  const p = new Set(predicted);
  const t = new Set(truth);
  if (p.size === 0 && t.size === 0) return 1;
  let tp = 0;
  for (const x of p) if (t.has(x)) tp++;
  if (tp === 0) return 0;
  const precision = tp / p.size;
  const recall = tp / t.size;
  return (2 * precision * recall) / (precision + recall);
}

interface CodeScores {
  /** 0 or 100. */
  em: number;
  /** 0..100. */
  es: number;
  /** 0 or 100. */
  idEm: number;
  /** 0..100. */
  idF1: number;
}

/** Code and identifier match of one prediction; a missing prediction is the empty string. */
export function scoreCompletion(prediction: string | undefined, groundTruth: string, lang: Lang): CodeScores {
  const pair = normalizePair(prediction ?? '', groundTruth, lang);
  const predIds = identifiers(pair.prediction, lang);
  const truthIds = identifiers(pair.groundTruth, lang);
  const idEm = predIds.length === truthIds.length && predIds.every((x, i) => x === truthIds[i]);
  return {
    em: pair.prediction === pair.groundTruth ? 100 : 0,
    es: editSimilarity(pair.prediction, pair.groundTruth),
    idEm: idEm ? 100 : 0,
    idF1: 100 * setF1(predIds, truthIds),
  };
}

export interface CrossfileDef {
  name: string;
  kind: string;
  file: string;
  line: number;
}

export interface RetrievedContext {
  path: string;
  text: string;
  source?: string;
}

/** Whether `text` contains `name` as a whole identifier (not as part of a longer one). */
export function containsIdentifier(text: string, name: string): boolean {
  if (name === '') return false;
  let from = 0;
  for (;;) {
    const i = text.indexOf(name, from);
    if (i < 0) return false;
    const before = i > 0 ? text.charCodeAt(i - 1) : -1;
    const after = i + name.length < text.length ? text.charCodeAt(i + name.length) : -1;
    if (!isIdentChar(before) && !isIdentChar(after)) return true;
    from = i + 1;
  }
}

function isIdentChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
}

interface ContextScores {
  /**
   * Context recall@k (0..1): the share of the case's crossfile_defs for which one of the first k
   * contexts has `path === def.file` and contains the def's name as a whole identifier.
   */
  recall: number;
  /** 1 when every crossfile def is recalled in the sense above, else 0. */
  full: number;
  /**
   * Name coverage@k (0..1): the share of the case's distinct crossfile_def names that appear, as a
   * whole identifier, in any of the first k contexts, whatever file the context comes from.
   * It credits a retriever that found the right name through another file (a re-export, a caller).
   */
  coverage: number;
}

/** Retrieval measures of one case; undefined when the case has no crossfile_defs (it is left out of the averages). */
export function scoreContexts(
  defs: readonly CrossfileDef[] | undefined,
  contexts: readonly RetrievedContext[] | undefined,
  k: number,
): ContextScores | undefined {
  if (!defs || defs.length === 0) return undefined;
  const top = (contexts ?? []).slice(0, k);
  const hits = recalledDefs(defs, top, k).filter(Boolean).length;
  const names = [...new Set(defs.map((d) => d.name))];
  const covered = names.filter((n) => top.some((c) => containsIdentifier(c.text, n))).length;
  return { recall: hits / defs.length, full: hits === defs.length ? 1 : 0, coverage: covered / names.length };
}

/** For each def, whether one of the first k contexts is from its file and contains its name (recall@k's test). */
export function recalledDefs(defs: readonly CrossfileDef[], contexts: readonly RetrievedContext[] | undefined, k: number): boolean[] {
  const top = (contexts ?? []).slice(0, k);
  return defs.map((def) => top.some((c) => c.path === def.file && containsIdentifier(c.text, def.name)));
}

/** Median and 95th percentile (nearest rank) of a list of numbers; undefined when empty. */
export function medianP95(values: readonly number[]): { median: number; p95: number } | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const rank = Math.max(1, Math.ceil(0.95 * sorted.length));
  return { median, p95: sorted[rank - 1]! };
}

/**
 * The 95% bootstrap interval of the mean of `values` over cases (`resamples` resamples, a fixed-seed LCG, so a run repeats): a share
 * when the values are 0 and 1, the mean difference when they are paired differences.
 */
export function bootstrapInterval(values: readonly number[], resamples: number, seed = 1): [number, number] {
  let s = seed;
  const random = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const means: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[Math.floor(random() * values.length)]!;
    means.push(sum / values.length);
  }
  means.sort((a, b) => a - b);
  return [means[Math.floor(0.025 * resamples)]!, means[Math.floor(0.975 * resamples) - 1]!];
}

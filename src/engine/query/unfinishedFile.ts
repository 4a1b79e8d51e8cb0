// The unfinished file CodeRAG completes (section 2.2): the text before the cursor of one repository file.
import type { Lang } from '../kb/types';
import { clampToCharBoundary, engineText } from '../util/documentText';

export interface UnfinishedFile {
  /** Repo-relative path with forward slashes (excluded from retrieval: CodeRAG drops the current file). */
  path: string;
  lang: Lang;
  /** The file's text before the cursor; the text after it is never used for retrieval. */
  prefix: string;
}

/** Lines of the prefix; the last one is the unfinished line (possibly empty). */
export function prefixLines(prefix: string): string[] {
  return prefix.replace(/\r\n?/g, '\n').split('\n');
}

/**
 * The text before a 1-based line and column (column omitted: the start of the line, as in
 * CCEval line cases). A position past the end is clamped to the end of the text.
 */
export function prefixAt(text: string, line: number, column = 1): string {
  const normalised = engineText(text, 0).text;
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const next = normalised.indexOf('\n', offset);
    if (next < 0) return normalised;
    offset = next + 1;
  }
  const lineEnd = normalised.indexOf('\n', offset);
  const end = lineEnd < 0 ? normalised.length : lineEnd;
  return normalised.slice(0, clampToCharBoundary(normalised, Math.min(offset + Math.max(0, column - 1), end)));
}

// Where a generated body ends (Rambo's step f): Java at the first `}` that closes more
// than the text opened (the method's own brace), Python at the first non-blank line indented at
// or above the signature. Java also ends at a line other than a closing brace indented at or left
// of the signature, where the body's first line stood right of it: a small model that echoes the
// prompt's commented fragments and path headers writes them at column 0 (`//     builder.append(…)`,
// `*/`, `// src/…/File.java`). Pure; strings, character literals and comments do not count braces.
import type { Lang } from '../kb/types';
import { indentOf } from '../util/codeText';

/** Java: the text before the first unmatched `}` (outside strings, chars and comments). */
export function cutAtUnmatchedBrace(text: string): string {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      i = end;
    } else if (ch === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) break;
      i = end + 1;
    } else if (ch === '"' || ch === "'") {
      for (i++; i < text.length && text[i] !== ch && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
    } else if (ch === '{') depth++;
    else if (ch === '}') {
      if (depth === 0) return text.slice(0, i);
      depth--;
    }
  }
  return text;
}

/**
 * The lines before the first non-blank one that `ends` (given its indentation, the first line's
 * continuing the cursor's column, and the first non-blank line's); the whole text when none does.
 */
function cutBeforeLine(text: string, cursorColumn: number, ends: (line: string, indent: number, firstIndent: number) => boolean): string {
  const lines = text.split('\n');
  let firstIndent: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const indent = i === 0 ? cursorColumn + indentOf(line) : indentOf(line);
    firstIndent ??= indent;
    if (ends(line, indent, firstIndent)) return lines.slice(0, i).join('\n');
  }
  return text;
}

/** Java: the text before the method's own `}` or before a line left of the body at or beyond the signature's indentation. */
function cutJavaBody(text: string, signatureIndent: number, cursorColumn: number): string {
  return cutBeforeLine(
    cutAtUnmatchedBrace(text),
    cursorColumn,
    (line, indent, bodyIndent) => indent <= signatureIndent && indent < bodyIndent && !line.trimStart().startsWith('}'),
  );
}

/** Python: the lines before the first non-blank one indented at or above `signatureIndent` (the first line continues the cursor's). */
export function cutAtDedent(text: string, signatureIndent: number, cursorColumn: number): string {
  return cutBeforeLine(text, cursorColumn, (_line, indent) => indent <= signatureIndent);
}

/** The declaration line the cursor's body belongs to, read from the prefix (Python: the last `def` line; Java: the last `) {` line). */
function signatureLineOf(lang: Lang, prefix: string): string | undefined {
  const lines = prefix.split('\n');
  lines.pop();
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    if (lang === 'python' ? /^\s*(async\s+)?def\s/.test(line) : /\)\s*(throws\s[\w.,\s]+)?\{\s*$/.test(line)) return line;
  }
  return undefined;
}

export function signatureIndentOf(lang: Lang, prefix: string): number {
  return indentOf(signatureLineOf(lang, prefix) ?? '');
}

/**
 * On an empty line of a body, the indentation the cursor still lacks (a prefix that ends at
 * column 0 after the signature sends a small model off writing comments); '' elsewhere.
 */
export function missingBodyIndent(lang: Lang, prefix: string, signatureIndentText?: string): string {
  const before = prefix.slice(prefix.lastIndexOf('\n') + 1);
  if (before.trim() !== '') return '';
  const sig = signatureIndentText ?? (signatureLineOf(lang, prefix) ?? '').match(/^\s*/)?.[0] ?? '';
  const indent = bodyIndentOf(prefix, sig);
  return indent.startsWith(before) && indent.length > before.length ? indent.slice(before.length) : '';
}

/** The body as inserted: cut where the method ends, trailing blank lines dropped, at most `maxLines` lines. */
export function cutBody(
  raw: string,
  lang: Lang,
  prefix: string,
  maxLines: number,
  signatureIndent = signatureIndentOf(lang, prefix),
): string {
  const cursorColumn = prefix.length - (prefix.lastIndexOf('\n') + 1);
  const cut = lang === 'java' ? cutJavaBody(raw, signatureIndent, cursorColumn) : cutAtDedent(raw, signatureIndent, cursorColumn);
  // Comment markers with nothing after them say nothing (a small model repeats them).
  const lines = cut
    .split('\n')
    .filter((l) => !/^\s*(\/\/+|#+)\s*$/.test(l))
    .slice(0, maxLines);
  while (lines.length > 0 && (lines.at(-1) ?? '').trim() === '') lines.pop();
  while (lines.length > 0 && (lines[0] ?? '').trim() === '' && lines.length > 1) lines.shift();
  // The cursor's line already holds the body's indentation: the first line's own leading blanks
  // (a BPE model's ` return` after the indentation, or a line that followed a dropped blank one) would indent it twice.
  const cursorLine = prefix.slice(prefix.lastIndexOf('\n') + 1);
  if (cursorLine.length > 0 && cursorLine.trim() === '' && lines.length > 0) lines[0] = (lines[0] ?? '').replace(/^[ \t]+/, '');
  const text = lines.join('\n');
  return text.trim() === '' ? '' : text;
}

/** Whether the raw text ends the method (Java: an unmatched `}`; Python: a line indented at or above the signature). */
export function bodyEndFound(raw: string, lang: Lang, prefix: string, signatureIndent = signatureIndentOf(lang, prefix)): boolean {
  const cursorColumn = prefix.length - (prefix.lastIndexOf('\n') + 1);
  const cut = lang === 'java' ? cutJavaBody(raw, signatureIndent, cursorColumn) : cutAtDedent(raw, signatureIndent, cursorColumn);
  return cut.trimEnd().length < raw.trimEnd().length;
}

/** A body the token limit stopped before the method ended loses its last line, which the limit cut (when another line is left). */
export function dropUnfinishedLine(body: string): string {
  const at = body.trimEnd().lastIndexOf('\n');
  return at <= 0 || body.slice(0, at).trim() === '' ? body : body.slice(0, at).trimEnd();
}

/**
 * The cut body `body` of the model's `raw` answer, less the line the token limit cut mid-way when
 * the model stopped by its limit before the method ended; `dropped` is that line.
 */
export function withoutLineCutByLimit(
  body: string,
  raw: string,
  stoppedBy: string | undefined,
  lang: Lang,
  prefix: string,
  signatureIndent?: number,
): { body: string; dropped?: string } {
  if (stoppedBy !== 'length' || bodyEndFound(raw, lang, prefix, signatureIndent)) return { body };
  const kept = dropUnfinishedLine(body);
  return kept === body ? { body } : { body: kept, dropped: body.slice(kept.length).trim() };
}

/**
 * Whether a body being generated is unfinished: in Java no brace closes it yet; in Python it has
 * no statement yet (a Python body ends by dedenting, which the stops see). The embedded model may
 * not end such a body (GenerateRequest.holdEnd).
 */
export function bodyUnfinished(lang: Lang, generated: string): boolean {
  if (lang === 'java') return cutAtUnmatchedBrace(generated).length === generated.length;
  return !generated.split('\n').some((l) => l.trim() !== '' && !/^\s*#/.test(l));
}

/**
 * The indentation a body line of the method takes: the declaration's plus one level of the file's
 * own unit (the first indentation step the prefix shows below a line that opens a block).
 */
export function bodyIndentOf(prefix: string, signatureIndentText: string): string {
  const lines = prefix.split('\n');
  let unit = '    ';
  for (let i = 0; i + 1 < lines.length; i++) {
    const a = lines[i] ?? '';
    const b = lines[i + 1] ?? '';
    const ia = a.match(/^\s*/)?.[0] ?? '';
    const ib = b.match(/^\s*/)?.[0] ?? '';
    if (/[{:]\s*$/.test(a) && b.trim() !== '' && ib.length > ia.length && ib.startsWith(ia)) {
      unit = ib.slice(ia.length);
      break;
    }
  }
  return signatureIndentText + unit;
}

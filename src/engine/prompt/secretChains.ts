// Values written in pieces: literals joined by `+` or set side by side, and a builder's appends
// (`sb.append("...")`, one statement or several). Each is read as the one literal it makes, in its
// line (or, for a builder, where its result is bound or returned), by the rules that read single
// literals; where they change that literal, the pieces it was made of that overlap the change are
// replaced. So a DSN, a `user:password` pair or a JWT split over pieces is found as it is whole.
// Pure and synchronous.

import { LIT, ONE_LIT } from './secretPatterns';
import { enclosingName } from './secretScans';
import { REDACTED, type Redacted } from './secretVocabulary';

/** Two or more literals joined by `+`, blanks or a line continuation (the pieces' separators only). */
const JOINED = new RegExp(String.raw`${LIT}(?:(?:\s|\\(?=\n)|\+){1,40}${LIT}){1,15}`, 'g');
/** A builder's appends of literals: `X.append("...")`, chained or as successive statements on the same receiver. */
const APPENDS = new RegExp(String.raw`\b([A-Za-z_]\w*)((?:\s*\.\s*append\(\s*${LIT}\s*\)\s*;?){1,20})`, 'g');
/** Joined values longer than this are text, not a credential; they are left as they are. */
const MAX_JOINED = 1024;

interface Piece {
  start: number;
  end: number;
  /** The literal's inside as written. */
  inner: string;
  quote: string;
}

/** The literals of `text[from, to)` with their places in `text`. */
function piecesOf(text: string, from: number, to: number): Piece[] {
  const out: Piece[] = [];
  const re = new RegExp(ONE_LIT.source, 'g');
  re.lastIndex = from;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null && m.index < to) {
    const inner = m[1] ?? m[2] ?? '';
    const quote = m[1] !== undefined ? '"' : "'";
    const open = m[0].indexOf(quote);
    out.push({ start: m.index + open + 1, end: m.index + open + 1 + inner.length, inner, quote });
  }
  return out;
}

/** The line of `text` around `[from, to)`. */
function lineBounds(text: string, from: number, to: number): [number, number] {
  const start = text.lastIndexOf('\n', from - 1) + 1;
  const end = text.indexOf('\n', to);
  return [start, end < 0 ? text.length : end];
}

/** Where `before` and `after` differ, in `before`'s indices: [first changed, end of the change). */
function changedSpan(before: string, after: string): [number, number] | undefined {
  if (before === after) return undefined;
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail])
    tail++;
  return [head, before.length - tail];
}

/** One joined value, read whole: the pieces to replace, or none. */
interface Reading {
  pieces: Piece[];
  /** The text the rules read, and where the joined literal's inside lies in it. */
  text: string;
  at: number;
  joined: string;
  /** The text as written, and where it starts: where the rules already change a piece there, they are left to it. */
  written: string;
  writtenAt: number;
  kind: ReadingKind;
}

/** Literals joined in place (on a wide line, or bound to a name at its start), or a builder's appends. */
export type ReadingKind = 'joined' | 'bound' | 'built';
type ReadLine = (text: string, kind: ReadingKind) => string;

function replacedPieces(r: Reading, readLine: ReadLine): Piece[] {
  const redactLine = (text: string): string => readLine(text, r.kind);
  const written = redactLine(r.written);
  if (written !== r.written) {
    const span = changedSpan(r.written, written);
    if (span && r.pieces.some((p) => p.start - r.writtenAt < span[1] && p.end - r.writtenAt > span[0])) return [];
  }
  const after = redactLine(r.text);
  // The joined literal's inside after the rules: the text up to it and after it are as they were, unless a rule changed them too.
  const tailLength = r.text.length - r.at - r.joined.length;
  if (!after.startsWith(r.text.slice(0, r.at)) || !after.endsWith(r.text.slice(r.text.length - tailLength))) {
    // A rule changed the text around the value as well: the value is replaced whole only if its own inside changed.
    return after.includes(r.joined) ? [] : r.pieces;
  }
  const span = changedSpan(r.joined, after.slice(r.at, after.length - tailLength));
  if (!span) return [];
  const out: Piece[] = [];
  let offset = 0;
  for (const p of r.pieces) {
    const from = offset;
    offset += p.inner.length;
    if (from < span[1] && offset > span[0] && p.inner.length > 0) out.push(p);
  }
  return out;
}

/** The readings of literals joined in place: each chain in its line, as one literal. */
function joinedReadings(text: string): Reading[] {
  const out: Reading[] = [];
  for (const m of text.matchAll(JOINED)) {
    const pieces = piecesOf(text, m.index, m.index + m[0].length);
    if (pieces.length < 2) continue;
    const joined = pieces.map((p) => p.inner).join('');
    if (joined.length > MAX_JOINED) continue;
    const first = pieces[0]!;
    const last = pieces.at(-1)!;
    const [ls, le] = lineBounds(text, first.start, last.end);
    const head = text.slice(ls, first.start);
    // A literal quoted in a comment is no piece of a value.
    if (/#|\/\/|^\s*\*/.test(head.slice(0, -1))) continue;
    out.push({
      pieces,
      text: `${head}${joined}${first.quote}${text.slice(last.end + 1, le)}`,
      at: head.length,
      joined,
      written: text.slice(ls, le),
      writtenAt: ls,
      // `NAME = "..." + "..."`: the name the value is given is its context, as a single literal's would be.
      kind: /(?:^|[\s(,])[A-Za-z_][\w.]*\s*(?::[^=\n]{1,40})?=\s*\(?\s*["']$/.test(head) ? 'bound' : 'joined',
    });
  }
  return out;
}

/** The readings of builders' appends: the appended value where the builder's result is bound or returned, else in its own line. */
function appendReadings(text: string): Reading[] {
  const out: Reading[] = [];
  let m: RegExpExecArray | null;
  const re = new RegExp(APPENDS.source, 'g');
  while ((m = re.exec(text)) !== null) {
    const receiver = m[1]!;
    let end = m.index + m[0].length;
    // Successive statements on the same receiver (`sb.append("..");\n sb.append("..");`) continue the value.
    const next = new RegExp(String.raw`^\s*${receiver}((?:\s*\.\s*append\(\s*${LIT}\s*\)\s*;?){1,20})`, 'y');
    for (;;) {
      next.lastIndex = 0;
      const rest = next.exec(text.slice(end, end + 2000));
      if (!rest) break;
      end += rest[0].length;
    }
    re.lastIndex = end;
    const pieces = piecesOf(text, m.index, end);
    if (pieces.length < 2) continue;
    const joined = pieces.map((p) => p.inner).join('');
    if (joined.length > MAX_JOINED) continue;
    const q = pieces[0]!.quote;
    const after = text.slice(end, end + 800);
    const bound = new RegExp(String.raw`(?:([A-Za-z_][\w.]*)\s*=\s*|\b(return)\s+)${receiver}\s*\.\s*toString\(\)`).exec(after);
    let reading: [string, string];
    if (bound?.[1]) reading = [`${bound[1]} = ${q}`, `${q};`];
    else if (bound?.[2]) reading = [`String ${enclosingName(text, m.index) || 'value'}() { return ${q}`, `${q}; }`];
    else reading = [`${receiver}.append(${q}`, `${q});`];
    out.push({
      pieces,
      text: `${reading[0]}${joined}${reading[1]}`,
      at: reading[0].length,
      joined,
      written: text.slice(m.index, end),
      writtenAt: m.index,
      kind: 'built',
    });
  }
  return out;
}

/**
 * Values in pieces across `text`, read whole by `redactLine` (the rules that read one literal, told which kind of reading it is):
 * the pieces that make up what those rules replace become REDACTED; the count is of values so found.
 */
export function redactChains(text: string, redactLine: ReadLine): Redacted {
  if (!/["']\s*(?:\+|\\?\n\s*["']|["'])|\.append\(/.test(text)) return { text, count: 0 };
  const replace = new Map<number, Piece>();
  let count = 0;
  for (const r of [...joinedReadings(text), ...appendReadings(text)]) {
    const found = replacedPieces(r, redactLine);
    if (found.length === 0) continue;
    count++;
    for (const p of found) replace.set(p.start, p);
  }
  if (replace.size === 0) return { text, count: 0 };
  let out = '';
  let from = 0;
  for (const p of [...replace.values()].sort((a, b) => a.start - b.start)) {
    if (p.start < from) continue;
    out += text.slice(from, p.start) + REDACTED;
    from = p.end;
  }
  return { text: out + text.slice(from), count };
}

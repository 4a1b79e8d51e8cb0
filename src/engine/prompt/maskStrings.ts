// String literal values of other files never reach a model as they are: every literal's content is
// replaced by `…` (quotes and prefixes kept: `"…"`, `f'…'`, `"""…"""`), except a value that is short
// and plainly not a credential, in a place that does not say credential.
//
// The rule. A literal, or a run of literals joined by implicit concatenation or `+`, judged as one
// value, is KEPT only when all of these hold:
//   - no auth context: neither the code before it in its statement (from the start of the line of its
//     outermost open bracket, at most 240 characters back: the assigned name, the parameter, the dict
//     key, the call) nor the value itself holds a word of AUTH_STEMS (pass, pwd, secret, token, key,
//     auth, cred, sig, cookie, session, private, bearer, salt, cert, jwt, otp), because a value bound
//     to such a name is a credential whatever it looks like (`"hunter2"`, `("svc", "…")`);
//   - at most 80 characters, not random-looking (secretRules.looksRandom), and not a chosen password's shape
//     (passphraseLike: `Aspen-Vole-90`, words joined by `-`/`_` with a capitalised one and a digit);
//   - one of these shapes: no letter or digit (separators: `", "`, `"\n"`, `"="`); an enum-like word
//     (parts split at `_ . - /` each letters with at most 3 trailing digits, or up to 4 digits:
//     `utf-8`, `x86_64`, `GET`, `python3`; a 32-hex value is not one); a format string or short prose
//     (words of letters, placeholders `%s %(name)d {} {0} {name}`, punctuation: `"Invalid value: %s"`);
//     a path or URL without userinfo (`https://host/api/{v}`, `./data/x.csv`; not `https://u:p@h`).
// Everything else (long text, tokens, keys, connection strings, JDBC URLs with a password, private
// key bodies, base64) is masked: the prompt keeps the code's shape and names, which is what a model
// completing another file's call needs, while a value it would copy is the user's secret.
// Python docstrings (a string alone in its statement) are documentation, not values: they are kept and,
// as comments are, left to the detector (redactGeneric runs over the whole rendered text, see
// renderKnowledge.ts). Java char literals are left alone.
//
// A hand-written lexer rather than tree-sitter: it needs only strings, comments and brackets, is sync
// (the prompt is laid out synchronously), and is robust to text that does not parse (stubs, windows
// cut mid-statement, unterminated literals run to the end of their line, or of the text for triple
// quotes and block comments). docs/BENCHMARKS.md "Compact knowledge renderings" has its cost per
// snippet beside a tree-sitter parse of the same text.
import type { Lang } from '../kb/types';
import { looksRandom, redactGeneric } from './redact';

/** What a masked literal's content becomes. */
export const MASK = '…';

const MAX_KEPT = 80;
const CONTEXT_CHARS = 240;

/** Parts of a word that make the code around a literal (or the literal) an auth context (`apitoken`, `dbpassword`, `authHeader`). */
const AUTH_INFIXES = ['pass', 'pwd', 'secret', 'token', 'auth', 'cred', 'cookie', 'session', 'private', 'bearer'];
/** Word starts that do the same (short stems, which inside a word would be chance: `footprint`). */
const AUTH_STEMS = ['salt', 'jwt', 'otp', 'cert', 'signat'];
/** Whole words (and word endings, for `key`) that do the same. */
const AUTH_WORDS = new Set(['key', 'keys', 'sig', 'sign', 'signed', 'signing', 'pw', 'pem']);

function splitWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Whether `text` holds a word that says credential (`DB_PASSWORD`, `apiKey`, `auth=`, `x-session-id`). */
export function mentionsAuth(text: string): boolean {
  for (const w of splitWords(text)) {
    if (AUTH_WORDS.has(w) || w.endsWith('key') || w.endsWith('keys')) return true;
    for (const s of AUTH_INFIXES) if (w.includes(s)) return true;
    for (const s of AUTH_STEMS) if (w.startsWith(s)) return true;
  }
  return false;
}

const ENUM_PART = /^(?:[A-Za-z]+\d{0,3}|\d{1,4})$/;
const PLACEHOLDER = /%(?:\([\w.]{1,32}\))?[-+ #0]*\d*(?:\.\d+)?[sdifrxXeEgGcoa%]|\{[\w.[\]]{0,32}(?:![rsa])?(?::[^{}]{0,16})?\}/g;

function enumLike(v: string): boolean {
  if (v.length > 40) return false;
  const parts = v.split(/[_.\-/:]+/).filter(Boolean);
  return parts.length > 0 && parts.every((p) => p.length <= 24 && ENUM_PART.test(p));
}

/** Words, placeholders and punctuation: a message or a format string. */
function proseOrFormat(v: string): boolean {
  const rest = v.replace(PLACEHOLDER, ' ');
  const words = rest.split(/[\s,.;:!?()[\]'"`=<>|*+#&-]+/).filter(Boolean);
  return words.every((w) => w.length <= 20 && /^[A-Za-z]+\d{0,2}$|^\d{1,4}$/.test(w));
}

/** A URL without userinfo, or a file path: word-like segments. */
function pathOrUrl(v: string): boolean {
  if (/\s/.test(v)) return false;
  const url = /^[a-z][a-z0-9+.-]{1,15}:\/\/([^/?#]*)(.*)$/i.exec(v);
  let path = v;
  if (url) {
    if ((url[1] ?? '').includes('@')) return false;
    path = `${url[1] ?? ''}${url[2] ?? ''}`;
  } else if (!v.includes('/') && !v.includes('\\')) return false;
  const segments = path.split(/[/\\?&#=.:]+/).filter(Boolean);
  return segments.every((s) => s.length <= 32 && /^(?:[\w~%-]|\{[\w.]*\})+$/.test(s) && (s.length < 16 || !/\d/.test(s)));
}

/**
 * Two or more words joined by `-` or `_`, one of them capitalised among lowercase letters, and a digit (`Aspen-Vole-90`,
 * `Gq7-Larch-Ember`): a chosen password's shape, which a value passed positionally (`connect("app", "Aspen-Vole-90")`) has
 * no name to give away; enum values are lowercase or upper case (`us-east-1`, `ISO-8859-1`) or one word (`Windows-1252`).
 */
export function passphraseLike(v: string): boolean {
  const parts = v.split(/[-_]+/).filter((p) => /[A-Za-z]/.test(p));
  return parts.length >= 2 && /\d/.test(v) && /[a-z]/.test(v) && parts.some((p) => /^[A-Z][a-z]/.test(p));
}

/** Whether a literal's value may stay (the rule in the header). `context`: the code before it in its statement. */
export function keepLiteral(value: string, context: string): boolean {
  if (value.length > MAX_KEPT) return false;
  if (mentionsAuth(context) || mentionsAuth(value)) return false;
  if (!/[\p{L}\p{N}]/u.test(value)) return true;
  if (looksRandom(value) || passphraseLike(value)) return false;
  return enumLike(value) || proseOrFormat(value) || pathOrUrl(value);
}

interface Literal {
  /** Start of the literal (its prefix) and of its content; end of its content and of the literal. */
  start: number;
  contentStart: number;
  contentEnd: number;
  end: number;
  /** A Python string alone in its statement (a docstring). */
  doc: boolean;
}

export interface MaskResult {
  text: string;
  /** Literals whose content was replaced. */
  masked: number;
  /** Literals kept as they are (docstrings included). */
  kept: number;
}

const PY_PREFIX = /^(?:[rRbBuUfF]|[rR][bBfF]|[bBfF][rR])$/;

function isIdent(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c > 127;
}

/** End of a quoted literal whose content starts at `i` (a backslash escapes the next character). Single-line literals end at a newline. */
export function scanQuoted(text: string, i: number, quote: string, triple: boolean): { contentEnd: number; end: number } {
  const n = text.length;
  const q = quote.charCodeAt(0);
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 92) {
      i += 2;
      continue;
    }
    if (c === q) {
      if (!triple) return { contentEnd: i, end: i + 1 };
      if (text.charCodeAt(i + 1) === q && text.charCodeAt(i + 2) === q) return { contentEnd: i, end: i + 3 };
    } else if (c === 10 && !triple) return { contentEnd: i, end: i };
    i++;
  }
  return { contentEnd: Math.min(i, n), end: n };
}

/**
 * Whether a Java `{` after `prev` opens an array or annotation initializer (`= {`, `, {`, `({`, `] {`, `{{` inside one),
 * which is a bracket of its statement, rather than a block.
 */
function javaInitializerOpen(prev: number, opens: readonly number[], text: string): boolean {
  if (prev === 61 || prev === 44 || prev === 40 || prev === 93) return true;
  const top = opens[opens.length - 1];
  return prev === 123 && top !== undefined && text.charCodeAt(top) === 123;
}

/** The literals of `text` and the start of each one's statement context, with brackets and comments skipped. */
function lexLiterals(text: string, lang: Lang): Array<Literal & { contextStart: number }> {
  const out: Array<Literal & { contextStart: number }> = [];
  const n = text.length;
  const opens: number[] = [];
  let lineStart = 0;
  // Python: whether only whitespace precedes on this logical line (a string there may be a docstring).
  let atLineStart = true;
  let i = 0;
  // The last character that was not a blank, a comment or a literal (Java: what a `{` follows).
  let prev = 0;
  const contextStart = (): number => {
    const from = opens.length > 0 ? text.lastIndexOf('\n', opens[0]! - 1) + 1 : lineStart;
    return Math.max(from, i - CONTEXT_CHARS);
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      lineStart = i + 1;
      if (opens.length === 0 && text.charCodeAt(i - 1) !== 92) atLineStart = true;
      i++;
      continue;
    }
    if (c === 32 || c === 9 || c === 13) {
      i++;
      continue;
    }
    if (lang === 'python' && c === 35) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if (lang === 'java' && c === 47 && text.charCodeAt(i + 1) === 47) {
      const nl = text.indexOf('\n', i);
      i = nl < 0 ? n : nl;
      continue;
    }
    if (lang === 'java' && c === 47 && text.charCodeAt(i + 1) === 42) {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 2;
      continue;
    }
    const start = i;
    let quoteAt = -1;
    if (isIdent(c)) {
      let j = i + 1;
      while (j < n && isIdent(text.charCodeAt(j))) j++;
      const next = text.charCodeAt(j);
      if (lang === 'python' && (next === 34 || next === 39) && PY_PREFIX.test(text.slice(i, j))) quoteAt = j;
      else {
        i = j;
        atLineStart = false;
        prev = c;
        continue;
      }
    } else if (c === 34 || (c === 39 && lang === 'python')) quoteAt = i;
    else if (c === 39) {
      // A Java char literal: skipped whole.
      const r = scanQuoted(text, i + 1, "'", false);
      i = r.end > i ? r.end : i + 1;
      atLineStart = false;
      continue;
    }
    if (quoteAt < 0) {
      const top = opens[opens.length - 1];
      const initializer =
        c === 123 ? javaInitializerOpen(prev, opens, text) : c === 125 && top !== undefined && text.charCodeAt(top) === 123;
      if (lang === 'java' && (c === 123 || c === 125) && !initializer) {
        // A Java block's brace starts a new context, as a statement's end does.
        lineStart = i + 1;
      } else if (c === 40 || c === 91 || c === 123) opens.push(i);
      else if ((c === 41 || c === 93 || c === 125) && opens.length > 0) opens.pop();
      if (lang === 'java' && c === 59 && opens.length === 0) lineStart = i + 1;
      atLineStart = false;
      prev = c;
      i++;
      continue;
    }
    const quote = text[quoteAt]!;
    const triple = text.charCodeAt(quoteAt + 1) === quote.charCodeAt(0) && text.charCodeAt(quoteAt + 2) === quote.charCodeAt(0);
    const contentStart = quoteAt + (triple ? 3 : 1);
    const r = scanQuoted(text, contentStart, quote, triple);
    const ctx = contextStart();
    let doc = false;
    if (lang === 'python' && atLineStart && opens.length === 0) {
      // Alone in its statement: nothing but blanks or a comment after it on its line.
      let k = r.end;
      while (k < n && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9 || text.charCodeAt(k) === 13)) k++;
      doc = k >= n || text.charCodeAt(k) === 10 || text.charCodeAt(k) === 35;
    }
    out.push({ start, contentStart, contentEnd: r.contentEnd, end: r.end, doc, contextStart: ctx });
    atLineStart = false;
    prev = 34;
    i = Math.max(r.end, start + 1);
  }
  return out;
}

/** Literals joined into one value: only blanks (newlines inside brackets) or a `+` between them. */
function groups(text: string, lits: ReadonlyArray<Literal & { contextStart: number }>): Array<Array<Literal & { contextStart: number }>> {
  const out: Array<Array<Literal & { contextStart: number }>> = [];
  for (const l of lits) {
    const last = out[out.length - 1];
    const prev = last?.[last.length - 1];
    if (last && prev && !prev.doc && !l.doc && /^\s*\+?\s*$/.test(text.slice(prev.end, l.start))) last.push(l);
    else out.push([l]);
  }
  return out;
}

/**
 * Documentation text through the project's detector as if each line were a comment (its rule for a comment that states a password
 * reads comment lines), so that `the admin password is ...` in a docstring is redacted as it is in a comment.
 */
export function redactDoc(doc: string): string {
  if (doc === '') return doc;
  const r = redactGeneric(doc.replace(/^/gm, '# '));
  return r.count === 0 ? doc : r.text.replace(/^# /gm, '');
}

/** `text` with string literal values masked by the rule in this file's header; docstrings through redactDoc. */
export function maskStrings(text: string, lang: Lang): MaskResult {
  const lits = lexLiterals(text, lang);
  if (lits.length === 0) return { text, masked: 0, kept: 0 };
  let out = '';
  let from = 0;
  let masked = 0;
  let kept = 0;
  for (const group of groups(text, lits)) {
    const first = group[0]!;
    if (first.doc) {
      kept++;
      const doc = text.slice(first.contentStart, first.contentEnd);
      const redacted = redactDoc(doc);
      if (redacted !== doc) {
        out += text.slice(from, first.contentStart) + redacted;
        from = first.contentEnd;
      }
      continue;
    }
    const value = group.map((l) => text.slice(l.contentStart, l.contentEnd)).join('');
    if (keepLiteral(value, text.slice(first.contextStart, first.start))) {
      kept += group.length;
      continue;
    }
    for (const l of group) {
      if (l.contentEnd === l.contentStart) continue;
      out += text.slice(from, l.contentStart) + MASK;
      from = l.contentEnd;
      masked++;
    }
  }
  return { text: out + text.slice(from), masked, kept };
}

// String literal values of other files never reach a model as they are: other files give a model
// their SHAPE (names, calls, structure), not their values. A literal's content is replaced by `…`
// (quotes and prefixes kept: `"…"`, `f'…'`, `"""…"""`) unless its value has a shape that cannot hold
// a credential, whatever language the names around it are in.
//
// The rule. A literal, or a run of literals joined by implicit concatenation or `+`, judged as one
// value, is masked in an auth context: the code before it in its statement (from the start of the line
// of its outermost open bracket, at most 240 characters back: the assigned name, the parameter, the
// dict key, the call) or the value itself holds a word that says credential, English (AUTH_*: pass,
// pwd, secret, token, key, auth, cred, sig, cookie, session, private, bearer, salt, cert, jwt, otp) or
// of another language (secretWords: clave, kennwort, senha, пароль, 密码, ...), because a value bound to
// such a name is a credential whatever it looks like. Longer than 80 characters, random-looking
// (looksRandom) or a chosen password's shape (passphraseLike: `Aspen-Vole-90`), it is masked too.
// Otherwise it is KEPT only in one of these shapes:
//   - no letter or digit (`", "`, `"\n"`, `"="`): a separator holds nothing to copy;
//   - a path or URL without userinfo and without query values (`https://host/api/{v}`, `./data/x.csv`,
//     `?page={n}`; not `https://u:p@h`, not `?sig=...`): its parts are names; a value containing `://`
//     is kept only so, since a connection string or a signed URL is a URL with a value in it;
//   - a format spec: at least one placeholder (`%s`, `%(name)d`, `{}`, `{0}`, `{name}`, `{:.2f}`,
//     `%Y-%m-%d`) among words and punctuation, since what a model copies of it is where values go;
//   - a small fixed vocabulary, anywhere: text encodings (`utf-8`, `latin-1`, `cp1252`), file modes
//     (`rb`, `w+`), HTTP methods, log level names: no one's secret is spelled so;
//   - a one-word enum-like value (`fast`, `eu-west`, `canary-case-3`) only where code compares or
//     returns it or uses it as a key: after `==`/`!=`/`is`/`in (`/`case`/`.equals(`/`startswith(`,
//     before `==`/`!=`/`.equals(`, after `return`/`yield` (not in a lambda's or an anonymous class's
//     body, nor in a function or class whose name says credential), a subscript `x["k"]`, a dict key,
//     the first argument of `.get(`/`.getProperty(`/`.getenv(`/`.pop(`/`.setdefault(`/`.put(` (a
//     setting's name). There a value is what the code tests for or hands back, a name of the program's
//     vocabulary; bound to a name (an assignment, a default or keyword argument, a dict value, a
//     positional argument, an annotation attribute) the same word may be a one-word password.
// Everything else (prose without a placeholder, tokens, keys, connection strings, base64) is masked.
//
// Comments and Python docstrings (a string alone in its statement) are documentation: they are kept,
// except what is key material or a credential in them (maskNotes): a key-shaped line's value (a
// PEM/OpenSSH/PuTTY body line, `Private-Lines:`/`Public-Lines:` and the base64 lines after them,
// `AGE-SECRET-KEY-1...`, WireGuard `PrivateKey =`/`PresharedKey =`, a JWK's private members `"d"`,
// `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"`, `"k"`), a credential-looking token (looksRandom, a JWT part, or
// 20 or more characters of base64/hex with letters and at least 4 digits that is not a name), a URL's
// userinfo password and query values, and what follows a word that says password or secret on its
// line (in any of secretWords' languages) become `…`. The detector (redactGeneric, renderKnowledge.ts)
// then runs over the whole rendered text. Java char literals are left alone, but for an array of four
// or more (a string written a character at a time).
//
// A hand-written lexer rather than tree-sitter: it needs only strings, comments and brackets, is sync
// (the prompt is laid out synchronously), and is robust to text that does not parse (stubs, windows
// cut mid-statement, unterminated literals run to the end of their line, or of the text for triple
// quotes and block comments). One pass finds literals and comments; every regex below runs on one
// literal, one line or a bounded window, so the cost stays linear. docs/BENCHMARKS.md "Compact
// knowledge renderings" has its cost per snippet beside a tree-sitter parse of the same text.
import type { Lang } from '../kb/types';
import { looksRandom, redactGeneric } from './redact';
import { CHAR_LIT } from './secretPatterns';
import { INTL_SECRET_ALTERNATION, saysSecretIntl } from './secretWords';

/** What a masked literal's content becomes. */
const MASK = '…';

const MAX_KEPT = 80;
const CONTEXT_CHARS = 240;
/** How far back a `return` looks for the function, lambda or class it is in. */
const ENCLOSING_CHARS = 300;
/** How far back it looks for its function's header (a function with a long docstring). */
const HEADER_CHARS = 3000;

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

/** Whether `text` holds a word that says credential (`DB_PASSWORD`, `apiKey`, `auth=`, `x-session-id`, `clave`, `пароль`, `密码`). */
function mentionsAuth(text: string): boolean {
  for (const w of splitWords(text)) {
    if (AUTH_WORDS.has(w) || w.endsWith('key') || w.endsWith('keys')) return true;
    for (const s of AUTH_INFIXES) if (w.includes(s)) return true;
    for (const s of AUTH_STEMS) if (w.startsWith(s)) return true;
  }
  return saysSecretIntl(text);
}

const ENUM_PART = /^(?:[A-Za-z]+\d{0,3}|\d{1,4})$/;
const PLACEHOLDER =
  /%(?:\([\w.]{1,32}\))?[-+ #0]*\d*(?:\.\d+)?[sdifrxXeEgGcoa%]|%[AbBHIjmMpSUwWyYzZ]|\{[\w.[\]]{0,32}(?:![rsa])?(?::[^{}]{0,16})?\}/g;
const ONE_PLACEHOLDER = new RegExp(`^(?:${PLACEHOLDER.source})$`);

function enumLike(v: string): boolean {
  if (v.length > 40) return false;
  const parts = v.split(/[_.\-/:]+/).filter(Boolean);
  return parts.length > 0 && parts.every((p) => p.length <= 24 && ENUM_PART.test(p));
}

/** A format spec: at least one placeholder, otherwise words and punctuation (`"Invalid value: %s"`, `"%Y-%m-%d"`, `"{:.2f}"`). */
function formatSpec(v: string): boolean {
  const rest = v.replace(PLACEHOLDER, ' ');
  if (rest === v) return false;
  const words = rest.split(/[\s,.;:!?()[\]'"`=<>|*+#&/-]+/).filter(Boolean);
  return words.every((w) => w.length <= 20 && /^\p{L}+\d{0,2}$|^\d{1,4}$/u.test(w));
}

/** Text encodings, file modes, HTTP methods and log levels: names no credential is spelled as. */
const VOCABULARY = new RegExp(
  `^(?:${[
    // text encodings
    'utf-?(?:7|8|16|32)(?:-?(?:le|be|sig))?|u8|(?:us-)?ascii|latin-?[1-9]|l[1-9]|iso-?8859-\\d{1,2}|iso-?646|windows-125\\d|cp-?\\d{3,5}',
    'big5|gbk|gb2312|gb18030|shift-?jis|sjis|euc-?(?:jp|kr)|koi8-?[ru]|mac-?roman',
    // file modes
    '[rwax][bt]?\\+?|[rwax]\\+[bt]|[bt][rwax]\\+?',
    // HTTP methods
    'get|post|put|patch|delete|head|options|trace|connect',
    // log levels
    'debug|info|warn|warning|error|critical|fatal|notset|severe|fine|finer|finest|config|off|all',
  ].join('|')})$`,
  'i',
);

function vocabulary(v: string): boolean {
  return v.length <= 16 && VOCABULARY.test(v.replace(/_/g, '-'));
}

/** A query or fragment part (`k=v&k2=v2`) with every value empty or a placeholder. */
function emptyQuery(q: string): boolean {
  for (const pair of q.split('&')) {
    const eq = pair.indexOf('=');
    const value = eq < 0 ? '' : pair.slice(eq + 1);
    if (value !== '' && !ONE_PLACEHOLDER.test(value) && !/^\$\{\w+\}$|^<\w+>$/.test(value)) return false;
  }
  return true;
}

/** Path or URL segments that read as names: word-like, not long with digits, not random-looking. */
function wordSegments(path: string): boolean {
  const segments = path.split(/[/\\.:]+/).filter(Boolean);
  return segments.every(
    (s) => s.length <= 32 && /^(?:[\w~%-]|\{[\w.]*\})+$/.test(s) && (s.length < 16 || !/\d/.test(s)) && !looksRandom(s),
  );
}

/** A URL without userinfo and query values, or a file path: word-like segments. */
function pathOrUrl(v: string): boolean {
  if (/\s/.test(v)) return false;
  const url = /^[a-z][a-z0-9+.-]{1,15}:\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/i.exec(v);
  if (url) {
    if ((url[1] ?? '').includes('@')) return false;
    if (!emptyQuery(url[3] ?? '') || ((url[4] ?? '').includes('=') && !emptyQuery(url[4] ?? ''))) return false;
    return wordSegments(`${url[1] ?? ''}${url[2] ?? ''}`);
  }
  if (v.includes('://')) return false;
  const q = v.indexOf('?');
  const path = q < 0 ? v : v.slice(0, q);
  if (q >= 0 && !emptyQuery(v.slice(q + 1))) return false;
  // A path by its form: rooted, relative, home, a drive, two separators, or a file name's extension (`Etc/GMT-5` is not one).
  const separators = (path.match(/[/\\]/g) ?? []).length;
  if (separators === 0) return false;
  const pathy = /^(?:\/|\.{1,2}[/\\]|~|[A-Za-z]:[/\\]|\\\\)/.test(path) || separators >= 2 || /\.[A-Za-z][A-Za-z0-9]{0,4}$/.test(path);
  return pathy && wordSegments(path);
}

/**
 * Two or more words joined by `-` or `_`, one of them capitalised among lowercase letters, and a digit (`Aspen-Vole-90`,
 * `Gq7-Larch-Ember`): a chosen password's shape, which a value passed positionally (`connect("app", "Aspen-Vole-90")`) has
 * no name to give away; enum values are lowercase or upper case (`us-east-1`, `ISO-8859-1`) or one word (`Windows-1252`).
 */
function passphraseLike(v: string): boolean {
  const parts = v.split(/[-_]+/).filter((p) => /[A-Za-z]/.test(p));
  return parts.length >= 2 && /\d/.test(v) && /[a-z]/.test(v) && parts.some((p) => /^[A-Z][a-z]/.test(p));
}

/**
 * What code does with a literal: `value` where it binds it (an assignment, an argument, a dict value), `compared` where it
 * compares or returns it or uses it as a key (the places an enum-like word is kept, see the header).
 */
type LiteralRole = 'value' | 'compared';

/** Whether a literal's value may stay (the rule in the header). `context`: the code before it in its statement. */
function keepLiteral(value: string, context: string, role: LiteralRole = 'value'): boolean {
  return keepReason(value, context, role) !== undefined;
}

/** The shape a kept literal has (the header's list), or undefined when it is masked. */
function keepReason(value: string, context: string, role: LiteralRole = 'value'): string | undefined {
  if (value.length > MAX_KEPT) return undefined;
  if (mentionsAuth(context) || mentionsAuth(value)) return undefined;
  if (!/[\p{L}\p{N}]/u.test(value)) return 'separator';
  if (vocabulary(value)) return 'vocabulary';
  if (looksRandom(value) || passphraseLike(value)) return undefined;
  if (value.includes('://')) return pathOrUrl(value) ? 'path or URL' : undefined;
  if (pathOrUrl(value)) return 'path or URL';
  if (formatSpec(value)) return 'format spec';
  return role === 'compared' && enumLike(value) ? 'compared, returned or a key' : undefined;
}

interface KeptText {
  kind: 'literal' | 'comment' | 'docstring';
  text: string;
  reason: string;
}

/** What of `text` (another file's code as a prompt shows it) stays as written: each kept literal with its shape, each comment line. */
export function keptText(text: string, lang: Lang): KeptText[] {
  const { literals, comments } = lexLiterals(text, lang);
  const out: KeptText[] = [];
  for (const group of groups(text, literals)) {
    const first = group[0]!;
    const last = group[group.length - 1]!;
    if (first.doc) {
      for (const line of text.slice(first.contentStart, first.contentEnd).split('\n'))
        if (line.trim() !== '') out.push({ kind: 'docstring', text: line.trim(), reason: 'documentation, through the detector' });
      continue;
    }
    const value = group.map((l) => text.slice(l.contentStart, l.contentEnd)).join('');
    if (value.replaceAll(MASK, '') === '') continue;
    const reason = keepReason(value, text.slice(first.contextStart, first.start), roleOf(text, first, last, lang));
    if (reason !== undefined) out.push({ kind: 'literal', text: value, reason });
  }
  for (const k of comments)
    for (const line of text.slice(k.start, k.end).split('\n'))
      if (line.trim() !== '') out.push({ kind: 'comment', text: line.trim(), reason: 'documentation, through the detector' });
  return out;
}

interface Literal {
  /** Start of the literal (its prefix) and of its content; end of its content and of the literal. */
  start: number;
  contentStart: number;
  contentEnd: number;
  end: number;
  /** A Python string alone in its statement (a docstring). */
  doc: boolean;
  /** Start of its statement context. */
  contextStart: number;
  /** The innermost bracket open around it (-1: none). */
  open: number;
}

/** A comment's text without its markers (`#`, `//`, `/*`, `*\/`), and with them. */
interface Comment {
  start: number;
  end: number;
  outerStart: number;
  outerEnd: number;
}

interface MaskResult {
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

/** The literals of `text` with the start of each one's statement context and its innermost bracket, and its comments. */
function lexLiterals(text: string, lang: Lang): { literals: Literal[]; comments: Comment[] } {
  const out: Literal[] = [];
  const comments: Comment[] = [];
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
    if ((lang === 'python' && c === 35) || (lang === 'java' && c === 47 && text.charCodeAt(i + 1) === 47)) {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? n : nl;
      comments.push({ start: i + (c === 35 ? 1 : 2), end, outerStart: i, outerEnd: end });
      i = end;
      continue;
    }
    if (lang === 'java' && c === 47 && text.charCodeAt(i + 1) === 42) {
      const close = text.indexOf('*/', i + 2);
      comments.push({ start: i + 2, end: close < 0 ? n : close, outerStart: i, outerEnd: close < 0 ? n : close + 2 });
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
    // An unterminated triple-quoted string (a window cut inside a docstring reads its end as an opening) is a value, not documentation.
    if (lang === 'python' && atLineStart && opens.length === 0 && !(triple && r.contentEnd === r.end)) {
      // Alone in its statement: nothing but blanks or a comment after it on its line.
      let k = r.end;
      while (k < n && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 9 || text.charCodeAt(k) === 13)) k++;
      doc = k >= n || text.charCodeAt(k) === 10 || text.charCodeAt(k) === 35;
    }
    const open = opens[opens.length - 1] ?? -1;
    out.push({ start, contentStart, contentEnd: r.contentEnd, end: r.end, doc, contextStart: ctx, open });
    atLineStart = false;
    prev = 34;
    i = Math.max(r.end, start + 1);
  }
  return { literals: out, comments };
}

/** Literals joined into one value: only blanks (newlines inside brackets) or a `+` between them. */
function groups(text: string, lits: readonly Literal[]): Literal[][] {
  const out: Literal[][] = [];
  for (const l of lits) {
    const last = out[out.length - 1];
    const prev = last?.[last.length - 1];
    if (last && prev && !prev.doc && !l.doc && /^\s*\+?\s*$/.test(text.slice(prev.end, l.start))) last.push(l);
    else out.push([l]);
  }
  return out;
}

/** Before a literal, what makes it compared or returned (`== "a"`, `case "a"`, `case "a", "b"`). */
const COMPARED_AFTER = /(?:[=!]==?|(?:^|[^\w$])(?:is|not)|(?:^|[^\w$])case(?:\s+"[^"\n]{0,40}"\s*,)*)$/;
const RETURNED_AFTER = /(?:^|[^\w$.])(?:return|yield)$/;
/** The call a bracket opens whose arguments are compared with (`.equals(`, `startswith((`). */
const COMPARING_CALL = /(?:\.equals(?:IgnoreCase)?|(?:starts|ends)with|\.(?:starts|ends)With|\.equals)\s*\(?$/;
/** The call whose first argument is a setting's or an entry's name (its default, the second argument, stays masked). */
const NAMING_CALL = /(?:\.get|\.getProperty|\.getenv|(?:^|[^\w$.])getenv|\.pop|\.setdefault|\.put)$/;
const JAVA_KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'synchronized', 'try', 'return', 'new']);

/**
 * Whether a `return` at `at` is in a lambda's body, an anonymous class, or a function or class whose name says credential (a
 * getter of a password hands back a value, not a name of the program's vocabulary), or in one whose header is not in sight.
 */
function returnsValue(text: string, at: number, lang: Lang): boolean {
  const window = text.slice(Math.max(0, at - ENCLOSING_CHARS), at);
  // The function's header may lie further back than the lambda or class around the return (a long docstring).
  const header = text.slice(Math.max(0, at - HEADER_CHARS), at);
  let names: string[] = [];
  if (lang === 'python') {
    const defs = [...header.matchAll(/\bdef\s+([\p{L}_][\p{L}\p{N}_]*)/gu)].map((m) => m[1]!);
    const classes = [...header.matchAll(/\bclass\s+([\p{L}_][\p{L}\p{N}_]*)/gu)].map((m) => m[1]!);
    // A window cut below its function's header cannot tell whose value it returns.
    if (defs.length === 0) return true;
    names = [...defs.slice(-1), ...classes.slice(-1)];
  } else {
    // The innermost open block: a lambda's (`-> {`) returns a supplier's value.
    let depth = 0;
    for (let k = window.length - 1; k >= 0; k--) {
      const ch = window.charCodeAt(k);
      if (ch === 125) depth++;
      else if (ch === 123 && depth-- === 0) {
        if (/->\s*$/.test(window.slice(Math.max(0, k - 8), k))) return true;
        break;
      }
    }
    if (/\bnew\s+[\w.$]+(?:<[^<>\n]{0,60}>)?\s*\([^()\n]{0,80}\)\s*\{/.test(window)) return true;
    const methods = [...header.matchAll(/([\p{L}_$][\p{L}\p{N}_$]*)\s*\([^()]{0,200}\)\s*(?:throws\s[^{};]{0,80})?\{/gu)]
      .map((m) => m[1]!)
      .filter((m) => !JAVA_KEYWORDS.has(m));
    const types = [...header.matchAll(/\b(?:class|interface|enum|record)\s+([\p{L}_$][\p{L}\p{N}_$]*)/gu)].map((m) => m[1]!);
    if (methods.length === 0) return true;
    names = [...methods.slice(-1), ...types.slice(-1)];
  }
  return names.some(mentionsAuth);
}

/** The start of the blanks just before `at` (what precedes a literal, found without reading its whole bracket). */
function blanksBack(text: string, at: number): number {
  let k = at;
  while (k > 0 && /\s/.test(text[k - 1]!)) k--;
  return k;
}

/** Whether the `switch` or `match` a `case` at `at` belongs to tests a credential (`switch (password)`). */
function switchesOnCredential(text: string, at: number): boolean {
  const window = text.slice(Math.max(0, at - ENCLOSING_CHARS), at);
  const subject = [...window.matchAll(/\b(?:switch\s*\(([^()\n]{0,80})\)|match\s+([^\n:]{1,80}):)/g)].at(-1);
  return subject !== undefined && mentionsAuth(subject[1] ?? subject[2] ?? '');
}

/** A class's name, module-qualified or nested (`Cart`, `models.Cart.Line`). */
const TYPE_NAME = /^(?:[A-Za-z_]\w*\.)*[A-Z]\w*$/;

function valueOf(text: string, lit: Literal, last: Literal): string {
  return lit === last ? text.slice(lit.contentStart, lit.contentEnd) : text.slice(lit.contentStart, last.contentEnd);
}

/** What code does with a literal group (first `lit`, last `last`): the shapes of the header's last kept case. */
function roleOf(text: string, lit: Literal, last: Literal, lang: Lang): LiteralRole {
  const before = text.slice(Math.max(lit.contextStart, lit.start - 120), lit.start).trimEnd();
  const lineEnd = text.indexOf('\n', last.end);
  const after = text.slice(last.end, Math.min(lineEnd < 0 ? text.length : lineEnd, last.end + 160));
  // A Python forward reference (`-> "Cart"`, `(cart: "Cart")`, `line: "Cart.Line"`) is a type's name.
  if (lang === 'python' && /(?:->|:)$/.test(before) && (lit.open < 0 || text[lit.open] === '(') && TYPE_NAME.test(valueOf(text, lit, last)))
    return 'compared';
  if (COMPARED_AFTER.test(before)) return /(?:^|[^\w$])case\b/.test(before) && switchesOnCredential(text, lit.start) ? 'value' : 'compared';
  if (RETURNED_AFTER.test(before)) return returnsValue(text, lit.start, lang) ? 'value' : 'compared';
  // `"a".equals(x)`, `"a" == x`: the other side says whether it is a credential's test.
  if (/^\s*(?:[=!]==?|\.equals(?:IgnoreCase)?\()/.test(after)) return mentionsAuth(after) ? 'value' : 'compared';
  if (lit.open < 0) return 'value';
  const bracket = text[lit.open];
  const head = text.slice(Math.max(0, lit.open - 40), lit.open).trimEnd();
  const first = blanksBack(text, lit.start) === lit.open + 1;
  if (/(?:^|[^\w$])in$/.test(head)) return 'compared';
  if (bracket === '(' && COMPARING_CALL.test(head)) return 'compared';
  if (bracket === '(' && first && NAMING_CALL.test(head)) return 'compared';
  if (bracket === '[' && first && /[\w$)\]]$/.test(head) && /^\s*\]/.test(after)) return 'compared';
  const prev = text[blanksBack(text, lit.start) - 1];
  if (bracket === '{' && lang === 'python' && /^\s*:/.test(after) && (prev === '{' || prev === ',')) return 'compared';
  return 'value';
}

// ---- comments and docstrings -------------------------------------------------------------------

/** What a run of comment and docstring lines carries from one line to the next. */
interface NoteState {
  /** Inside a PEM or OpenSSH block (between `-----BEGIN` and `-----END`). */
  pem: boolean;
  /** Base64 lines still to come of a PuTTY key's `Private-Lines:` / `Public-Lines:`. */
  putty: number;
  /** The last line ended in a JWT part and a `.`: the next line's first token continues it. */
  jwt: boolean;
  /** The last line ended with a word that says password and a `:` or `=`: the next line states it. */
  pending: boolean;
}

const BASE64_LINE = /^[A-Za-z0-9+/]+={0,2}$/;
/**
 * A line of key material on its own: base64 of 40 characters or more, or a shorter run that mixes upper and lower case with
 * digits or runs of capitals and is not a name (a key's last line, `AAAAgQDX9lkz`, `QyNTUxOQAAACDx`).
 */
function keyLine(t: string): boolean {
  if (t.length < 8 || !BASE64_LINE.test(t)) return false;
  if (t.length >= 40) return /[\d+/]/.test(t);
  return /[A-Z]/.test(t) && /[a-z]/.test(t) && (/\d/.test(t) || (t.length >= 12 && /[A-Z]{3}/.test(t))) && !nameLike(t);
}

/** Words of a comment that say a value follows: a password, a secret, a credential (English; secretWords' for the rest). */
const NOTE_TERMS = new RegExp(
  `(?:pass(?:words?|wd|phrase|code)|pwd|secrets?|credentials?|api[ _-]?keys?|tokens?(?=\\s*[:=])|${INTL_SECRET_ALTERNATION})`,
  'giu',
);
const UNSPACED_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Where a word that says password or secret ends on `line` (-1: none); a Latin or Cyrillic word must stand alone. */
function noteTermEnd(line: string): number {
  if (!/pass|pwd|secret|credential|api.?key|token/i.test(line) && !saysSecretIntl(line)) return -1;
  NOTE_TERMS.lastIndex = 0;
  const letter = (ch: string | undefined) => ch !== undefined && /[\p{L}\p{N}]/u.test(ch);
  for (let m = NOTE_TERMS.exec(line); m; m = NOTE_TERMS.exec(line)) {
    const end = m.index + m[0].length;
    if (UNSPACED_SCRIPT.test(m[0]) || (!letter(line[m.index - 1]) && !letter(line[end]))) return end;
  }
  return -1;
}

/** A name rather than a value: parts of letters with a few digits (`test_parse_utf8_2023`, `x86_64`). */
function nameLike(t: string): boolean {
  const parts = t.split(/[_\-./]+/).filter(Boolean);
  return parts.length >= 2 && parts.every((p) => ENUM_PART.test(p));
}

/** A token that looks like a credential (the header's rule for comments and docstrings). */
function credentialToken(t: string): boolean {
  if (t.length < 10) return false;
  if (/^eyJ[A-Za-z0-9_-]{8,}/.test(t)) return true;
  if (looksRandom(t)) return true;
  if (t.length < 20 || !/^[A-Za-z0-9+/=_-]+$/.test(t) || !/[A-Za-z]/.test(t)) return false;
  let digits = 0;
  for (let k = 0; k < t.length && digits < 4; k++) if (t.charCodeAt(k) >= 48 && t.charCodeAt(k) <= 57) digits++;
  return digits >= 4 && !nameLike(t);
}

/** A URL's or path's credential parts masked: the userinfo's password (or a token as userinfo), query and fragment values. */
function maskUrl(u: string): string {
  const m = /^([a-z][a-z0-9+.-]{1,15}:\/\/)([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i.exec(u);
  const segment = (s: string) => s.replace(/[^/\\.:]+/g, (p) => (credentialToken(p) ? MASK : p));
  const query = (q: string) =>
    q.replace(/([?&#][^=&#]*=)([^&#]*)/g, (all, k: string, v: string) =>
      v === '' || ONE_PLACEHOLDER.test(v) || /^\$\{\w+\}$|^<\w+>$/.test(v) ? all : `${k}${MASK}`,
    );
  if (!m) {
    const q = u.indexOf('?');
    return q < 0 ? segment(u) : segment(u.slice(0, q)) + query(u.slice(q));
  }
  let host = m[2] ?? '';
  const at = host.lastIndexOf('@');
  if (at >= 0) {
    const user = host.slice(0, at);
    const colon = user.indexOf(':');
    host = `${colon < 0 ? MASK : `${user.slice(0, colon)}:${MASK}`}${host.slice(at)}`;
  }
  return `${m[1]}${host}${segment(m[3] ?? '')}${query(m[4] ?? '')}${query(m[5] ?? '')}`;
}

/** Each credential-looking token of `text` (one line of a note) as `…`; URLs and paths keep their names. */
function maskTokens(text: string, state: NoteState): string {
  return text.replace(/\S+/g, (word) => {
    const lead = /^[("'`<[{]*/.exec(word)![0];
    const trail = /[)"'`>\]},;.!?]*$/.exec(word.slice(lead.length))![0];
    const core = word.slice(lead.length, word.length - trail.length);
    const continues = state.jwt;
    state.jwt = false;
    if (core === '') return word;
    if (continues && /^[A-Za-z0-9_-]{8,}$/.test(core)) {
      state.jwt = trail.startsWith('.');
      return `${lead}${MASK}${trail}`;
    }
    if (core.includes('://') || /^(?:\.{0,2}\/|~\/)/.test(core)) return `${lead}${maskUrl(core)}${trail}`;
    if (credentialToken(core)) {
      state.jwt = /^eyJ/.test(core) && trail.startsWith('.');
      return `${lead}${MASK}${trail}`;
    }
    // `sig=...`, `token:...`: the value after a name.
    const sep = core.search(/[=:]/);
    if (sep > 0 && credentialToken(core.slice(sep + 1).replace(/^[=:]+/, ''))) return `${lead}${core.slice(0, sep + 1)}${MASK}${trail}`;
    return word;
  });
}

/** `body` with what follows `from` replaced by `…` (the blanks and separators after it kept). */
function maskFrom(body: string, from: number): string {
  const sep = /^[\s:：=—–>-]*/.exec(body.slice(from))![0];
  const end = body.trimEnd().length;
  return /[\p{L}\p{N}]/u.test(body.slice(from + sep.length))
    ? `${body.slice(0, from + sep.length)}${MASK}${body.slice(Math.max(end, from + sep.length))}`
    : body;
}

/** One line of a comment or docstring with its key material and credentials masked (the header's rule). */
function maskNoteLine(line: string, state: NoteState): string {
  const lead = /^[ \t]*(?:[*#]+(?!\/)[ \t]*)?/.exec(line)![0];
  let body = line.slice(lead.length);
  const trimmed = body.trimEnd();
  if (trimmed === '') return line;
  if (state.pem) {
    if (/^-----END /.test(trimmed)) {
      state.pem = false;
      return line;
    }
    if (BASE64_LINE.test(trimmed) || /^(?:Proc-Type|DEK-Info|Comment):/.test(trimmed)) return `${lead}${MASK}`;
    state.pem = false;
  }
  if (state.putty > 0) {
    if (BASE64_LINE.test(trimmed)) {
      state.putty--;
      return `${lead}${MASK}`;
    }
    state.putty = 0;
  }
  if (state.pending) {
    state.pending = false;
    return `${lead}${MASK}`;
  }
  const begin = /^(?:.*?)-----BEGIN [A-Z0-9 ]{1,40}-----/.exec(trimmed);
  if (begin) {
    state.pem = true;
    const rest = trimmed.slice(begin[0].length);
    return rest.trim() === '' ? line : `${lead}${body.slice(0, begin[0].length)}${MASK}`;
  }
  const putty = /^(?:Private|Public)-Lines\s*:\s*(\d*)/i.exec(trimmed);
  if (putty) {
    state.putty = Math.min(Number(putty[1] ?? 0) || 64, 256);
    return `${lead}${maskFrom(body, body.indexOf(':') + 1)}`;
  }
  if (/^(?:Private-MAC|PrivateKey|PresharedKey)\s*[:=]/i.test(trimmed)) return `${lead}${maskFrom(body, body.search(/[:=]/) + 1)}`;
  if (keyLine(trimmed)) return `${lead}${MASK}`;
  body = body.replace(/AGE-SECRET-KEY-1[0-9A-Za-z]*/gi, MASK);
  // A JWK's private members, in JSON or a Python dict.
  body = body.replace(/(["'])(d|p|q|dp|dq|qi|k)\1(\s*:\s*)(["'])[^"'\n]*\4/g, (_all, q: string, k: string, s: string, v: string) => {
    return `${q}${k}${q}${s}${v}${MASK}${v}`;
  });
  const term = noteTermEnd(body);
  if (term >= 0) {
    // A line that says password: its quoted values and what follows the word.
    body = body.slice(0, term).replace(/(["'`])[^"'`\n]+\1/g, `$1${MASK}$1`) + body.slice(term);
    const masked = maskFrom(body, term);
    if (masked === body && /^[\s]*[:=：]\s*$/.test(body.slice(term))) state.pending = true;
    body = masked;
  }
  return `${lead}${maskTokens(body, state)}`;
}

/**
 * Code outside literals and comments with key material and credential-looking tokens masked (`lineStart`: it starts a line):
 * a window cut inside a docstring shows the rest of the docstring as code. Names, numbers and punctuation stay as they are.
 */
function maskCodeText(code: string, state: NoteState, lineStart: boolean): string {
  const lines = code.split('\n');
  let changed = false;
  for (let k = 0; k < lines.length; k++) {
    const line = lines[k]!;
    const whole = (k > 0 || lineStart) && k < lines.length - 1;
    const trimmed = line.trim();
    let shown = line;
    if (whole && trimmed !== '' && (state.pem || state.putty > 0 || /^-----BEGIN /.test(trimmed))) shown = maskNoteLine(line, state);
    else if (whole && keyLine(trimmed)) shown = line.replace(trimmed, MASK);
    else if (/[A-Za-z0-9+/_=-]{10}/.test(line)) {
      shown = line.replace(/AGE-SECRET-KEY-1[0-9A-Za-z]*/gi, MASK).replace(/[A-Za-z0-9+/_=.-]{10,}/g, (t) => {
        const parts = t.split('.');
        return parts.map((p) => (p !== '' && (credentialToken(p) || (state.jwt && /^[A-Za-z0-9_-]{8,}$/.test(p))) ? MASK : p)).join('.');
      });
    }
    if (shown !== line) {
      lines[k] = shown;
      changed = true;
    }
  }
  return changed ? lines.join('\n') : code;
}

/** A comment's or docstring's text with its key material and credentials masked, line by line (`state` runs on across notes). */
function maskNotes(text: string, state: NoteState = { pem: false, putty: 0, jwt: false, pending: false }): string {
  if (text === '') return text;
  return text
    .split('\n')
    .map((l) => maskNoteLine(l, state))
    .join('\n');
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

/**
 * A docstring's lines that read as code holding a literal (`login("bot", "…")`, `>>> f(x="…")`) with their values masked as code's are:
 * an example in documentation is code, and a window cut inside a docstring shows the code after it as a docstring.
 */
function docValues(doc: string, lang: Lang): string {
  if (!/[=(,][ \t]*[rRbBuUfF]{0,2}["']/.test(doc)) return doc;
  return doc
    .split('\n')
    .map((line) => {
      if (!/[=(,][ \t]*[rRbBuUfF]{0,2}["']/.test(line)) return line;
      const { literals } = lexLiterals(line, lang);
      let out = '';
      let from = 0;
      for (const l of literals) {
        const value = line.slice(l.contentStart, l.contentEnd);
        if (l.contentEnd === l.contentStart || keepLiteral(value, line.slice(l.contextStart, l.start), roleOf(line, l, l, lang))) continue;
        out += line.slice(from, l.contentStart) + MASK;
        from = l.contentEnd;
      }
      return out + line.slice(from);
    })
    .join('\n');
}

/** `text` with string values masked by the rule in this file's header; comments through maskNotes, docstrings through it and redactDoc. */
export function maskStrings(text: string, lang: Lang): MaskResult {
  const { literals, comments } = lexLiterals(text, lang);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  let masked = 0;
  let kept = 0;
  const state: NoteState = { pem: false, putty: 0, jwt: false, pending: false };
  const note = (start: number, end: number, doc: boolean) => {
    const raw = text.slice(start, end);
    const shown = doc ? redactDoc(maskNotes(docValues(raw, lang), state)) : maskNotes(raw, state);
    if (shown !== raw) edits.push({ start, end, text: shown });
  };
  // Code between literals and comments: text cut out of a file (a window) may start inside a docstring, which then reads as code.
  let pos = 0;
  const code = (end: number) => {
    if (end > pos) {
      const raw = text.slice(pos, end);
      const shown = maskCodeText(raw, state, pos === 0 || text.charCodeAt(pos - 1) === 10);
      if (shown !== raw) edits.push({ start: pos, end, text: shown });
    }
  };
  let c = 0;
  const commentsBefore = (at: number) => {
    for (; c < comments.length && comments[c]!.start < at; c++) {
      const k = comments[c]!;
      code(k.outerStart);
      note(k.start, k.end, false);
      pos = k.outerEnd;
    }
  };
  for (const group of groups(text, literals)) {
    const first = group[0]!;
    const last = group[group.length - 1]!;
    // Comments before this literal, in order (a key's state runs from one line to the next).
    commentsBefore(first.start);
    code(first.start);
    pos = last.end;
    if (first.doc) {
      kept++;
      note(first.contentStart, first.contentEnd, true);
      continue;
    }
    const value = group.map((l) => text.slice(l.contentStart, l.contentEnd)).join('');
    if (keepLiteral(value, text.slice(first.contextStart, first.start), roleOf(text, first, last, lang))) {
      kept += group.length;
      continue;
    }
    for (const l of group) {
      if (l.contentEnd === l.contentStart) continue;
      edits.push({ start: l.contentStart, end: l.contentEnd, text: MASK });
      masked++;
    }
  }
  commentsBefore(text.length + 1);
  code(text.length);
  edits.sort((a, b) => a.start - b.start);
  let out = '';
  let from = 0;
  for (const e of edits) {
    out += text.slice(from, e.start) + e.text;
    from = e.end;
  }
  out += text.slice(from);
  // A string written a character or a byte at a time (`char[] PW = {'t', '0', ...}`, `bytes([0x6b, 0x75, ...])`): each goes.
  const pieces = maskCharArrays(out, lang);
  return { text: pieces.text, masked: masked + pieces.masked, kept };
}

/** Four or more char literals after an initializer's brace (its end may be cut off: a snippet shortened). */
const CHAR_ARRAY = new RegExp(String.raw`\{(?:\s*${CHAR_LIT}\s*,){3,}\s*(?:${CHAR_LIT})?`, 'g');
const ONE_CHAR = new RegExp(CHAR_LIT, 'g');
/** A byte's value, in hex or decimal. */
const BYTE_VALUE = String.raw`(?:0[xX][0-9a-fA-F]{1,2}|\d{1,3})`;
const ONE_BYTE = new RegExp(String.raw`\b${BYTE_VALUE}\b`, 'g');
/** Eight or more byte values given to `bytes([...])`, `bytearray([...])` or `new byte[] {...}`. */
const BYTE = String.raw`\s*(?:\(byte\)\s*)?${BYTE_VALUE}`;
const BYTE_LIST = new RegExp(String.raw`(?:\b(?:bytes|bytearray)\(\s*\[|\bnew\s+byte\s*\[\s*\]\s*\{)(?:${BYTE}\s*,){7,}(?:${BYTE})?`, 'g');

/** Each `item` inside the runs `run` finds becomes `shown`; how many did. */
function maskRuns(text: string, run: RegExp, item: RegExp, shown: string): { text: string; masked: number } {
  let masked = 0;
  const out = text.replace(run, (r) =>
    r.replace(item, () => {
      masked++;
      return shown;
    }),
  );
  return { text: out, masked };
}

function maskCharArrays(text: string, lang: Lang): { text: string; masked: number } {
  const bytes = maskRuns(text, BYTE_LIST, ONE_BYTE, MASK);
  if (lang !== 'java') return bytes;
  const chars = maskRuns(bytes.text, CHAR_ARRAY, ONE_CHAR, `'${MASK}'`);
  return { text: chars.text, masked: bytes.masked + chars.masked };
}

// The project's own rules for credentials written in generic forms, the ones no token-format
// scanner can know: a string literal bound to a name, key, property or header whose name says
// secret (assignment, annotated assignment, dict/map key, environment variable, properties call,
// keyword argument, the tuple given to `auth`), URL userinfo, `Bearer`/`Basic` values, comments
// that state a password, config lines (.properties, YAML, .env, connection strings) and random
// literals. Known token formats (AWS, GitHub, Slack, OpenAI ...) are secretlint's (redact.ts); a
// few prefixes it only knows in a stricter shape are kept here. Pure and synchronous.
// Second round (test/fixtures/secrets-v2, BENCHMARKS "Secret redaction"): secretlint's presets have
// no rule for the forms below (the canary preset's last 11.x release, 11.2.4, has the recommended
// preset's rule list; @secretlint/secretlint-rule-pattern only hosts one's own regexes), so these are
// hand-written, each for a form that reached the model on the v2 dev part (27.9% recall before):
// literal chains and parenthesised values, connection-string / SAS / .npmrc keys, netrc, curl -u,
// credential pairs, constant-key calls, PEM body lines without header, prose, unterminated literals
// at the cursor (v2 context rules alone 70.5%), and token shapes (hex, UUID, base64) in an auth
// context (19.7% alone; without it the own rules reach 90.2%, with it 100%).
// Third round (test/fixtures/secrets-v3, written without sight of these rules; BENCHMARKS "Trust round:
// forms nobody listed"): names and prose in other languages (secretWords.ts), token formats as data
// (tokenFormats.ts), and structure: the argument in a DSN's password slot, ODBC braces, escaped JSON,
// build-script settings, annotation defaults, password and key arguments of known calls, encoded
// user:password pairs, cookies and key-named headers, test rows, suppliers, joins and builders, key
// material lines and wrapped JWTs. Dev 46.8% -> 100%; its held-out part, scored once, 83%.

import {
  ALGORITHM,
  ANNOTATION,
  AUTH_TUPLE_START,
  B64_LINE,
  COMMENT_START,
  CREDENTIAL_KEYS,
  ENCODE_CALLS,
  INTL_WORD,
  JWT_GAP,
  KEY_CALLS,
  LIT,
  LIT_CHAIN,
  NAME,
  NAME_INTL,
  NETRC_GAP,
  NOT_A_SETTER,
  ONE_LIT,
  PASSWORD_CALLS,
  QUOTED_SECRET_KEY,
  SAYS_SECRET,
  SAYS_SECRET_INTL,
  SECRET_NOUN,
  SESSION_COOKIES,
  SETTING_BEFORE,
  SETTING_NAME,
  SETTING_SEPARATOR,
  SETTING_VALUE,
  STATED_VALUE,
  STATES,
  TOKEN_KEPT,
  TOKEN_WHOLE,
} from './secretPatterns';
import {
  AUTH_CONTEXT,
  bareCredential,
  configCredential,
  isPlaceholder,
  isSecretName,
  looksRandom,
  NOT_AUTH_CONTEXT,
  passwordLike,
  REDACTED,
  SHORT_SECRET_KEYS,
  statedCredential,
  tokenShape,
  type Redacted,
} from './secretVocabulary';
import { INTL_SECRET_WORD, saysSecretIntl } from './secretWords';

export { REDACTED, isPlaceholder, isSecretName, looksRandom, shannonEntropy, tokenShape, type Redacted } from './secretVocabulary';

/** Replace a quoted value's inside, keeping its quotes. */
function literal(quoteOf: string, before: string): string {
  const q = quoteOf.includes('"') && !quoteOf.startsWith("'") ? '"' : "'";
  return `${before}${q}${REDACTED}${q}`;
}

interface Rule {
  name: string;
  pattern: RegExp;
  /** Run only on a text that holds a credential word of another language (INTL_WORD). */
  intl?: true;
  /** Run only on a text this cheap test finds something in (most prompts hold none of a rule's anchor). */
  when?: RegExp;
  /** The replacement of the whole match, or of `length` characters from the match's start (a call and its arguments). */
  replace: (match: RegExpExecArray) => string | { text: string; length: number } | undefined;
}

function litValue(m: RegExpExecArray, dq: number): { value: string; quote: string } {
  const value = m[dq] ?? m[dq + 1] ?? '';
  return { value, quote: m[dq] !== undefined ? '"' : "'" };
}

/** Everything before the literal of a match whose literal is its last part. */
function headOf(m: RegExpExecArray, value: string, quote: string): string {
  const full = m[0];
  const at = full.lastIndexOf(`${quote}${value}${quote}`);
  return full.slice(0, at);
}

function boundLiteral(name: string, m: RegExpExecArray, dq: number, bound = false): string | undefined {
  const { value, quote } = litValue(m, dq);
  const secretName = isSecretName(name) || (bound && SHORT_SECRET_KEYS.test(name));
  // A key is a plain name (`user[:passwd]` is a pattern); a value with spaces is a passphrase only under a password's or secret's name.
  if (!/^[\p{L}\p{N}_.\- ]+$/u.test(name) || !secretName || isPlaceholder(value.replace(/\\(.)/g, '$1'))) return undefined;
  if (/\s/.test(value) && !/pass|secret|pwd/i.test(name) && !saysSecretIntl(name)) return undefined;
  return literal(quote, headOf(m, value, quote));
}

/** The name a literal at `at` is given to: `NAME = `, `NAME: `, `"NAME": `, `NAME(`, `.NAME(`, `NAME=`, a tuple's or call's opening. */
function bindingBefore(text: string, at: number): string {
  const before = text.slice(Math.max(0, at - 120), at);
  const m = /([A-Za-z_][\w.-]{0,63})["']?\s*\]?\s*(?::\s*[\w.[\], |]{1,40}?\s*)?(?:=|:|=>|\(|,)\s*(?:\(\s*)?$/.exec(before);
  return m?.[1] ?? '';
}

/** The line around `at`. */
function lineAround(text: string, at: number): string {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  const end = text.indexOf('\n', at);
  return text.slice(start, end < 0 ? text.length : end);
}

/** `chain` with every literal's inside replaced. */
function redactChain(chain: string): string {
  return chain.replace(ONE_LIT, (_lit, dq: string | undefined) => (dq !== undefined ? `"${REDACTED}"` : `'${REDACTED}'`));
}

/** The literals' contents of `chain`, joined. */
function chainValue(chain: string): string {
  return [...chain.matchAll(ONE_LIT)].map((m) => m[1] ?? m[2] ?? '').join('');
}

/** Unterminated literals at a line's end (the value being typed at the cursor), after a name that says secret. */
function redactUnterminated(text: string): Redacted {
  let count = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 2000 || !/["']/.test(line) || /"""|'''/.test(line)) continue;
    // A line whose quotes pair up closes every literal it opens (most lines: they skip the regular expression below).
    if ((line.split('"').length - 1) % 2 === 0 && (line.split("'").length - 1) % 2 === 0) continue;
    if (!/pass|pw|secret|token|key|auth|cred/i.test(line)) continue;
    // The literal runs to the line's end or to a fill-in-the-middle marker.
    const m = /^([^"'\n]*(?:(["'])(?:(?!\2)[^\\\n]|\\.)*\2[^"'\n]*)*?[=:(,][ \t]*)(["'])([^"'\n\\]{3,256}?)(<\||<fim_|<\uff5c|$)/.exec(
      line,
    );
    if (!m) continue;
    const head = m[1]!;
    const name = bindingBefore(head, head.length);
    const value = m[4]!;
    const bare = name
      .split('.')
      .pop()!
      .replace(/^(?:set|with)(?=[A-Z_])/, '');
    if (!isSecretName(bare) || isPlaceholder(value)) continue;
    if (/\s/.test(value) && !/pass|secret|pwd/i.test(name)) continue;
    lines[i] = `${head}${m[3]}${REDACTED}${m[5]}${line.slice(m[0].length)}`;
    count++;
  }
  return { text: count ? lines.join('\n') : text, count };
}

/** Where a literal ends: the index after its closing quote, or -1 (the text is searched from `at`, a quote). */
function literalEnd(text: string, at: number): number {
  const q = text[at];
  for (let i = at + 1; i < text.length && i < at + 1024; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === q) return i + 1;
    else if (c === '\n') return -1;
  }
  return -1;
}

/** A call's argument text from `open` (just after its `(`) to its matching `)`, at most 600 characters; undefined if unclosed. */
function callArguments(text: string, open: number): string | undefined {
  let depth = 0;
  for (let i = open; i < text.length && i < open + 600; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      const end = literalEnd(text, i);
      if (end < 0) return undefined;
      i = end - 1;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return text.slice(open, i);
      depth--;
    }
  }
  return undefined;
}

/** The top-level parts of an argument list (commas inside brackets and literals do not split). */
function splitTopLevel(args: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if (c === '"' || c === "'") {
      const end = literalEnd(args, i);
      i = end < 0 ? args.length : end - 1;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(args.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(args.slice(from));
  return parts;
}

/** A part that is one literal (prefix, quotes, an optional `.getBytes()` / `.toCharArray()` / `.encode()` after it). */
const ONE_LITERAL_PART = /^\s*[rRbBuUfF]{0,2}(["'])((?:(?!\1)[^\\\n]|\\.)*)\1\s*(?:\.(?:getBytes|toCharArray|encode)\([^()]*\)\s*)?$/;

/** `part` with its literal's inside replaced, when it is one literal whose value `secret` accepts. */
function redactPart(part: string, secret: (value: string) => boolean): string | undefined {
  const m = ONE_LITERAL_PART.exec(part);
  if (!m || isPlaceholder(m[2] ?? '') || !secret(m[2] ?? '')) return undefined;
  const q = m[1]!;
  return part.replace(`${q}${m[2]}${q}`, `${q}${REDACTED}${q}`);
}

/** A call's match rewritten: its arguments split, the ones `pick` names redacted. `m[0]` ends with the call's `(`. */
function redactArguments(
  m: RegExpExecArray,
  pick: (parts: string[]) => number[],
  secret: (value: string) => boolean,
): { text: string; length: number } | undefined {
  const open = m.index + m[0].length;
  const args = callArguments(m.input, open);
  if (args === undefined) return undefined;
  const parts = splitTopLevel(args);
  let changed = false;
  for (const i of pick(parts)) {
    const r = parts[i] === undefined ? undefined : redactPart(parts[i], secret);
    if (r !== undefined) {
      parts[i] = r;
      changed = true;
    }
  }
  return changed ? { text: `${m[0]}${parts.join(',')}`, length: m[0].length + args.length } : undefined;
}

/** The name a value at `at` is bound to, in any script: `NAME = `, `NAME: str = `, `Supplier<String> NAME = `. */
function boundName(text: string, at: number): string {
  const m = /([\p{L}_][\p{L}\p{N}_.]{0,63})\s*(?::[^=\n]{1,40})?=\s*$/u.exec(text.slice(Math.max(0, at - 120), at));
  return m?.[1] ?? '';
}

/** The function or method whose body holds `at`: the last `def NAME(` or `NAME(...) {` in the 600 characters before it. */
function enclosingName(text: string, at: number): string {
  const window = text.slice(Math.max(0, at - 600), at);
  let name = '';
  for (const m of window.matchAll(/\bdef\s+([\p{L}_][\p{L}\p{N}_]*)\s*\(|([\p{L}_][\p{L}\p{N}_]*)\s*\([^()\n]{0,120}\)[^;{}\n]{0,60}\{/gu))
    name = m[1] ?? m[2] ?? name;
  return name;
}

/** A Gradle-style setting's literal, when its name says secret (the rules for both scripts). */
function spacedSetting(m: RegExpExecArray): string | undefined {
  const name = m[2] ?? '';
  // A setting's name, not a word of prose (`pass 'ignore'`, `the token "NUMBER"`).
  if (!/^[\p{L}_]\w*$/u.test(name) || /^(?:pass|token|secret|key|keys|password)$/i.test(name) || !isSecretName(name)) return undefined;
  const { value, quote } = litValue(m, 4);
  if (isPlaceholder(value)) return undefined;
  return literal(quote, headOf(m, value, quote));
}

/** A chain of literals given to a secret's name: every piece (the rules for both scripts). */
function chainedSecret(m: RegExpExecArray): string | undefined {
  const name = m[1] ?? '';
  const chain = m[4] ?? '';
  if (!/^[\p{L}\p{N}_.\- ]+$/u.test(name) || !isSecretName(name) || isPlaceholder(chainValue(chain))) return undefined;
  return m[0].slice(0, m[0].length - chain.length) + redactChain(chain);
}

/** The rules, in order; each returns the replacement of its whole match, or undefined to keep it. */
const RULES: readonly Rule[] = [
  {
    // -----BEGIN ... PRIVATE KEY----- up to its END line, or the end of the text when a snippet is cut.
    name: 'private key block',
    pattern: /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)/g,
    replace: (m) => `-----BEGIN ${m[1] ?? ''}PRIVATE KEY-----\n${REDACTED}\n-----END ${m[1] ?? ''}PRIVATE KEY-----`,
  },
  {
    // Token prefixes secretlint knows only in a stricter shape (checksummed, fixed length).
    name: 'token prefix',
    pattern: new RegExp(String.raw`\b(?:${TOKEN_WHOLE.join('|')})`, 'g'),
    // AWS's documentation keys end in EXAMPLE.
    replace: (m) => (/EXAMPLE/.test(m[0]) ? undefined : REDACTED),
  },
  {
    // Webhook URLs and DSNs whose path or user part is the credential: the host and the fixed path stay.
    name: 'token URL',
    pattern: new RegExp(TOKEN_KEPT.map((p) => `(?:${p})`).join('|'), 'g'),
    replace: (m) => {
      for (let g = 1; g < m.length; g += 2) if (m[g] !== undefined) return `${m[g]}${REDACTED}`;
      return undefined;
    },
  },
  {
    // scheme://user:password@host — the password only.
    name: 'URL userinfo',
    pattern: /\b([a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@"'<>]{0,64}:)([^\s@/"'<>]{1,128})@/gi,
    replace: (m) => (isPlaceholder(m[2] ?? '') || /^(?:pass|pwd|pw|secret)$/i.test(m[2] ?? '') ? undefined : `${m[1]}${REDACTED}@`),
  },
  {
    // Authorization values: `Bearer <token>`, `Basic <base64>`, `Token <token>`.
    name: 'authorization value',
    pattern: /\b(Bearer|Basic|Token)[ \t]+([A-Za-z0-9._~+/-]{12,}=*)/gi,
    replace: (m) => {
      const v = m[2] ?? '';
      return /\d/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v) && v.length >= 16) ? `${m[1]} ${REDACTED}` : undefined;
    },
  },
  {
    // A secret's name given a chain of literals (`+`, implicit concatenation, a line continuation) or one literal in parentheses
    // (black's `SECRET_KEY = (\n    "..."\n)`): every piece is the value.
    name: 'literal chain',
    pattern: new RegExp(
      String.raw`(?<![\w.-])${SAYS_SECRET}(${NAME})(["']?)(\s*(?::\s*[\w.[\], |]{1,40}?\s*=(?!=)|=(?!=)|:)\s*)(${LIT_CHAIN})`,
      'gi',
    ),
    replace: chainedSecret,
  },
  {
    // A secret's name given a chain of literals (`+`, implicit concatenation, a line continuation) or one literal in parentheses
    // (black's `SECRET_KEY = (\n    "..."\n)`): every piece is the value.
    name: 'literal chain (other languages)',
    intl: true,
    pattern: new RegExp(
      String.raw`(?<![\p{L}\p{N}_.-])${SAYS_SECRET_INTL}(${NAME_INTL})(["']?)` +
        String.raw`(\s*(?::\s*[\w.[\], |]{1,40}?\s*=(?!=)|=(?!=)|:)\s*)(${LIT_CHAIN})`,
      'giu',
    ),
    replace: chainedSecret,
  },
  {
    // A value in a connection string, SAS URL or .npmrc under a key that holds the credential whatever its shape:
    // `AccountKey=...`, `SharedAccessKey=...`, `sig=...`, `:_authToken=...`, `,password=...` (Redis), `;Pwd=...`.
    name: 'credential key',
    pattern: new RegExp(String.raw`(^|[?&;,:"'\s]|\\[nrt])(${CREDENTIAL_KEYS})(=)([^\s&;"',\\<>]{3,512})`, 'gim'),
    replace: (m) => {
      const key = m[2] ?? '';
      const value = m[4] ?? '';
      if (isPlaceholder(value) || (key.toLowerCase() === 'sig' && value.length < 16)) return undefined;
      if (/^(?:password|passwd|pwd)$/i.test(key) && !configCredential(key, value)) return undefined;
      return `${m[1]}${key}${m[3]}${REDACTED}`;
    },
  },
  {
    // netrc text: `machine h login u password p`, on one line or several (also with escaped line breaks in a literal).
    name: 'netrc',
    pattern: new RegExp(
      String.raw`\b(login|user)(${NETRC_GAP}[^\s"'\\]{1,128}${NETRC_GAP}(?:password|passwd|account)(?:[ \t]|\\t){1,10})([^\s"'\\]{3,128})`,
      'g',
    ),
    replace: (m) => (isPlaceholder(m[3] ?? '') ? undefined : `${m[1]}${m[2]}${REDACTED}`),
  },
  {
    // curl's `-u user:password` / `--user user:password`, in a command line or as list arguments (`"-u", "user:password"`).
    name: 'curl user',
    pattern: /(\s|["'])(-u|--user)((?:["']?\s*,\s*["']|[ \t=]+["']?))([^\s:"'$]{1,64}):([^\s"'@]{3,128})/g,
    replace: (m) => (isPlaceholder(m[5] ?? '') || (m[5] ?? '').startsWith('$') ? undefined : `${m[1]}${m[2]}${m[3]}${m[4]}:${REDACTED}`),
  },
  {
    // A pair bound to a credentials name: `creds = ("svc", "...")`, `LOGIN = ("user", "...")`: the second literal is the password.
    name: 'credential pair',
    pattern: new RegExp(
      String.raw`(?<![\w.-])(?=\w{0,60}?(?:cred|login|auth|account))([A-Za-z_]\w{0,63})` +
        String.raw`(\s*(?::\s*[\w.[\], |]{1,40}?\s*)?=\s*[([]\s*)${LIT}(\s*,\s*)${LIT}`,
      'gi',
    ),
    replace: (m) => {
      if (!/(?:^|_)(?:creds?|credentials?|login|logins|auth|basic_auth|account)$/i.test(m[1] ?? '')) return undefined;
      const { value, quote } = litValue(m, 6);
      if (isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // A call given a constant that names a credential and a literal: `env.put(Context.SECURITY_CREDENTIALS, "...")`.
    name: 'constant key call',
    pattern: new RegExp(String.raw`\(\s*((?:[A-Za-z_]\w*\.)*[A-Z][A-Z0-9_]{2,63})\s*,\s*${LIT}\s*\)`, 'g'),
    replace: (m) => {
      const { value, quote } = litValue(m, 2);
      const name = (m[1] ?? '').split('.').pop() ?? '';
      if (!isSecretName(name) || isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // PEM body lines without their header (split or cut off): a literal of base64 ending in an escaped line break.
    name: 'key body line',
    pattern: /(["'])([A-Za-z0-9+/]{40,76}={0,2})\\n\1/g,
    replace: (m) => (tokenShape(m[2] ?? '') || looksRandom(m[2] ?? '') ? `${m[1]}${REDACTED}\\n${m[1]}` : undefined),
  },
  {
    // config["db_password"] = "...", os.environ["API_TOKEN"] = "...", headers['X-Api-Key'] = '...'.
    name: 'subscript assignment',
    pattern: new RegExp(String.raw`\[\s*${QUOTED_SECRET_KEY}\s*\]\s*(?:${ANNOTATION})?=(?!=)\s*${LIT}`, 'gi'),
    replace: (m) => boundLiteral(m[1] ?? m[2] ?? '', m, 3),
  },
  {
    // A quoted key and its value as a call's two arguments: p.put("mail.smtp.password", "..."),
    // p.setProperty("password", "..."), os.environ.setdefault("API_TOKEN", "..."), Map.of("apiKey", "...").
    name: 'key-value call',
    pattern: new RegExp(String.raw`${QUOTED_SECRET_KEY}\s*,\s*${LIT}`, 'gi'),
    replace: (m) => boundLiteral(m[1] ?? m[2] ?? '', m, 3),
  },
  {
    // The tuple given to `auth` and the credential constructors: the second literal is the password.
    name: 'auth tuple',
    pattern: new RegExp(String.raw`(?:${AUTH_TUPLE_START})\s*${LIT}\s*,\s*${LIT}`, 'g'),
    replace: (m) => {
      const { value, quote } = litValue(m, 3);
      if (isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // name = "...", name: str = "...", "name": "...", name => "...", name := "...", keyword="...".
    name: 'bound literal',
    pattern: new RegExp(
      String.raw`(?<![\w.-])${SAYS_SECRET}(${NAME})(["']?)(\s*(?::\s*[\w.[\], |]{1,40}?\s*=(?!=)|:=|=>|=(?!=)|:)\s*)${LIT}`,
      'gi',
    ),
    replace: (m) => boundLiteral(m[1] ?? '', m, 4, true),
  },
  {
    // name = "...", name: str = "...", "name": "...", name => "...", name := "...", keyword="...".
    name: 'bound literal (other languages)',
    intl: true,
    pattern: new RegExp(
      String.raw`(?<![\p{L}\p{N}_.-])${SAYS_SECRET_INTL}(${NAME_INTL})(["']?)` +
        String.raw`(\s*(?::\s*[\w.[\], |]{1,40}?\s*=(?!=)|:=|=>|=(?!=)|:)\s*)${LIT}`,
      'giu',
    ),
    replace: (m) => boundLiteral(m[1] ?? '', m, 4, true),
  },
  {
    // A setter or builder method named for a secret, given one literal: setPassword("..."), .password("..."), withApiKey("...").
    name: 'setter call',
    pattern: new RegExp(String.raw`\.(?:set|with|use|update|change)?_?([A-Za-z][A-Za-z0-9_]{1,40})\s*\(\s*${LIT}\s*\)`, 'g'),
    replace: (m) => {
      const { value, quote } = litValue(m, 2);
      const name = m[1] ?? '';
      if (NOT_A_SETTER.test(name)) return undefined;
      if (!isSecretName(name) || !bareCredential(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // A comment that states a password: `# old admin password: ...`, `// the token is "..."`.
    name: 'comment',
    pattern: new RegExp(
      String.raw`(${COMMENT_START}[^\n]*?(?:^|[\s(])${SECRET_NOUN}\b(?:[ \t]+[A-Za-z]+){0,3}?${STATES})` + STATED_VALUE,
      'gim',
    ),
    replace: (m) => {
      const value = m[3] ?? '';
      if (isPlaceholder(value)) return undefined;
      if (!m[2] && !/[\d!@#$%^&*+=/~_-]/.test(value) && !(/[a-z]/.test(value) && /[A-Z]/.test(value))) return undefined;
      return `${m[1]}${m[2]}${REDACTED}${m[2]}`;
    },
  },
  {
    // .properties / YAML / .env / INI lines with an unquoted value: `db.password=hunter2`, `token: abc123`.
    name: 'config line',
    pattern: /^([ \t]*(?:export[ \t]+)?)([A-Za-z_][\w.-]{0,63})([ \t]*[=:][ \t]*)([^\s'"#;,(){}[\]]{4,})[ \t]*$/gm,
    replace: (m) => {
      const name = m[2] ?? '';
      const value = m[4] ?? '';
      if (!isSecretName(name) || isPlaceholder(value) || /^(?:self|this|cls)\./.test(name)) return undefined;
      // Code assigns names and calls (`token = self.token`, `password: str`); a literal has digits or symbols, or sits under a dotted
      // settings key.
      const identifier = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/.test(value);
      if (/^\d+$/.test(value) || (identifier && (!/[.-]/.test(name) || value.includes('.')) && !/\d/.test(value))) return undefined;
      return `${m[1]}${name}${m[3]}${REDACTED}`;
    },
  },
  {
    // Inside a string: connection strings and query strings (`;Password=...;`, `?password=...&`), command lines (`--password=...`).
    name: 'inline setting',
    pattern: new RegExp(SETTING_BEFORE + SETTING_NAME + SETTING_SEPARATOR + SETTING_VALUE, 'gm'),
    replace: (m) => {
      const name = m[2] ?? '';
      const value = m[4] ?? '';
      const flag = name.startsWith('-');
      // `name = value` with spaces only after an escaped line break (an INI or YAML text inside a string literal).
      const spaced = m[3] !== '=' && /[=:]/.test(m[3] ?? '');
      if (spaced ? !(m[1] ?? '').startsWith('\\') : m[3] !== '=' && !flag) return undefined;
      // In config text inside a string (after an escaped line break, a quote or a query separator) a token-shaped value under an
      // authentication name, or a letters-only one under a password's, is a credential too.
      const inString = /^(?:\\[nrt]|[?&;"'])$/.test(m[1] ?? '');
      if (inString && !flag && tokenShape(value) && AUTH_CONTEXT.test(name) && !NOT_AUTH_CONTEXT.test(name))
        return `${m[1]}${name}${m[3]}${REDACTED}`;
      if (!isSecretName(flag ? name.replace(/^-+/, '') : name)) return undefined;
      if (!(inString && !flag ? configCredential(name, value) : bareCredential(value))) return undefined;
      return `${m[1]}${name}${m[3]}${REDACTED}`;
    },
  },
  {
    // A default in a settings placeholder: `${db.password:...}` (Spring), `${DB_PASSWORD:-...}` (shell, compose).
    name: 'placeholder default',
    pattern: /(\$\{([\w.-]{1,64}):-?)([^}\s]{3,200})\}/g,
    replace: (m) => (isSecretName(m[2] ?? '') && !isPlaceholder(m[3] ?? '') ? `${m[1]}${REDACTED}}` : undefined),
  },
  {
    // Prose anywhere (docstrings, comments) that states a secret: `the admin password is ...`, `:param password: defaults to '...'`,
    // `use the password ...`.
    name: 'prose',
    pattern: new RegExp(
      String.raw`(\b${SECRET_NOUN}\b(?:[ \t]+[A-Za-z]+){0,3}?` +
        String.raw`(?:[ \t]*:?[ \t]+defaults?[ \t]+to[ \t]+|[ \t]+(?:is|was|are|of)[ \t]+|[ \t]*[:=][ \t]*|[ \t]+))` +
        STATED_VALUE,
      'gi',
    ),
    replace: (m) => {
      const raw = m[3] ?? '';
      const value = raw.replace(/[.,;:)]+$/, '');
      if (isPlaceholder(value) || !bareCredential(value) || !/\d/.test(value) || /[*<]/.test(value)) return undefined;
      return `${m[1]}${m[2]}${REDACTED}${raw.slice(value.length)}${m[2]}`;
    },
  },
  {
    // A token-shaped literal (hex of 32 or more, UUID, base64 with mixed classes) bound to a name, or on a line, that says
    // authentication: `TWILIO_AUTH = "<hex>"`, `.key("<base64>")`, `AUTH = "<uuid>"`.
    name: 'token shape in auth context',
    pattern: /(["'])([A-Za-z0-9+/=_-]{20,512})\1/g,
    replace: (m) => {
      const value = m[2] ?? '';
      if (!tokenShape(value)) return undefined;
      const name = bindingBefore(m.input, m.index);
      const line = lineAround(m.input, m.index).replace(value, '');
      if (!AUTH_CONTEXT.test(`${name} ${line}`) || (name && NOT_AUTH_CONTEXT.test(name))) return undefined;
      // A digest compared in a test.
      if (/==|\bassert|\bexpect\(/.test(line)) return undefined;
      return `${m[1]}${REDACTED}${m[1]}`;
    },
  },
  {
    // A format string whose password slot (`://user:%s@`, `:{}@`, `password=%s`, `PWD={}`) is filled by `%` or `.format(...)`:
    // the argument in that slot is the credential.
    name: 'format arguments',
    when: /["']\s*(?:%\s*\(|\.format\()/,
    pattern: new RegExp(String.raw`${LIT}\s*(?:%\s*\(|\.format\()`, 'g'),
    replace: (m) => {
      const { value } = litValue(m, 1);
      const slots = [...value.matchAll(/%(?:\([\w]+\))?[-+ #0]*\d*(?:\.\d+)?[sdr]|\{[\w]*(?::[^{}]*)?\}/g)];
      const secretSlots = slots
        .map((p, i) => ({ i, name: /^\{(\w+)/.exec(p[0])?.[1] ?? /^%\((\w+)\)/.exec(p[0])?.[1], before: value.slice(0, p.index) }))
        .filter(
          ({ before }) =>
            /:\/\/[^/\s@]*:$/.test(before) || /(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key)[ \t]*[=:][ \t]*\{?$/i.test(before),
        );
      if (secretSlots.length === 0) return undefined;
      return redactArguments(
        m,
        (parts) =>
          secretSlots.map(({ i, name }) => {
            if (name === undefined || /^\d+$/.test(name)) return name === undefined ? i : Number(name);
            return parts.findIndex((p) => new RegExp(String.raw`^\s*${name}\s*=`).test(p));
          }),
        () => true,
      );
    },
  },
  {
    // ODBC and ADO connection strings quote a value in braces: `PWD={...};`.
    name: 'braced setting',
    when: /=\{/,
    pattern: /(\b(?:PWD|Pwd|pwd|PASSWORD|Password|password|AccountKey|SharedAccessKey)=\{)([^{}\n]{3,200})\}/g,
    replace: (m) => (isPlaceholder(m[2] ?? '') ? undefined : `${m[1]}${REDACTED}}`),
  },
  {
    // JSON inside a literal with escaped quotes: `"{\"password\":\"...\"}"`.
    name: 'escaped key',
    when: /\\["\']/,
    pattern: new RegExp(String.raw`\\(["'])(${NAME})\\\1\s*:\s*\\\1((?:[^"'\\\n]|\\(?!\1)[^\n]){1,256}?)\\\1`, 'gu'),
    replace: (m) => {
      const value = m[3] ?? '';
      const name = m[2] ?? '';
      const tokenUnderAuth = tokenShape(value) !== undefined && AUTH_CONTEXT.test(name) && !NOT_AUTH_CONTEXT.test(name);
      if (!(isSecretName(name) || tokenUnderAuth) || isPlaceholder(value)) return undefined;
      const q = m[1]!;
      return `\\${q}${m[2]}\\${q}${m[0].slice(m[2]!.length + 4, m[0].length - value.length - 2)}${REDACTED}\\${q}`;
    },
  },
  {
    // Build scripts and config DSLs set a value without `=`: Gradle's `keyPassword 'x'`, `storePassword "x"`.
    name: 'spaced setting',
    // A setting's name ends in the word for the secret, right before its literal (`keyPassword '...'`).
    when: /(?:pass(?:word|wd)?|secret|token|key)[ \t]+[rRbBuUfF]{0,2}["']/i,
    pattern: new RegExp(String.raw`(^[ \t]*|[{;][ \t]*|(?<=["'])[ \t]+)${SAYS_SECRET}(${NAME})([ \t]+)${LIT}`, 'gim'),
    replace: spacedSetting,
  },
  {
    // Build scripts and config DSLs set a value without `=`: Gradle's `keyPassword 'x'`, `storePassword "x"`.
    name: 'spaced setting (other languages)',
    intl: true,
    pattern: new RegExp(String.raw`(^[ \t]*|[{;][ \t]*|(?<=["'])[ \t]+)${SAYS_SECRET_INTL}(${NAME_INTL})([ \t]+)${LIT}`, 'gimu'),
    replace: spacedSetting,
  },
  {
    // XML text (Maven settings, Spring config) in a literal or a comment: `<password>...</password>`.
    name: 'xml element',
    when: /<\/\w/,
    pattern: new RegExp(String.raw`<(${NAME})>([^<>\n]{3,256})</\1>`, 'gu'),
    replace: (m) => (isSecretName(m[1] ?? '') && !isPlaceholder(m[2] ?? '') ? `<${m[1]}>${REDACTED}</${m[1]}>` : undefined),
  },
  {
    // A header parameter's default in an annotation that names a key or token: `@RequestHeader(value = "X-Api-Key", defaultValue = "...")`.
    name: 'annotation default',
    when: /defaultValue/,
    pattern: new RegExp(String.raw`@\w+\(([^()\n]{0,200}?)\bdefaultValue\s*=\s*${LIT}([^()\n]{0,40}\)\s*[\w<>]+\s+(\w+))?`, 'g'),
    replace: (m) => {
      const { value, quote } = litValue(m, 2);
      const context = `${m[1] ?? ''} ${m[5] ?? ''}`;
      if (isPlaceholder(value) || !(AUTH_CONTEXT.test(context) || isSecretName(m[5] ?? ''))) return undefined;
      const at = m[0].indexOf(`${quote}${value}${quote}`, (m[1] ?? '').length);
      return `${m[0].slice(0, at)}${quote}${REDACTED}${quote}${m[0].slice(at + value.length + 2)}`;
    },
  },
  {
    // The password argument of a login, bind or connect call, after a user or a connection that need not be a literal.
    name: 'password argument',
    pattern: new RegExp(String.raw`(?<!\w)(?:new\s+)?(?:${PASSWORD_CALLS})\s*\(`, 'g'),
    replace: (m) =>
      redactArguments(
        m,
        (parts) => {
          // A connect call's password is its third argument (host, user, password) or, with two, its second; a login's its second.
          // Transport.send(message, user, password); paramiko's connect(host, port, user, password): the last argument.
          if (/Transport\.send/.test(m[0])) return [2];
          if (/^connect\s*\($/.test(m[0].replace(/^new\s+/, ''))) return parts.length >= 3 ? [parts.length - 1] : [];
          const connect = /connect|getConnection/i.test(m[0]);
          return connect ? [parts.length >= 3 ? 2 : 1] : [1];
        },
        passwordLike,
      ),
  },
  {
    // A signing or encryption key given to a JWT, HMAC or cipher call: its literal arguments that are not algorithm names.
    name: 'key argument',
    pattern: new RegExp(String.raw`(?<!\w)(?:${KEY_CALLS})\s*\(`, 'g'),
    replace: (m) =>
      redactArguments(
        m,
        (parts) => parts.map((_p, i) => i),
        (v) => v.length >= 6 && !ALGORITHM.test(v),
      ),
  },
  {
    // `user:password` encoded for a Basic header: `Base64.getEncoder().encodeToString("svc:pw".getBytes())`, `b64encode(b"svc:pw")`.
    name: 'encoded pair',
    when: /encode|btoa/i,
    pattern: new RegExp(String.raw`\b(?:${ENCODE_CALLS})\(\s*[rRbBuUfF]{0,2}(["'])([^"'\s:]{1,64}):([^"'\s]{3,128})\1`, 'g'),
    replace: (m) => (isPlaceholder(m[3] ?? '') ? undefined : m[0].replace(`:${m[3]}${m[1]}`, `:${REDACTED}${m[1]}`)),
  },
  {
    // A session cookie's value: `"SESSION=..."`, `JSESSIONID=...; Path=/`.
    name: 'session cookie',
    when: /(?:sess|sid|remember|token|csrf)[\w.-]{0,12}=/i,
    pattern: new RegExp(String.raw`(^|[\s"';,])((?:${SESSION_COOKIES})=)([^;\s"'&,]{8,512})`, 'gim'),
    // A session id is random: it has a digit (`session=self._session` is code).
    replace: (m) =>
      isPlaceholder(m[3] ?? '') || !/\d/.test(m[3] ?? '') || /^(?:self|this)\./.test(m[3] ?? '') ? undefined : `${m[1]}${m[2]}${REDACTED}`,
  },
  {
    // A function or supplier that returns a literal under a secret's name: `def admin_password(): return "..."`,
    // `String getApiKey() { return "..."; }`, `secret = lambda: "..."`, `Supplier<String> password = () -> "..."`. Anchored at the
    // `return` or the arrow, the name is looked up behind.
    name: 'secret supplier',
    pattern: new RegExp(String.raw`(?:\breturn\s+|\blambda\b[^:\n]{0,40}:\s*|\(\)\s*->\s*)${LIT}`, 'g'),
    replace: (m) => {
      const bound = m[0].startsWith('return') ? enclosingName(m.input, m.index) : boundName(m.input, m.index);
      const name = bound.replace(/^(?:get|fetch|load|default)_?(?=\p{L})/iu, '');
      const { value, quote } = litValue(m, 1);
      if (!(isSecretName(name) || SHORT_SECRET_KEYS.test(name)) || isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // Test parameters named in a string: `parametrize("user,pw", [("admin", "..."), ...])`: the columns whose name says secret.
    name: 'parametrized secret',
    when: /parametrize\(/,
    pattern: new RegExp(String.raw`\bparametrize\(\s*${LIT}\s*,\s*\[`, 'g'),
    replace: (m) => {
      const names = litValue(m, 1).value.split(/\s*,\s*/);
      const secret = names.map((n, i) => (isSecretName(n) || SHORT_SECRET_KEYS.test(n) ? i : -1)).filter((i) => i >= 0);
      if (secret.length === 0) return undefined;
      const list = callArguments(m.input, m.index + m[0].length);
      if (list === undefined) return undefined;
      const rows = list.replace(/\(([^()]*)\)/g, (row: string, inner: string) => {
        const cells = splitTopLevel(inner);
        for (const i of secret) {
          const r = cells[i] === undefined ? undefined : redactPart(cells[i], () => true);
          if (r !== undefined) cells[i] = r;
        }
        return `(${cells.join(',')})`;
      });
      return rows === list ? undefined : { text: `${m[0]}${rows}`, length: m[0].length + list.length };
    },
  },
  {
    // JUnit's CSV rows given to a method whose parameter says secret: `@CsvSource({"admin, ..."}) void login(String user, String pw)`.
    name: 'csv source',
    when: /@CsvSource/,
    pattern: /@CsvSource\(\s*(?:value\s*=\s*)?\{?([^()]{1,2000}?)\}?\s*\)([^{;]{0,200}?)\(([^()]{0,300})\)/g,
    replace: (m) => {
      const params = (m[3] ?? '').split(',').map((p) => p.trim().split(/\s+/).pop() ?? '');
      const secret = params.map((n, i) => (isSecretName(n) || SHORT_SECRET_KEYS.test(n) ? i : -1)).filter((i) => i >= 0);
      if (secret.length === 0) return undefined;
      const rows = (m[1] ?? '').replace(/"([^"\n]*)"/g, (_lit, row: string) => {
        const cells = row.split(',');
        for (const i of secret)
          if (cells[i] !== undefined && cells[i].trim().length >= 3) cells[i] = cells[i].replace(cells[i].trim(), REDACTED);
        return `"${cells.join(',')}"`;
      });
      return rows === m[1] ? undefined : m[0].replace(m[1] ?? '', rows);
    },
  },
  {
    // A comment or docstring in another language that states a credential: `# 数据库密码是 ...`, `// Passwort für den Testserver
    // lautet {@code ...}`: the credential-shaped words of the 120 characters after the word for it.
    name: 'prose in other languages',
    intl: true,
    pattern: new RegExp(String.raw`${INTL_SECRET_WORD}[^\n]{0,120}`, 'giu'),
    replace: (m) => {
      let changed = false;
      const text = m[0].replace(/[!-~]{6,128}/g, (word) => {
        const value = word.replace(/^[{(\[<"'`]+|[})\]>"'`.,;:?]+$/g, '').replace(/^@code\b/, '');
        if (!statedCredential(value)) return word;
        changed = true;
        return word.replace(value, REDACTED);
      });
      return changed ? text : undefined;
    },
  },
  {
    // Key material by its line: WireGuard's `PrivateKey = <base64>`, PuTTY's `Private-Lines: N` and the base64 lines after it,
    // a JWK's private members.
    name: 'key material line',
    when: /PrivateKey|PresharedKey|Private-Lines|\\?["'](?:d|p|q|dp|dq|qi|k)\\?["']\s*:/,
    pattern: new RegExp(
      [
        String.raw`(\b(?:PrivateKey|PresharedKey)\s*=\s*)([A-Za-z0-9+/]{42,43}=)`,
        String.raw`(Private-Lines:\s*\d+\s*)((?:[ \t]*[#*/"']*[ \t]*[A-Za-z0-9+/=]{16,}[ \t"']*\\?n?[ \t]*\n?){1,40})`,
        String.raw`((\\?["'])(?:d|p|q|dp|dq|qi|k)\6\s*:\s*(\6))([A-Za-z0-9_-]{16,})\7`,
      ].join('|'),
      'g',
    ),
    replace: (m) => {
      if (m[2] !== undefined) return `${m[1]}${REDACTED}`;
      if (m[4] !== undefined) return `${m[3]}${REDACTED}\n`;
      return `${m[5]}${REDACTED}${m[7]}`;
    },
  },
  {
    // A JWT wrapped over lines or split across literals: from its header (`eyJ...`), runs of base64url with blanks, quotes, `+`,
    // comment marks or escaped line breaks between, holding the token's two dots; each run is replaced.
    name: 'wrapped JWT',
    when: /eyJ/,
    pattern: new RegExp(String.raw`eyJ[A-Za-z0-9_-]{6,}[A-Za-z0-9_.-]*(?:${JWT_GAP}+[A-Za-z0-9_.-]{8,}){1,8}`, 'g'),
    replace: (m) => {
      const runs = m[0].split(new RegExp(`${JWT_GAP}+`));
      let dots = 0;
      let used = 0;
      for (const run of runs) {
        if (used > 0 && !/^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*)*$/.test(run)) break;
        // The signature goes on while the lines before were wrapped at the first line's width.
        if (dots >= 2 && (run.includes('.') || runs[used - 1]!.length < runs[0]!.length - 2)) break;
        dots += run.split('.').length - 1;
        used++;
      }
      if (dots < 2) return undefined;
      let out = '';
      let at = 0;
      for (let k = 0; k < used; k++) {
        const run = runs[k]!;
        const from = m[0].indexOf(run, at);
        out += m[0].slice(at, from) + run.replace(/[A-Za-z0-9_-]{6,}/g, REDACTED);
        at = from + run.length;
      }
      return { text: out, length: at };
    },
  },
  {
    // Lines of base64 that are a key's body without its header (in a comment, docstring or literal): a block whose first line
    // opens an OpenSSH key (`b3BlbnNzaC1rZXktdjE`, "openssh-key-v1") or DER (`MII`), or that follows a line naming a private key
    // or secret. Signatures, images and compressed data in base64 stay.
    name: 'key body lines',
    when: /^[ \t]*(?:#|\/\/|\*|["'])?[ \t]*[A-Za-z0-9+/]{60}/m,
    pattern: new RegExp(String.raw`(?:^${B64_LINE}\n?)+`, 'gm'),
    replace: (m) => {
      const before = m.input
        .slice(Math.max(0, m.index - 240), m.index)
        .split('\n')
        .slice(-4)
        .join('\n');
      const opens = /^[^A-Za-z0-9+/]*(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/])/.test(m[0]);
      // Base64 of a key mixes cases and digits (a rule of slashes is none).
      if (!/[A-Z]/.test(m[0]) || !/[a-z]/.test(m[0]) || !/\d/.test(m[0])) return undefined;
      if (!opens && !/private|secret|\bkey\b|passphrase/i.test(before)) return undefined;
      return m[0].replace(
        new RegExp(`^${B64_LINE}`, 'gm'),
        (_line: string, head: string, _b64: string, tail: string) => `${head}${REDACTED}${tail}`,
      );
    },
  },
  {
    // Literals joined by a call under a secret's name: `SECRET = "".join(["...", "..."])`, `KEY = String.join("", "...", "...")`.
    name: 'joined literals',
    when: /\.join\(/,
    pattern: /(?:(?:""|'')\.join\(\s*[[(]|String\.join\(\s*""\s*,)/g,
    replace: (m) => {
      const name = boundName(m.input, m.index);
      const args = callArguments(m.input, m.index + m[0].length);
      if (name === '' || args === undefined || !/["']/.test(args)) return undefined;
      // Under a name that only says key (`key_data`), the pieces must look like a token's: no blanks, a digit among them.
      const pieces = [...args.matchAll(ONE_LIT)].map((p) => p[1] ?? p[2] ?? '');
      const tokenPieces = pieces.every((p) => !/\s|\\n/.test(p)) && pieces.some((p) => /\d/.test(p));
      if (!isSecretName(name) && !(AUTH_CONTEXT.test(name) && !NOT_AUTH_CONTEXT.test(name) && tokenPieces)) return undefined;
      return { text: m[0] + redactChain(args), length: m[0].length + args.length };
    },
  },
  {
    // A secret built by appends, under a secret's name or in a method named for one:
    // `String apiKey() { return new StringBuilder().append("...").append("...") ...`.
    name: 'built secret',
    when: /StringBuilder/,
    pattern: new RegExp(String.raw`new\s+StringBuilder\([^()]*\)((?:\s*\.append\(\s*${LIT}\s*\)){2,})`, 'g'),
    replace: (m) => {
      const before = m.input.slice(Math.max(0, m.index - 8), m.index);
      const bound = /return\s*$/.test(before) ? enclosingName(m.input, m.index) : boundName(m.input, m.index);
      const name = bound.replace(/^(?:get|fetch|load|default)_?(?=\p{L})/iu, '');
      if (!isSecretName(name)) return undefined;
      return m[0].replace(m[1] ?? '', redactChain(m[1] ?? ''));
    },
  },
  {
    // Key bytes written as escapes under a name that says key: `FIELD_KEY = b"\x56\x35..."`.
    name: 'escaped key bytes',
    when: /\\x[0-9a-fA-F]{2}\\x/,
    pattern: /[bB]?(["'])((?:\\x[0-9a-fA-F]{2}){8,256})\1/g,
    replace: (m) => {
      const name = bindingBefore(m.input, m.index);
      if (!AUTH_CONTEXT.test(name) || NOT_AUTH_CONTEXT.test(name)) return undefined;
      return m[0].replace(m[2] ?? '', REDACTED);
    },
  },
  {
    // A cookie set by name and value: `cookies.set("sessionid", "...")`, `new Cookie("token", "...")`.
    name: 'cookie setter',
    when: /[Cc]ookie/,
    pattern: new RegExp(
      String.raw`\b(?:cookies\.set|set_cookie|Cookie|BasicClientCookie|HttpCookie|SimpleCookie)\(\s*${LIT}\s*,\s*${LIT}`,
      'g',
    ),
    replace: (m) => {
      const { value, quote } = litValue(m, 3);
      if (isPlaceholder(value) || value.length < 8 || !/\d/.test(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // Android build fields named for a key: `buildConfigField "String", "MAPS_API_KEY", "\"...\""` (also in a text block).
    name: 'build config field',
    when: /buildConfigField|resValue/,
    pattern:
      /(\b(?:buildConfigField|resValue)\s*\(?\s*["'][\w.]+["']\s*,\s*["']([\w.]+)["']\s*,\s*["'](?:\\{1,2}["'])?)([^"'\\\n]{4,256})/g,
    replace: (m) => {
      const name = m[2] ?? '';
      if (!(isSecretName(name) || (AUTH_CONTEXT.test(name) && !NOT_AUTH_CONTEXT.test(name))) || isPlaceholder(m[3] ?? '')) return undefined;
      return `${m[1]}${REDACTED}`;
    },
  },
  {
    // A setting's value concatenated after its key: `"...;password=" + "..." + ";encrypt=true"`.
    name: 'concatenated setting',
    when: /=["']\s*\+/,
    pattern: new RegExp(String.raw`(\b(?:${CREDENTIAL_KEYS}|secret|token|api[_-]?key)=)(["'])\s*\+\s*${LIT}`, 'gi'),
    replace: (m) => {
      const { value, quote } = litValue(m, 3);
      if (isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // The fallback of a secret setting read through Optional: `Optional.ofNullable(System.getenv("DB_PASSWORD")).orElse("...")`.
    name: 'setting fallback',
    when: /\.(?:orElse|or|getOrDefault)\(/,
    pattern: new RegExp(
      String.raw`\(\s*["']([\w.-]{1,64})["']\s*\)\s*\)?\s*\.(?:orElse|or|getOrDefault|orElseGet\(\s*\(\)\s*->)\(?\s*${LIT}`,
      'g',
    ),
    replace: (m) => {
      const { value, quote } = litValue(m, 2);
      if (!isSecretName(m[1] ?? '') || isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // A header set by name and value whose name says key or token: `setRequestProperty("X-Portal-Key", "...")`.
    name: 'header value',
    when: /Header|RequestProperty/,
    pattern: new RegExp(
      String.raw`\b(?:setRequestProperty|addRequestProperty|setHeader|addHeader|header|putHeader|withHeader)` +
        String.raw`\(\s*["']([\w-]{1,64})["']\s*,\s*${LIT}`,
      'g',
    ),
    replace: (m) => {
      const { value, quote } = litValue(m, 2);
      if (!isSecretName(m[1] ?? '') || isPlaceholder(value)) return undefined;
      return literal(quote, headOf(m, value, quote));
    },
  },
  {
    // A long random-looking literal, whatever its name.
    name: 'random literal',
    pattern: /"([^"\s\\]{24,1024})"|'([^'\s\\]{24,1024})'|`([^`\s\\]{24,1024})`/g,
    replace: (m) => {
      const value = m[1] ?? m[2] ?? m[3] ?? '';
      // Data, not credentials: images and data URIs in base64, UUIDs.
      if (
        !looksRandom(value) ||
        /^(?:iVBOR|\/9j\/|R0lGOD|UklGR|data:)/.test(value) ||
        // A subresource-integrity digest (a lock file's `sha512-...`) is public.
        /^sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}$/.test(value) ||
        /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(value)
      )
        return undefined;
      const q = m[0][0]!;
      return `${q}${REDACTED}${q}`;
    },
  },
];

/**
 * Apply one rule to the whole text; counts its replacements. A match the rule keeps is searched again one character on (a kept `payload =
 * '{...}'` may hold a secret's key and value).
 */
function applyRule(text: string, rule: Rule): Redacted {
  let count = 0;
  let out = '';
  let from = 0;
  const re = new RegExp(rule.pattern.source, rule.pattern.flags);
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const r = rule.replace(m);
    const replaced = typeof r === 'string' || r === undefined ? r : r.text;
    const length = typeof r === 'object' ? r.length : m[0].length;
    if (replaced === undefined || replaced === text.slice(m.index, m.index + length)) {
      re.lastIndex = m.index + 1;
      continue;
    }
    out += text.slice(from, m.index) + replaced;
    from = m.index + length;
    re.lastIndex = from;
    count++;
  }
  return { text: out + text.slice(from), count };
}

/** The project's own rules over `text`: credential values become REDACTED; the count says how many. */
export function redactGeneric(text: string): Redacted {
  return redactRules(text, ALL_RULES);
}

/** The rules of `names` only (a benchmark's candidate), the unterminated literal at the cursor first. */
export function redactRules(text: string, names: readonly string[]): Redacted {
  const first = names.includes(UNTERMINATED) ? redactUnterminated(text) : { text, count: 0 };
  let out = first.text;
  let count = first.count;
  const intl = INTL_WORD.test(text);
  for (const rule of RULES) {
    if (!names.includes(rule.name) || (rule.intl && !intl) || (rule.when && !rule.when.test(out))) continue;
    const r = applyRule(out, rule);
    out = r.text;
    count += r.count;
  }
  return { text: out, count };
}

/** The rule names, in order (for the header of a benchmark table). */
export const GENERIC_RULES: readonly string[] = RULES.map((r) => r.name);
const UNTERMINATED = 'unterminated literal';
const ALL_RULES = [UNTERMINATED, ...GENERIC_RULES];
/** The rules this version adds for forms the first corpus lacked (test/fixtures/secrets-v2), without the token-shape rule. */
export const V2_CONTEXT_RULES: readonly string[] = [
  UNTERMINATED,
  'literal chain',
  'credential key',
  'netrc',
  'curl user',
  'credential pair',
  'constant key call',
  'key body line',
  'prose',
  'token prefix',
];
/** Entropy and token shape (hex, UUID, base64) gated by an authentication context. */
export const SHAPE_RULES: readonly string[] = ['token shape in auth context'];

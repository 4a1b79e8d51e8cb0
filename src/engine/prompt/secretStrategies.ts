// The code the secret rules refer to by name (secretRuleTypes.ts): tests of a group's value, of a
// name and its value, of a match and the text around it, and the strategies of the rules whose
// replacement is a scan (a call's arguments, test rows, runs of a wrapped token, lines of a key).
// A record of secretRuleSet.ts or secretRuleSetStructure.ts says which it uses. Pure and synchronous.

import { ALGORITHM, B64_LAST_LINE, B64_LINE, BEYOND_ASCII, JWT_GAP, ONE_LIT } from './secretPatterns';
import type { MatchTest, PairTest, Strategy, ValueTest } from './secretRuleTypes';
import {
  bindingBefore,
  boundName,
  callArguments,
  chainValue,
  enclosingName,
  lineAround,
  redactArguments,
  redactChain,
  redactPart,
  splitTopLevel,
} from './secretScans';
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
} from './secretVocabulary';
import { INTL_SECRET_STEM, saysSecretIntl } from './secretWords';

/** What a strategy makes of a match: its replacement, or that of `length` characters from its start; undefined keeps it. */
export type Replacement = string | { text: string; length: number } | undefined;

/** A name that says authentication and is no cache key, digest or id. */
const authName = (name: string): boolean => AUTH_CONTEXT.test(name) && !NOT_AUTH_CONTEXT.test(name);

export const VALUE_TESTS: Readonly<Record<ValueTest, (value: string) => boolean>> = {
  placeholder: isPlaceholder,
  secretName: isSecretName,
  secretConstant: (v) => isSecretName(v.split('.').pop() ?? ''),
  secretOrAuthName: (v) => isSecretName(v) || authName(v),
  tokenShape: (v) => tokenShape(v) !== undefined,
  tokenOrRandom: (v) => tokenShape(v) !== undefined || looksRandom(v),
  random: looksRandom,
  bareCredential,
  authorizationToken: (v) => /\d/.test(v) || (/[a-z]/.test(v) && /[A-Z]/.test(v) && v.length >= 16),
  placeholderChain: (v) => isPlaceholder(chainValue(v)),
};

/**
 * A literal bound to `name`: a plain name (`user[:passwd]` is a pattern) that says secret; a value with spaces is a passphrase only
 * under a password's or secret's name.
 */
function boundSecret(name: string, value: string, shortKeys: boolean): boolean {
  const secretName = isSecretName(name) || (shortKeys && SHORT_SECRET_KEYS.test(name));
  if (!/^[\p{L}\p{N}_.\- ]+$/u.test(name) || !secretName || isPlaceholder(value.replace(/\\(.)/g, '$1'))) return false;
  return !/\s/.test(value) || /pass|secret|pwd/i.test(name) || saysSecretIntl(name);
}

export const PAIR_TESTS: Readonly<Record<PairTest, (name: string, value: string) => boolean>> = {
  boundSecret: (name, value) => boundSecret(name, value, false),
  boundSecretOrShortKey: (name, value) => boundSecret(name, value, true),
  credentialKey: (key, value) => {
    if (key.toLowerCase() === 'sig' && value.length < 16) return false;
    return !/^(?:password|passwd|pwd)$/i.test(key) || configCredential(key, value);
  },
  configLine: (name, value) => {
    if (isPlaceholder(value) || /^(?:self|this|cls)\./.test(name)) return false;
    // Under a name that only says key or auth (`routing_key`, `license`), a value of a token's shape or random.
    if (!isSecretName(name)) return authName(name) && (tokenShape(value) !== undefined || looksRandom(value));
    // Code assigns names and calls (`token = self.token`, `password: str`); a literal has digits or symbols, or sits under a dotted
    // settings key.
    const identifier = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$/.test(value);
    return !(/^\d+$/.test(value) || (identifier && (!/[.-]/.test(name) || value.includes('.')) && !/\d/.test(value)));
  },
  commentValue: (quote, value) => quote !== '' || /[\d!@#$%^&*+=/~_-]/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value)),
  secretKeyOrAuthToken: (name, value) => isSecretName(name) || (tokenShape(value) !== undefined && authName(name)),
};

/** A name with a getter's or loader's verb in front (`getApiKey`, `default_password`) read without it. */
const withoutVerb = (name: string): string => name.replace(/^(?:get|fetch|load|default)_?(?=\p{L})/iu, '');

export const MATCH_TESTS: Readonly<Record<MatchTest, (m: RegExpExecArray) => boolean>> = {
  inlineSetting: (m) => {
    const name = m[2] ?? '';
    const value = m[4] ?? '';
    const flag = name.startsWith('-');
    // `name = value` with spaces only after an escaped line break (an INI or YAML text inside a string literal).
    const spaced = m[3] !== '=' && /[=:]/.test(m[3] ?? '');
    if (spaced ? !(m[1] ?? '').startsWith('\\') : m[3] !== '=' && !flag) return false;
    // In config text inside a string (after an escaped line break, a quote or a query separator) a token-shaped value under an
    // authentication name, or a letters-only one under a password's, is a credential too.
    const inString = /^(?:\\[nrt]|[?&;"'])$/.test(m[1] ?? '');
    if (inString && !flag && tokenShape(value) && authName(name)) return true;
    if (!isSecretName(flag ? name.replace(/^-+/, '') : name)) return false;
    return inString && !flag ? configCredential(name, value) : bareCredential(value);
  },
  authContextAround: (m) => {
    const name = bindingBefore(m.input, m.index);
    const line = lineAround(m.input, m.index).replace(m[2] ?? '', '');
    if (!AUTH_CONTEXT.test(`${name} ${line}`) || (name && NOT_AUTH_CONTEXT.test(name))) return false;
    // A digest compared in a test.
    return !/==|\bassert|\bexpect\(/.test(line);
  },
  annotationAuth: (m) => AUTH_CONTEXT.test(`${m[1] ?? ''} ${m[5] ?? ''}`) || isSecretName(m[5] ?? ''),
  suppliedSecretName: (m) => {
    const name = withoutVerb(m[0].startsWith('return') ? enclosingName(m.input, m.index) : boundName(m.input, m.index));
    return isSecretName(name) || SHORT_SECRET_KEYS.test(name);
  },
  builtSecretName: (m) => {
    const before = m.input.slice(Math.max(0, m.index - 8), m.index);
    return isSecretName(withoutVerb(/return\s*$/.test(before) ? enclosingName(m.input, m.index) : boundName(m.input, m.index)));
  },
  authBinding: (m) => authName(bindingBefore(m.input, m.index)),
  foreignLine: (m) => BEYOND_ASCII.test(lineAround(m.input, m.index)),
  credentialWordStart: (m) => {
    const word = /^[\p{Script=Latin}\p{Script=Cyrillic}]+/u.exec(m[0])?.[0];
    // A phrase (`mot de passe`) or a word without a hump stands as the rule matched it.
    if (word === undefined || !/\p{Ll}\p{Lu}/u.test(word)) return true;
    return CREDENTIAL_WORD.test(word.replace(/(\p{Ll})\p{Lu}.*$/u, '$1'));
  },
};

/** A whole word for a credential in another language, inflected or not. */
const CREDENTIAL_WORD = new RegExp(`^(?:${INTL_SECRET_STEM})$`, 'iu');

/** The slots of a format string (`%s`, `%(name)s`, `{}`, `{0}`, `{name}`) that hold a password: after `://user:` or a password's key. */
function formatArguments(m: RegExpExecArray): Replacement {
  const value = m[1] ?? m[2] ?? '';
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
}

/** The indexes of the columns (test parameters, rows' names) whose name says secret (`password`, `oldSecret`, `token`, `pw`). */
function secretColumns(names: readonly string[]): number[] {
  return names.map((n, i) => (isSecretName(n) || SHORT_SECRET_KEYS.test(n) ? i : -1)).filter((i) => i >= 0);
}

/**
 * Test rows given to `parametrize("user,pw", [...])`: in each row (a tuple, a list or a `pytest.param(...)`), the cells of the
 * columns whose name says secret.
 */
function parametrizedRows(m: RegExpExecArray): Replacement {
  const names = [...(m[1] ?? '').matchAll(/["']([^"'\n]*)["']/g)].flatMap((n) => (n[1] ?? '').split(/\s*,\s*/));
  const secret = secretColumns(names);
  if (secret.length === 0) return undefined;
  const list = callArguments(m.input, m.index + m[0].length);
  if (list === undefined) return undefined;
  const rows = list.replace(/\(([^()]*)\)|\[([^[\]]*)\]/g, (row: string, tuple: string | undefined, items: string | undefined) => {
    const cells = splitTopLevel(tuple ?? items ?? '');
    for (const i of secret) {
      const r = cells[i] === undefined ? undefined : redactPart(cells[i], () => true);
      if (r !== undefined) cells[i] = r;
    }
    return tuple !== undefined ? `(${cells.join(',')})` : `[${cells.join(',')}]`;
  });
  return rows === list ? undefined : { text: `${m[0]}${rows}`, length: m[0].length + list.length };
}

/** JUnit's CSV rows: the cells of the columns whose parameter's name says secret. */
function csvRows(m: RegExpExecArray): Replacement {
  const params = (m[3] ?? '').split(',').map((p) => p.trim().split(/\s+/).pop() ?? '');
  const secret = secretColumns(params);
  if (secret.length === 0) return undefined;
  const rows = (m[1] ?? '').replace(/"([^"\n]*)"/g, (_lit, row: string) => {
    const cells = row.split(',');
    for (const i of secret)
      if (cells[i] !== undefined && cells[i].trim().length >= 3) cells[i] = cells[i].replace(cells[i].trim(), REDACTED);
    return `"${cells.join(',')}"`;
  });
  return rows === m[1] ? undefined : m[0].replace(m[1] ?? '', rows);
}

/** A wrapped JWT's runs from its header while they hold the token's parts; each replaced, what stands between kept. */
function wrappedJwt(m: RegExpExecArray): Replacement {
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
}

/** Lines of base64 that open an OpenSSH or DER key, or follow a line naming a private key or secret: each line's base64. */
function keyBodyLines(m: RegExpExecArray): Replacement {
  const before = m.input
    .slice(Math.max(0, m.index - 240), m.index)
    .split('\n')
    .slice(-4)
    .join('\n');
  const opens = /^[^A-Za-z0-9+/]*(?:b3BlbnNzaC1rZXktdjE|MII[A-Za-z0-9+/])/.test(m[0]);
  // Base64 of a key mixes cases and digits (a rule of slashes is none).
  if (!/[A-Z]/.test(m[0]) || !/[a-z]/.test(m[0]) || !/\d/.test(m[0])) return undefined;
  if (!opens && !/private|secret|\bkey\b|passphrase/i.test(before)) return undefined;
  const line = (_line: string, head: string, _b64: string, tail: string): string => `${head}${REDACTED}${tail}`;
  return m[0].replace(new RegExp(`^${B64_LINE}`, 'gm'), line).replace(new RegExp(`^${B64_LAST_LINE}`, 'gm'), line);
}

/** The literals a join call puts together under a secret's name (under a name that only says key, when they look like a token's). */
function joinedLiterals(m: RegExpExecArray): Replacement {
  const name = boundName(m.input, m.index);
  const args = callArguments(m.input, m.index + m[0].length);
  if (name === '' || args === undefined || !/["']/.test(args)) return undefined;
  // Under a name that only says key (`key_data`), the pieces must look like a token's: no blanks, a digit among them.
  const pieces = [...args.matchAll(ONE_LIT)].map((p) => p[1] ?? p[2] ?? '');
  const tokenPieces = pieces.every((p) => !/\s|\\n/.test(p)) && pieces.some((p) => /\d/.test(p));
  if (!isSecretName(name) && !(authName(name) && tokenPieces)) return undefined;
  return { text: m[0] + redactChain(args), length: m[0].length + args.length };
}

/** The parameter names of a method's list (`String user, String oldSecret`). */
const paramNames = (list: string): string[] => splitTopLevel(list).map((p) => p.trim().split(/\s+/).pop() ?? '');

/** JUnit's `@ValueSource(strings = {...})` for a test whose one parameter says secret: every literal of six or more characters. */
function valueSourceRows(m: RegExpExecArray): Replacement {
  const params = paramNames(m[3] ?? '');
  if (params.length !== 1 || secretColumns(params).length === 0) return undefined;
  const values = m[1] ?? '';
  const rows = values.replace(ONE_LIT, (lit: string, dq: string | undefined, sq: string | undefined) => {
    const v = dq ?? sq ?? '';
    return v.length >= 6 && !isPlaceholder(v) ? lit.replace(v, REDACTED) : lit;
  });
  return rows === values ? undefined : m[0].replace(values, rows);
}

/**
 * The rows a JUnit `@MethodSource` provider returns (`Arguments.of("svc", "...")`): the cells whose column the consuming test's
 * parameter names secret. The provider is the method around the call; its consumer names it in `@MethodSource("...")`.
 */
function methodSourceRows(m: RegExpExecArray): Replacement {
  const provider = enclosingName(m.input, m.index);
  if (!provider) return undefined;
  const consumer = new RegExp(
    String.raw`@MethodSource\(\s*(?:value\s*=\s*)?\{?\s*"${provider}"[^)]*\)[^{;]{0,200}?\(([^()]{0,300})\)`,
  ).exec(m.input);
  if (!consumer) return undefined;
  const secret = secretColumns(paramNames(consumer[1] ?? ''));
  return secret.length === 0
    ? undefined
    : redactArguments(
        m,
        () => secret,
        (v) => v.length >= 6,
      );
}

/** A key returned decoded from a literal (`return HexFormat.of().parseHex("...")`) by a method whose name says key or token. */
function decodedKey(m: RegExpExecArray): Replacement {
  const value = m[1] ?? m[2] ?? '';
  if (!authName(enclosingName(m.input, m.index)) || (tokenShape(value) === undefined && !looksRandom(value))) return undefined;
  return m[0].slice(0, m[0].length - value.length - 1) + REDACTED + m[0].slice(-1);
}

export const STRATEGIES: Readonly<Record<Strategy, (m: RegExpExecArray) => Replacement>> = {
  // The stated value without the punctuation that ends its sentence; a credential has a digit.
  prose: (m) => {
    const raw = m[3] ?? '';
    const value = raw.replace(/[.,;:)]+$/, '');
    if (isPlaceholder(value) || !bareCredential(value) || !/\d/.test(value) || /[*<]/.test(value)) return undefined;
    return `${m[1]}${m[2]}${REDACTED}${raw.slice(value.length)}${m[2]}`;
  },
  formatArguments,
  // The first literal from group 1's length on (the default's, unless an argument before it holds the same literal).
  annotationDefault: (m) => {
    const quote = m[2] !== undefined ? '"' : "'";
    const value = m[2] ?? m[3] ?? '';
    const at = m[0].indexOf(`${quote}${value}${quote}`, (m[1] ?? '').length);
    return `${m[0].slice(0, at)}${quote}${REDACTED}${quote}${m[0].slice(at + value.length + 2)}`;
  },
  passwordArguments: (m) =>
    redactArguments(
      m,
      (parts) => {
        // A connect call's password is its third argument (host, user, password) or, with two, its second; a login's its second.
        // Transport.send(message, user, password); paramiko's connect(host, port, user, password): the last argument.
        if (/Transport\.send|ftplib\.FTP/.test(m[0])) return [2];
        if (/LDAPConnection/.test(m[0])) return parts.length >= 4 ? [parts.length - 1] : [];
        if (/^connect\s*\($/.test(m[0].replace(/^new\s+/, ''))) return parts.length >= 3 ? [parts.length - 1] : [];
        const connect = /connect|getConnection/i.test(m[0]);
        return connect ? [parts.length >= 3 ? 2 : 1] : [1];
      },
      passwordLike,
    ),
  keyArguments: (m) =>
    redactArguments(
      m,
      (parts) => parts.map((_p, i) => i),
      (v) => v.length >= 6 && !ALGORITHM.test(v),
    ),
  parametrizedRows,
  csvRows,
  // The credential-shaped words of the 120 characters after the word for a credential; the match ends after the last one, so a word
  // for another credential later in the window starts a match of its own.
  proseInOtherLanguages: (m) => {
    let end = -1;
    const text = m[0].replace(/[!-~]{6,128}/g, (word, at: number) => {
      const value = word.replace(/^[{(\[<"'`]+|[})\]>"'`.,;:?]+$/g, '').replace(/^@code\b/, '');
      if (!statedCredential(value)) return word;
      end = at + word.length;
      return word.replace(value, REDACTED);
    });
    if (end < 0) return undefined;
    const kept = m[0].length - end;
    return { text: text.slice(0, text.length - kept), length: end };
  },
  wrappedJwt,
  keyBodyLines,
  joinedLiterals,
  valueSourceRows,
  methodSourceRows,
  decodedKey,
};

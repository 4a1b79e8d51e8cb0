// The words and value tests the secret rules share (secretRuleSet.ts and secretRuleSetStructure.ts
// refer to them by name, secretStrategies.ts calls them): which names say credential, which values
// stand for none (placeholders, names of settings, prose), and the shapes a credential's value takes
// (random, token-shaped, password-like). Pure and synchronous.

import { saysSecretIntl } from './secretWords';

/** What a redacted value becomes; inside quotes the model still sees a string literal. */
export const REDACTED = '<redacted>';

export interface Redacted {
  text: string;
  /** Values replaced. */
  count: number;
}

/** Words that make a name a credential's (the name split at `_`, `.`, `-`, spaces and camelCase). */
const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'passphrase',
  'pwd',
  'secret',
  'secrets',
  'token',
  'apikey',
  'accesskey',
  'secretkey',
  'privatekey',
  'authorization',
  'credential',
  'credentials',
  'bearer',
  'creds',
  'passcode',
  'passkey',
]);
/** Short keys that hold a password only as a name bound to a literal (`{"pass": "..."}`, `pw = "..."`), not in a list of words. */
export const SHORT_SECRET_KEYS = /^(?:pass|pw|pwd)$/i;
/** Endings that make one run-together word a credential's name (`PGPASSWORD`, `apitoken`, `dbsecret`). */
const SECRET_ENDINGS = /(?:password|passwd|secret|token|apikey|accesskey|secretkey|privatekey|(?:pg|db|sql|smtp|ftp|admin|root|user)pass)$/;
const SECRET_PAIRS = new Set([
  'api key',
  'access key',
  'private key',
  'secret key',
  'auth key',
  'signing key',
  'encryption key',
  'master key',
  'x api',
  'db pass',
  'admin pass',
]);
/** A last word that says the name holds something about the secret, not the secret itself (`PASSWORD_PROMPT`, `token_url`). */
const NOT_A_VALUE = new Set([
  'name',
  'names',
  'prompt',
  'message',
  'msg',
  'label',
  'hint',
  'text',
  'title',
  'field',
  'fields',
  'column',
  'col',
  'env',
  'var',
  'variable',
  'path',
  'file',
  'filename',
  'dir',
  'url',
  'uri',
  'endpoint',
  'type',
  'kind',
  'length',
  'len',
  'size',
  'min',
  'max',
  'regex',
  'pattern',
  'policy',
  'format',
  'count',
  'timeout',
  'ttl',
  'expiry',
  'expires',
  'expiration',
  'param',
  'attr',
  'attribute',
  'error',
  'err',
  'help',
  'placeholder',
  'description',
  'desc',
  'template',
  'prefix',
  'suffix',
  'validator',
  'id',
  'hash',
  'digest',
  'checksum',
  'required',
  'enabled',
  'flag',
  'mode',
  'method',
  'scheme',
  'version',
  'algorithm',
  'alg',
  'encoding',
  'provider',
  'class',
  'service',
  'source',
  'location',
  'host',
  'port',
  'user',
  'username',
  'header',
  'headers',
  'style',
  'widget',
  'input',
  'question',
  'icon',
  'route',
  'state',
  'status',
]);

function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/**
 * Whether an identifier or key (`AWS_SECRET_ACCESS_KEY`, `apiKey`, `db.password`, `X-Api-Key`) names a credential; `tokenizer`,
 * `max_tokens`, `password_prompt` do not.
 */
export function isSecretName(name: string): boolean {
  const w = words(name);
  if (w.length > 0 && NOT_A_VALUE.has(w[w.length - 1]!)) return false;
  // A name in another language (`clave`, `密码`, `kennwort_db`): its last word may be English (`пароль_label` is a label).
  if (saysSecretIntl(name)) return true;
  if (w.length === 0) return false;
  // A header's name (`X-Portal-Key`, `X-Auth-Token`): dashed words ending in one that names the credential.
  if (
    /^(?:X-[A-Za-z0-9]+|[A-Z][a-z0-9]*)(?:-[A-Z][A-Za-z0-9]*)+$/.test(name) &&
    /^(?:key|token|secret|signature|auth|session)$/.test(w[w.length - 1]!)
  )
    return true;
  for (let i = 0; i < w.length; i++) {
    if (SECRET_WORDS.has(w[i]!) || SECRET_ENDINGS.test(w[i]!)) return true;
    if (i + 1 < w.length && SECRET_PAIRS.has(`${w[i]} ${w[i + 1]}`)) return true;
  }
  // `db_pass`, `smtp_pass`: the short form only as the last word.
  return w.length > 1 && (w[w.length - 1] === 'pass' || w[w.length - 1] === 'pw');
}

/** Whole values (any case) that stand for a value rather than being one. */
const PLACEHOLDER_ALTERNATIVES = [
  'none|null|nil|undefined|true|false|yes|no|on|off|auto|enabled|disabled|required|optional',
  String.raw`changeme|change[-_ ]?me|changeit|password|passwd|pass|secret|token|api[-_ ]?key|key`,
  'example|sample|demo|dev|local|foo|bar|baz|dummy|fake|mock|test|testing|todo|tbd|fixme|placeholder',
  String.raw`redacted|hidden|masked|notset|not[-_ ]set|unset|default|empty|string|value|xxx+|\.\.\.+|…|bearer|basic|token\s*`,
];
const PLACEHOLDER_WORDS = new RegExp(`^(?:${PLACEHOLDER_ALTERNATIVES.join('|')})$`, 'i');

/**
 * Values that are clearly not secrets even when bound to a secret's name: placeholders, variable references, names of other settings,
 * prose.
 */
export function isPlaceholder(value: string): boolean {
  const v = value.trim();
  if (v.length < 3 || v.includes(REDACTED)) return true;
  if (PLACEHOLDER_WORDS.test(v)) return true;
  if (/^[$<%{*[]/.test(v) || /^(?:your|my|enter|insert|put)[-_ ]/i.test(v) || /[{<]\s*\w*\s*[}>]$/.test(v)) return true;
  if (/^(.)\1+$/.test(v) || /^[x*#.•-]+$/i.test(v)) return true;
  // An environment variable's or a setting's name (`"DB_PASSWORD"`, `"mail.smtp.password"`), a URL or a path.
  // A part that mixes two or more digits with two or more capitals (`qqeHJqa9mkTA4Ti8ua.p`) is random, not a setting's word.
  const settingName =
    /^[a-z][a-zA-Z0-9]*(?:\.[a-z][a-zA-Z0-9]*)+$/.test(v) && !v.split('.').some((p) => /\d.*\d/.test(p) && /[A-Z].*[A-Z]/.test(p));
  if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(v) || settingName) return true;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v) || /^(?:\.{0,2}\/|~\/)/.test(v)) return true;
  // A name, not a value: snake_case or CamelCase words without digits (`copy_context`, `TokenInfo`).
  if (/^[A-Za-z]+(?:_[A-Za-z]+)+$/.test(v) || /^[A-Z][a-z]+(?:[A-Z][a-z]+)+$/.test(v) || /^[A-Z]{2,5}(?:[A-Z][a-z]+){1,4}$/.test(v))
    return true;
  // An HTTP header's name (`Access-Control-Allow-Credentials`).
  if (/^[A-Z][a-z]+(?:-[A-Z][a-z]+)+$/.test(v)) return true;
  // Prose: a sentence, a question, a label with a colon, a format string.
  if (/\s/.test(v) && (/[:.?!]$/.test(v) || /%[sd]|\{\}/.test(v) || /^[A-Z][a-z]+\s/.test(v))) return true;
  return false;
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const ch of text) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let bits = 0;
  const n = [...text].length;
  for (const c of counts.values()) bits -= (c / n) * Math.log2(c / n);
  return bits;
}

/** A literal that looks random: long, high entropy, several character classes, not a URL or path. */
export function looksRandom(value: string): boolean {
  if (value.length < 24 || /\s/.test(value) || /:\/\/|^[./~]/.test(value)) return false;
  // A hex digest, with or without its algorithm (`sha256:...`, `0x...`) or the image it pins (`postgres@sha256:...`), is not
  // random by shape.
  if (/^(?:[\w./-]+@)?(?:[a-z0-9]+[:$])?(?:0x)?[0-9a-f]{16,}$/i.test(value)) return false;
  // Code and templates (brackets, separators), a value without a digit, an alphabet or a long word.
  if (/[{}()[\]<>|,;\\]/.test(value) || !/\d/.test(value) || /[A-Za-z]{17,}/.test(value)) return false;
  // Paths, dotted names and platform tags: mostly word-like parts (`MAPPINGS/VENDORS/CP037.TXT`, `cpython-311-x86_64-linux-gnu`).
  const parts = value.split(/[/._:@=+-]+/).filter(Boolean);
  const wordy = parts.filter((p) => /^(?:[A-Z]{2,}|[a-z]{3,}|[A-Z][a-z]{2,}(?:[A-Z][a-z]+)*|[a-z]\d{2,})\d*$|^\d+$/.test(p)).length;
  if (parts.length >= 2 && wordy / parts.length >= 0.7) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((r) => r.test(value)).length;
  return classes >= 3 && shannonEntropy(value) > 4.0;
}

/** A bare (unquoted) value that reads like a credential: not a name or a call, has a digit or a symbol. */
export function bareCredential(value: string): boolean {
  if (isPlaceholder(value) || /^\d+$/.test(value)) return false;
  if (/^(?:self|this|cls|os|settings|config|env|process)\b/.test(value) || /[()[\]]/.test(value)) return false;
  return /[\d!@#$%^&*+=/~]/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value) && !/^[A-Za-z_][\w.]*$/.test(value));
}

/** Words that put a token-shaped literal in an authentication context (the name it is bound to, or its line). */
export const AUTH_CONTEXT = new RegExp(
  [
    String.raw`auth|key|secret|token|sig(?:n|nature|ner)?\b|signing|cred|pass|pwd|license|licence|appid|hmac|bearer|fernet|\bpat\b`,
    'twilio|sendgrid|mailgun|mailchimp|stripe|datadog|newrelic|pagerduty',
  ].join('|'),
  'i',
);
/** Names that hold a token-shaped value that is no credential: cache and database keys, digests, ids. */
export const NOT_AUTH_CONTEXT = new RegExp(
  [
    String.raw`(?:^|[^a-z])(?:cache|etag|sort|primary|foreign|partition|row|lookup|idempotency|dedup)[_ -]?key\b`,
    String.raw`(?:^|[^a-z])(?:checksum|digest|hash|sha\d*|md5)[_ -]?key\b`,
    String.raw`(?:^|[^a-z])(?:commit|uuid|namespace|id)[_ -]?key\b|keyboard|keystroke|keyword|monkey|turkey|hotkey`,
  ].join('|'),
  'i',
);

/** A run of 17 or more letters that reads as words (`connectionTimeoutMillis`, all one case), not as random letters. */
function wordRun(value: string): boolean {
  return (value.match(/[A-Za-z]{17,}/g) ?? []).some((r) => /^[a-z]*(?:[A-Z][a-z]+|[A-Z]{2,}(?=[A-Z][a-z]|$))+$|^[a-z]+$|^[A-Z]+$/.test(r));
}

/** Token shapes (bare, without quotes): a hex run, a UUID, base64 / base64url with mixed classes. */
export function tokenShape(value: string): 'hex' | 'uuid' | 'base64' | undefined {
  if (/^[0-9a-fA-F]{32,128}$/.test(value) && /[a-fA-F]/.test(value) && /\d/.test(value)) return 'hex';
  if (/^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(value)) return 'uuid';
  if (
    value.length >= 20 &&
    value.length <= 512 &&
    /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) &&
    /[a-z]/.test(value) &&
    /[A-Z]/.test(value) &&
    /\d/.test(value)
  ) {
    // An image or data in base64 starts with its format's magic; a long word or a name is no token.
    if (/^(?:iVBOR|\/9j\/|R0lGOD|UklGR|PHN2Z|JVBER)/.test(value) || (value.length < 40 && wordRun(value))) return undefined;
    return shannonEntropy(value) > 3.6 ? 'base64' : undefined;
  }
  return undefined;
}

/** A value spelled with letters only is a credential in config text under a password's name, unless it is a placeholder or a name. */
export function configCredential(name: string, value: string): boolean {
  if (isPlaceholder(value) || /^\d+$/.test(value)) return false;
  return bareCredential(value) || (/pass|pwd|secret|cred/i.test(name) && /^[A-Za-z]{4,64}$/.test(value));
}

/** Whether a value could be a password: not a name of code, a number, a host or a path. */
export function passwordLike(value: string): boolean {
  // Dotted words are a host or a name (`smtp.example.com`); with capitals among digits they are a password (`ZxGz8v4N.7r4U.R4`).
  const dotted = /^[\w-]+(?:\.[\w-]+)+$/.test(value) && !(/[A-Z]/.test(value) && /\d/.test(value) && /[a-z]/.test(value));
  if (value.length < 4 || /^\d+$/.test(value) || dotted || /[/\\]/.test(value)) return false;
  return !/^[a-z]+$/.test(value) || value.length >= 6;
}

/** A word of prose that is a credential: ASCII, 6 or more characters, a digit or a symbol inside, not a number, version, URL or path. */
export function statedCredential(value: string): boolean {
  if (value.length < 6 || isPlaceholder(value) || /^[\d.,:/-]+$/.test(value) || /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return false;
  if (/^(?:\.{0,2}\/|~\/)/.test(value) || /^[\w-]+(?:\.[\w-]+)+$/.test(value) || /^[A-Za-z_][\w]*\(\)?$/.test(value))
    return /\d/.test(value) && !/^[\w-]+(?:\.[a-z]{2,})+$/.test(value) && /[A-Z]/.test(value) && /[a-z]/.test(value);
  return /[0-9!@#$%^&*+=~_-]/.test(value);
}

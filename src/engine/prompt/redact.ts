// Credential-looking values are replaced before any text leaves the process (the prompt sent to
// the completion model, the windows sent to an LLM reranker). Pure: text in, text and count out.
// Kept on purpose: hex digests (a sha256 literal in a test has at most 4.0 bits/char, below the
// entropy threshold), URLs and paths, placeholders (`${DB_PASSWORD}`, `<token>`), empty values.

/** What a redacted value becomes; inside quotes the model still sees a string literal. */
export const REDACTED = '<redacted>';

export interface Redacted {
  text: string;
  /** Values replaced. */
  count: number;
}

/** `-----BEGIN ... PRIVATE KEY-----` up to its END line (or the end of the text, when a snippet is cut). */
const PRIVATE_KEY_BLOCK = /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)/g;

/** Token formats whose shape alone says "credential". */
const KNOWN_FORMATS: readonly RegExp[] = [
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, // AWS access key id
  /\bgh[pousr]_[A-Za-z0-9]{30,255}\b/g, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{22,255}\b/g, // GitHub fine-grained tokens
  /\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, // Slack
  /\bsk-(?:proj-|ant-|live_|test_)?[A-Za-z0-9_-]{20,}\b/g, // OpenAI / Anthropic / Stripe-style secret keys
];

/** Words that make an assigned name a credential's (the name split at `_`, `.`, `-` and camelCase). */
const SECRET_WORDS = new Set(['password', 'passwd', 'passphrase', 'secret', 'token', 'apikey', 'accesskey', 'secretkey', 'privatekey']);
const SECRET_PAIRS = new Set(['api key', 'access key', 'private key', 'secret key', 'auth key']);

/** Whether an identifier (`AWS_SECRET_ACCESS_KEY`, `apiKey`, `db.password`) names a credential; `tokenizer` or `max_tokens` do not. */
export function isSecretName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  for (let i = 0; i < words.length; i++) {
    if (SECRET_WORDS.has(words[i]!)) return true;
    if (i + 1 < words.length && SECRET_PAIRS.has(`${words[i]} ${words[i + 1]}`)) return true;
  }
  return false;
}

/** Values that are clearly not secrets even when assigned to a secret's name. */
function isPlaceholder(value: string): boolean {
  return value === REDACTED || /^[$<%{*]/.test(value) || /^(?:none|null|nil|true|false|changeme|xxx+|\.\.\.)$/i.test(value);
}

/** name (optionally quoted, as a dict/JSON key) = / : / => / := "literal" (Python, Java, JS, YAML, JSON). */
const QUOTED_ASSIGNMENT = /([A-Za-z_][\w.-]{0,63})(["']?)(\s*(?::=|=>|=|:)\s*)([rbuRBU]{0,2})(?:"([^"\s\\]{4,512})"|'([^'\s\\]{4,512})')/g;

/** .properties / YAML / .env lines with an unquoted value: `db.password=hunter2`, `token: abc123`. */
const UNQUOTED_ASSIGNMENT = /^([ \t]*(?:export[ \t]+)?)([A-Za-z_][\w.-]{0,63})([ \t]*[=:][ \t]*)([^\s'"#;,(){}[\]]{4,})[ \t]*$/gm;

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
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((r) => r.test(value)).length;
  return classes >= 3 && shannonEntropy(value) > 4.0;
}

const STRING_LITERAL = /"([^"\s\\]{24,1024})"|'([^'\s\\]{24,1024})'|`([^`\s\\]{24,1024})`/g;

/** Replace credential-looking values in `text` with REDACTED; counts the values replaced. */
export function redactSecrets(text: string): Redacted {
  let count = 0;
  let out = text.replace(PRIVATE_KEY_BLOCK, (_m, kind: string) => {
    count++;
    return `-----BEGIN ${kind}PRIVATE KEY-----\n${REDACTED}\n-----END ${kind}PRIVATE KEY-----`;
  });
  for (const format of KNOWN_FORMATS) {
    out = out.replace(format, () => {
      count++;
      return REDACTED;
    });
  }
  out = out.replace(QUOTED_ASSIGNMENT, (m, name: string, keyQuote: string, op: string, prefix: string, dq: string | undefined, sq: string | undefined) => {
    const value = dq ?? sq ?? '';
    if (!isSecretName(name) || isPlaceholder(value)) return m;
    count++;
    const q = dq !== undefined ? '"' : "'";
    return `${name}${keyQuote}${op}${prefix}${q}${REDACTED}${q}`;
  });
  out = out.replace(UNQUOTED_ASSIGNMENT, (m, lead: string, name: string, op: string, value: string) => {
    if (!isSecretName(name) || isPlaceholder(value) || /^(?:self|this|cls)\./.test(name)) return m;
    // Code assigns names and calls (`token = self.token`, `password: str`); a literal has digits or symbols, or sits under a dotted settings key.
    const identifier = /^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$/.test(value);
    const settingsKey = /[.-]/.test(name);
    if (/^\d+$/.test(value) || (identifier && (!settingsKey || value.includes('.')) && !/\d/.test(value))) return m;
    count++;
    return `${lead}${name}${op}${REDACTED}`;
  });
  out = out.replace(STRING_LITERAL, (m: string, dq: string | undefined, sq: string | undefined, bq: string | undefined) => {
    const value = dq ?? sq ?? bq ?? '';
    if (!looksRandom(value)) return m;
    count++;
    const q = m[0]!;
    return `${q}${REDACTED}${q}`;
  });
  return { text: out, count };
}

// The secret rules as data, in the order they run (secretRules.ts applies them): first the rules of
// the forms the first two corpora hold (test/fixtures/secrets, secrets-v2): token formats and key
// blocks, URL userinfo and authorization values, literals and chains bound to a name that says
// secret, connection-string, netrc and curl credentials, comments, config lines, settings inside
// strings, prose and token shapes in an authentication context; then the rules of the third
// (secretRuleSetStructure.ts). A record says what it matches, which checks of secretStrategies.ts a
// match must pass and what it becomes (secretRuleTypes.ts).

import {
  ANNOTATION,
  AUTH_TUPLE_START,
  COMMENT_START,
  CREDENTIAL_KEYS,
  LIT,
  LIT_CHAIN,
  NAME,
  NAME_INTL,
  NETRC_GAP,
  NOT_A_SETTER,
  QUOTED_SECRET_KEY,
  SAYS_SECRET,
  SAYS_SECRET_INTL,
  SECRET_NOUN,
  SETTING_BEFORE,
  SETTING_NAME,
  SETTING_SEPARATOR,
  SETTING_VALUE,
  STATED_VALUE,
  STATES,
  TOKEN_KEPT,
  TOKEN_WHOLE,
} from './secretPatterns';
import { STRUCTURE_RULES } from './secretRuleSetStructure';
import type { SecretRule } from './secretRuleTypes';
import { REDACTED } from './secretVocabulary';

/** What follows a name bound to a literal or a chain (`=`, `: str =`, `:`), without `:=` and `=>`. */
const BINDS = String.raw`(\s*(?::\s*[\w.[\], |]{1,40}?\s*=(?!=)|=(?!=)|:)\s*)`;
/** The same with `:=` and `=>` (a bound literal). */
const BINDS_ANY = String.raw`(\s*(?::\s*[\w.[\], |]{1,40}?\s*=(?!=)|:=|=>|=(?!=)|:)\s*)`;
/** A name or key that says secret, before a binding (groups: the name, its closing quote). */
const SECRET_NAME_AT = String.raw`(?<![\w.-])${SAYS_SECRET}(${NAME})(["']?)`;
/** The same in any script (with the `u` flag). */
const SECRET_NAME_AT_INTL = String.raw`(?<![\p{L}\p{N}_.-])${SAYS_SECRET_INTL}(${NAME_INTL})(["']?)`;

/** A chain given to a name that says secret: a plain name, not a placeholder's chain; every piece is the value. */
const CHAIN_CHECKS = [
  { group: 1, is: /^[\p{L}\p{N}_.\- ]+$/u },
  { group: 1, is: 'secretName' },
  { group: 4, not: 'placeholderChain' },
] as const;

/** A quoted key that says secret and its literal value (either quote in each): the pair is a secret bound to its name. */
const BOUND_QUOTED_PAIR = [
  {
    pair: [
      [1, 2],
      [3, 4],
    ],
    is: 'boundSecret',
  },
] as const;

const CONTEXT_RULES: readonly SecretRule[] = [
  {
    // -----BEGIN ... PRIVATE KEY----- up to its END line, or the end of the text when a snippet is cut.
    name: 'private key block',
    pattern: /-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)/g,
    out: { parts: ['-----BEGIN ', 1, 'PRIVATE KEY-----\n', REDACTED, '\n-----END ', 1, 'PRIVATE KEY-----'] },
  },
  {
    // Token prefixes secretlint knows only in a stricter shape (checksummed, fixed length); AWS's documentation keys end in EXAMPLE.
    name: 'token prefix',
    pattern: new RegExp(String.raw`\b(?:${TOKEN_WHOLE.join('|')})`, 'g'),
    checks: [{ group: 0, not: /EXAMPLE/ }],
    out: { parts: [REDACTED] },
  },
  {
    // Webhook URLs and DSNs whose path or user part is the credential: the host and the fixed path stay (each format: kept, secret).
    name: 'token URL',
    pattern: new RegExp(TOKEN_KEPT.map((p) => `(?:${p})`).join('|'), 'g'),
    out: { alternatives: TOKEN_KEPT.map((_p, i) => ({ group: 2 * i + 1, parts: [2 * i + 1, REDACTED] })) },
  },
  {
    // scheme://user:password@host — the password only (a scheme may hold `_`: `kafka+sasl_ssl://`).
    name: 'URL userinfo',
    pattern: /\b([a-z][a-z0-9+._-]{1,20}:\/\/[^\s:/@"'<>]{0,64}:)([^\s@/"'<>]{1,128})@/gi,
    checks: [
      { group: 2, not: 'placeholder' },
      { group: 2, not: /^(?:pass|pwd|pw|secret)$/i },
    ],
    out: { parts: [1, REDACTED, '@'] },
  },
  {
    // Oracle's `user/password@host` after its JDBC prefix: `jdbc:oracle:thin:scott/<password>@//db:1521/ORCL` — the password only.
    name: 'Oracle userinfo',
    when: /jdbc:oracle:/i,
    // The password ends at the `@` before the host (`//host`, `host:port`, `host/service`): it may hold an `@` of its own.
    pattern: /\b(jdbc:oracle:(?:thin|oci8?):[A-Za-z_][\w$#]{0,29}\/)([^\s/"'<>]{1,128}?)@(?=\/\/|[\w.-]+[:/])/gi,
    checks: [{ group: 2, not: 'placeholder' }],
    out: { parts: [1, REDACTED, '@'] },
  },
  {
    // Authorization values: `Bearer <token>`, `Basic <base64>`, `Token <token>`.
    name: 'authorization value',
    pattern: /\b(Bearer|Basic|Token)[ \t]+([A-Za-z0-9._~+/-]{12,}=*)/gi,
    checks: [{ group: 2, is: 'authorizationToken' }],
    out: { parts: [1, ' ', REDACTED] },
  },
  {
    // A secret's name given a chain of literals (`+`, implicit concatenation, a line continuation) or one literal in parentheses
    // (black's `SECRET_KEY = (\n    "..."\n)`): every piece is the value.
    name: 'literal chain',
    pattern: new RegExp(String.raw`${SECRET_NAME_AT}${BINDS}(${LIT_CHAIN})`, 'gi'),
    checks: CHAIN_CHECKS,
    out: { chain: 4 },
  },
  {
    name: 'literal chain (other languages)',
    intl: true,
    pattern: new RegExp(String.raw`${SECRET_NAME_AT_INTL}${BINDS}(${LIT_CHAIN})`, 'giu'),
    checks: CHAIN_CHECKS,
    out: { chain: 4 },
  },
  {
    // A value in a connection string, SAS URL or .npmrc under a key that holds the credential whatever its shape:
    // `AccountKey=...`, `SharedAccessKey=...`, `sig=...`, `:_authToken=...`, `,password=...` (Redis), `;Pwd=...`.
    name: 'credential key',
    pattern: new RegExp(String.raw`(^|[?&;,:"'\s]|\\[nrt])(${CREDENTIAL_KEYS})(=)([^\s&;"',\\<>]{3,512})`, 'gim'),
    checks: [
      { group: 4, not: 'placeholder' },
      { pair: [2, 4], is: 'credentialKey' },
    ],
    out: { parts: [1, 2, 3, REDACTED] },
  },
  {
    // netrc text: `machine h login u password p`, on one line or several (also with escaped line breaks in a literal).
    name: 'netrc',
    pattern: new RegExp(
      String.raw`\b(login|user)(${NETRC_GAP}[^\s"'\\]{1,128}${NETRC_GAP}(?:password|passwd|account)(?:[ \t]|\\t){1,10})([^\s"'\\]{3,128})`,
      'g',
    ),
    checks: [{ group: 3, not: 'placeholder' }],
    out: { parts: [1, 2, REDACTED] },
  },
  {
    // curl's `-u user:password` / `--user user:password`, in a command line or as list arguments (`"-u", "user:password"`).
    name: 'curl user',
    pattern: /(\s|["'])(-u|--user)((?:["']?\s*,\s*["']|[ \t=]+["']?))([^\s:"'$]{1,64}):([^\s"'@]{3,128})/g,
    checks: [
      { group: 5, not: 'placeholder' },
      { group: 5, not: /^\$/ },
    ],
    out: { parts: [1, 2, 3, 4, ':', REDACTED] },
  },
  {
    // A pair bound to a credentials name: `creds = ("svc", "...")`, `LOGIN = ("user", "...")`: the second literal is the password.
    name: 'credential pair',
    pattern: new RegExp(
      String.raw`(?<![\w.-])(?=\w{0,60}?(?:cred|login|auth|account))([A-Za-z_]\w{0,63})` +
        String.raw`(\s*(?::\s*[\w.[\], |]{1,40}?\s*)?=\s*[([]\s*)${LIT}(\s*,\s*)${LIT}`,
      'gi',
    ),
    checks: [
      { group: 1, is: /(?:^|_)(?:creds?|credentials?|login|logins|auth|basic_auth|account)$/i },
      { group: [6, 7], not: 'placeholder' },
    ],
    out: { literal: 6 },
  },
  {
    // A call given a constant that names a credential and a literal: `env.put(Context.SECURITY_CREDENTIALS, "...")`.
    name: 'constant key call',
    pattern: new RegExp(String.raw`\(\s*((?:[A-Za-z_]\w*\.)*[A-Z][A-Z0-9_]{2,63})\s*,\s*${LIT}\s*\)`, 'g'),
    checks: [
      { group: 1, is: 'secretConstant' },
      { group: [2, 3], not: 'placeholder' },
    ],
    out: { literal: 2 },
  },
  {
    // PEM body lines without their header (split or cut off): a literal of base64 ending in an escaped line break.
    name: 'key body line',
    pattern: /(["'])([A-Za-z0-9+/]{40,76}={0,2})\\n\1/g,
    checks: [{ group: 2, is: 'tokenOrRandom' }],
    out: { parts: [1, REDACTED, '\\n', 1] },
  },
  {
    // config["db_password"] = "...", os.environ["API_TOKEN"] = "...", headers['X-Api-Key'] = '...'.
    name: 'subscript assignment',
    pattern: new RegExp(String.raw`\[\s*${QUOTED_SECRET_KEY}\s*\]\s*(?:${ANNOTATION})?=(?!=)\s*${LIT}`, 'gi'),
    checks: BOUND_QUOTED_PAIR,
    out: { literal: 3 },
  },
  {
    // A quoted key and its value as a call's two arguments: p.put("mail.smtp.password", "..."),
    // p.setProperty("password", "..."), os.environ.setdefault("API_TOKEN", "..."), Map.of("apiKey", "...").
    name: 'key-value call',
    pattern: new RegExp(String.raw`${QUOTED_SECRET_KEY}\s*,\s*${LIT}`, 'gi'),
    checks: BOUND_QUOTED_PAIR,
    out: { literal: 3 },
  },
  {
    // The tuple given to `auth` and the credential constructors: the second literal is the password.
    name: 'auth tuple',
    pattern: new RegExp(String.raw`(?:${AUTH_TUPLE_START})\s*${LIT}\s*,\s*${LIT}`, 'g'),
    checks: [{ group: [3, 4], not: 'placeholder' }],
    out: { literal: 3 },
  },
  {
    // name = "...", name: str = "...", "name": "...", name => "...", name := "...", keyword="...".
    name: 'bound literal',
    pattern: new RegExp(`${SECRET_NAME_AT}${BINDS_ANY}${LIT}`, 'gi'),
    checks: [{ pair: [1, [4, 5]], is: 'boundSecretOrShortKey' }],
    out: { literal: 4 },
  },
  {
    name: 'bound literal (other languages)',
    intl: true,
    pattern: new RegExp(`${SECRET_NAME_AT_INTL}${BINDS_ANY}${LIT}`, 'giu'),
    checks: [{ pair: [1, [4, 5]], is: 'boundSecretOrShortKey' }],
    out: { literal: 4 },
  },
  {
    // A setter or builder method named for a secret, given one literal: setPassword("..."), .password("..."), withApiKey("...").
    name: 'setter call',
    pattern: new RegExp(String.raw`\.(?:set|with|use|update|change)?_?([A-Za-z][A-Za-z0-9_]{1,40})\s*\(\s*${LIT}\s*\)`, 'g'),
    checks: [
      { group: 1, not: NOT_A_SETTER },
      { group: 1, is: 'secretName' },
      { group: [2, 3], is: 'bareCredential' },
    ],
    out: { literal: 2 },
  },
  {
    // A comment that states a password: `# old admin password: ...`, `// the token is "..."` (groups: the head, the quote, the value).
    name: 'comment',
    pattern: new RegExp(
      String.raw`(${COMMENT_START}[^\n]*?(?:^|[\s(])${SECRET_NOUN}\b(?:[ \t]+[A-Za-z]+){0,3}?${STATES})` + STATED_VALUE,
      'gim',
    ),
    checks: [
      { group: 3, not: 'placeholder' },
      { pair: [2, 3], is: 'commentValue' },
    ],
    out: { parts: [1, 2, REDACTED, 2] },
  },
  {
    // .properties / YAML / .env / INI lines with an unquoted value: `db.password=hunter2`, `token: abc123`, a YAML list's
    // `- routing_key: <random>`.
    name: 'config line',
    pattern: /^([ \t]*(?:export[ \t]+|-[ \t]+)?)([A-Za-z_][\w.-]{0,63})([ \t]*[=:][ \t]*)([^\s'"#;,(){}[\]]{4,})[ \t]*$/gm,
    checks: [{ pair: [2, 4], is: 'configLine' }],
    out: { parts: [1, 2, 3, REDACTED] },
  },
  {
    // Inside a string: connection strings and query strings (`;Password=...;`, `?password=...&`), command lines (`--password=...`).
    name: 'inline setting',
    pattern: new RegExp(SETTING_BEFORE + SETTING_NAME + SETTING_SEPARATOR + SETTING_VALUE, 'gm'),
    checks: [{ match: 'inlineSetting' }],
    out: { parts: [1, 2, 3, REDACTED] },
  },
  {
    // A default in a settings placeholder: `${db.password:...}` (Spring), `${DB_PASSWORD:-...}` (shell, compose), and a token-shaped
    // one under a key's name (`${ingest.hmac-key:...}`).
    name: 'placeholder default',
    pattern: /(\$\{([\w.-]{1,64}):-?)([^}\s]{3,200})\}/g,
    checks: [
      { pair: [2, 3], is: 'secretKeyOrAuthToken' },
      { group: 3, not: 'placeholder' },
    ],
    out: { parts: [1, REDACTED, '}'] },
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
    out: { strategy: 'prose' },
  },
  {
    // A token-shaped literal (hex of 32 or more, UUID, base64 with mixed classes) bound to a name, or on a line, that says
    // authentication: `TWILIO_AUTH = "<hex>"`, `.key("<base64>")`, `AUTH = "<uuid>"`.
    name: 'token shape in auth context',
    pattern: /(["'])([A-Za-z0-9+/=_-]{20,512})\1/g,
    checks: [{ group: 2, is: 'tokenShape' }, { match: 'authContextAround' }],
    out: { parts: [1, REDACTED, 1] },
  },
];

/** The rules, in order. */
export const SECRET_RULES: readonly SecretRule[] = [...CONTEXT_RULES, ...STRUCTURE_RULES];

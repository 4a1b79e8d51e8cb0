// The pieces the secret rules' regular expressions are built from (secretRuleSet.ts,
// secretRuleSetStructure.ts): a string literal and its groups, names in any script and the cheap
// look-ahead that a name says secret, the calls whose arguments hold a user and a password or a key,
// and the separators of settings, comments and netrc text. Built once, when the module loads.

import { INTL_SECRET_ALTERNATION, INTL_SECRET_STEM } from './secretWords';
import { TOKEN_FORMATS } from './tokenFormats';

// A string literal: optional Python prefix, then "..." or '...' with escapes, on one line.
export const LIT = String.raw`[rRbBuUfF]{0,2}(?:"((?:[^"\\\n]|\\.){1,512})"|'((?:[^'\\\n]|\\.){1,512})')`;
export const NAME = String.raw`[A-Za-z_][\w.-]{0,63}`;
/** A name or key in any script (`clave`, `пароль`, `密码`), for the rules' variants that carry the `u` flag. */
export const NAME_INTL = String.raw`[\p{L}_][\p{L}\p{N}_.-]{0,63}`;
/** Ahead of a name or key: it holds one of the words isSecretName looks for (most candidates fail here, cheaply). */
export const SAYS_SECRET = String.raw`(?=[^"'\n=:,()]{0,64}?(?:pass|pw|secret|token|key|auth|cred|bearer|cookie))`;
/** The same for a name in another language. */
export const SAYS_SECRET_INTL = String.raw`(?=[^"'\n=:,()]{0,64}?(?:${INTL_SECRET_ALTERNATION}))`;
/** A Java char literal (`'t'`, `'\''`, `'\u0041'`): a string written a character at a time is a run of them. */
export const CHAR_LIT = String.raw`'(?:[^'\\\n]|\\[^\n]{1,6}?)'`;
/**
 * A letter of a script beyond ASCII (Latin with accents and Vietnamese's, Greek, Cyrillic, Hebrew, Arabic, Devanagari, Thai, kana,
 * CJK, Hangul): prose in another language.
 */
export const BEYOND_ASCII =
  /[\u00C0-\u024F\u0370-\u052F\u0590-\u06FF\u0900-\u097F\u0E00-\u0E7F\u1E00-\u1EFF\u3040-\u30FF\u4E00-\u9FFF\uAC00-\uD7AF]/;
/** Whether a text holds a credential word of another language: the rules for names and prose in other languages run only then. */
export const INTL_WORD = new RegExp(INTL_SECRET_STEM, 'iu');

/** Token formats whose whole match is the credential, as one alternation. */
export const TOKEN_WHOLE = TOKEN_FORMATS.filter((f) => !f.keep).map((f) => f.pattern);
/** Token formats with a part to keep (a webhook's URL): each gives two groups, kept and secret. */
export const TOKEN_KEPT = TOKEN_FORMATS.filter((f) => f.keep).map((f) => f.pattern);

/** A quoted key that says it holds a secret (its name: group 1 in double quotes, 2 in single). */
export const QUOTED_SECRET_KEY = String.raw`(?:"${SAYS_SECRET}([^"\n]{1,64})"|'${SAYS_SECRET}([^'\n]{1,64})')`;
/** A type annotation before an assignment (`: str`, `: Optional[str]`). */
export const ANNOTATION = String.raw`:\s*[\w.[\], |]{1,40}?\s*`;

/** Calls whose first two arguments are a user name and a password. */
export const CREDENTIAL_CALLS = [
  'HTTPBasicAuth',
  'HTTPDigestAuth',
  'HTTPProxyAuth',
  'BasicAuth',
  'DigestAuth',
  'UsernamePasswordCredentials',
  'PasswordAuthentication',
  'UsernamePasswordAuthenticationToken',
  'BasicAWSCredentials',
  String.raw`AwsBasicCredentials\.create`,
  'login',
  'basic_auth',
  'BasicAuthentication',
];
/** Where a (user, password) pair of literals starts: `auth=(`, a credential call, `getConnection(url, `. */
export const AUTH_TUPLE_START = [
  String.raw`\bauth\s*=\s*[([]`,
  String.raw`\b(?:${CREDENTIAL_CALLS.join('|')})\s*\(`,
  String.raw`\bgetConnection\s*\(\s*[^,()\n]{1,120},`,
].join('|');

/** Method names that read, test or transform a secret rather than set one. */
export const NOT_A_SETTER_VERBS = [
  'get|has|is|check|validate|verify|hash|encode|decode|encrypt|decrypt|read|load',
  'fetch|find|reset|matches|compare|require|prompt|ask|print|log|format|parse',
];
export const NOT_A_SETTER = new RegExp(`^(?:${NOT_A_SETTER_VERBS.join('|')})`, 'i');

/** A comment's start: `#`, `//`, `/*`, a block comment's `*` line, SQL's `--`. */
export const COMMENT_START = String.raw`(?:#|\/\/|\/\*|^[ \t]*\*|--)`;
export const SECRET_NOUN = String.raw`(?:password|passwd|pwd|passphrase|secret|token|api[ _-]?key|credentials?)`;
/** `: `, `= `, ` is `, ` was `, ` are `: the comment states the value. */
export const STATES = String.raw`(?:[ \t]*[:=][ \t]*|[ \t]+(?:is|was|are)[ \t]+)`;
/** The stated value, quoted (group 2: its quote) or bare. */
export const STATED_VALUE = '(["\'`]?)([^\\s"\'`]{4,128})\\2';

/** Before an inline setting: an escaped line break, a separator of a query or connection string, a quote, a space or the line start. */
export const SETTING_BEFORE = String.raw`(\\[nrt]|[?&;"'\s]|^)`;
/** A command-line flag (`--password`) or a key (`Password`, `db.password`). */
export const SETTING_NAME = String.raw`(-{1,2}[A-Za-z][\w-]{0,40}(?=[= \t])|[A-Za-z_][\w.-]{0,40}(?=[ \t]*[=:]))`;
export const SETTING_SEPARATOR = String.raw`(=|[ \t]+(?=\S)|[ \t]*[=:][ \t]+)`;
export const SETTING_VALUE = String.raw`([^\s&;"'<>(),\\]{4,200})`;

/** Keys of connection strings, SAS URLs and .npmrc whose value is the credential whatever its shape. */
export const CREDENTIAL_KEYS = [
  'AccountKey|SharedAccessKey|SharedAccessSignature|sig',
  '_authToken|_auth|_password|password|passwd|pwd|PGPASSWORD',
].join('|');

/** Blanks between netrc's words: spaces, line breaks, or escaped ones inside a literal. */
export const NETRC_GAP = String.raw`(?:[ \t\n]|\\[nt]){1,40}`;

/** Literals joined by `+`, implicit concatenation or a line continuation, after an optional `(`; or one literal in parentheses. */
export const LIT_CHAIN = String.raw`\(?\s*${LIT}(?:(?:\s|\\(?=\n)|\+){1,40}${LIT}){1,8}\s*\)?|\(\s*${LIT}\s*,?\s*\)`;
export const ONE_LIT = /[rRbBuUfF]{0,2}(?:"((?:[^"\\\n]|\\.){1,512})"|'((?:[^'\\\n]|\\.){1,512})')/g;

/** Algorithm and encoding names, given beside a key to a signing call. */
export const ALGORITHM = /^(?:[HRPE]S\d{3}|Hmac\w*|HMAC\w*|AES\w*|RSA\w*|SHA-?\d+\w*|utf-?8|UTF-?8|ascii|base64|hex)$/i;

/** Calls whose arguments after the first (the user or the connection) hold a password. */
export const PASSWORD_CALLS = [
  String.raw`Credentials\.basic`,
  String.raw`simple_bind(?:_s)?|bind_s`,
  'login',
  'authenticate',
  String.raw`(?:set|with)?[Bb]asic[Aa]uth(?:entication)?`,
  'HTTPBasicAuth',
  'HTTPDigestAuth',
  'PasswordAuthentication',
  'UsernamePasswordCredentials',
  'UsernamePasswordAuthenticationToken',
  'SimpleCredentials',
  'PasswordCredential',
  String.raw`(?:psycopg2?|pymysql|pymssql|mysql\.connector|pyodbc|cx_Oracle|oracledb|pg8000)\.connect`,
  // ldap3's Connection(server, user, password): the connect rule takes its third argument.
  String.raw`ldap3\.Connection`,
  // ftplib's FTP(host, user, passwd): the third; UnboundID's LDAPConnection(host, port, bindDN, password): the last.
  String.raw`ftplib\.FTP(?:_TLS)?`,
  'LDAPConnection',
  String.raw`DriverManager\.getConnection`,
  'getConnection',
  'connect',
  String.raw`Transport\.send`,
].join('|');
/** Calls whose literal arguments are a signing or encryption key (with algorithm names beside them). */
export const KEY_CALLS = [
  'signWith',
  'setSigningKey',
  'hmacShaKeyFor',
  String.raw`HMAC(?:256|384|512)`,
  'SecretKeySpec',
  'withSecret',
  String.raw`jwt\.(?:encode|decode)`,
  String.raw`hmac\.new`,
  'Fernet',
].join('|');
/** Calls that encode their argument for a header: a `user:password` literal given to one is a credential pair. */
export const ENCODE_CALLS = String.raw`encodeToString|b64encode|urlsafe_b64encode|encodebytes|btoa|encodeBase64String`;
/** A line of 60 or more base64 characters alone, after a comment mark or a quote (groups: the head, the base64, the tail). */
export const B64_LINE = String.raw`([ \t]*(?:#|\/\/|\*|["'])?[ \t]*)([A-Za-z0-9+/]{60,}={0,2})([ \t]*(?:["'](?:\s*[+,])?)?[ \t]*)$`;
/** A key body's last line, shorter than the others (the same groups). */
export const B64_LAST_LINE = String.raw`([ \t]*(?:#|\/\/|\*|["'])?[ \t]*)([A-Za-z0-9+/]{16,59}={0,2})([ \t]*(?:["'](?:\s*[+,])?)?[ \t]*)$`;
/** What may stand between a wrapped JWT's parts: blanks, quotes, `+`, comment marks, escaped line breaks. */
export const JWT_GAP = String.raw`(?:[\s"'+#*/]|\\n)`;
/** Cookie and session names whose value is the session itself. */
export const SESSION_COOKIES = [
  String.raw`SESSION|JSESSIONID|PHPSESSID|ASP\.NET_SessionId|session(?:id|_id)?|sid|connect\.sid`,
  String.raw`remember[-_]?me|auth_?token|access_?token|XSRF-TOKEN|csrftoken`,
].join('|');

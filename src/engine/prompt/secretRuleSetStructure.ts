// The secret rules of the third corpus (test/fixtures/secrets-v3) as data, in the order they run
// after those of secretRuleSet.ts: the argument in a DSN's password slot, ODBC braces, escaped
// JSON, build-script settings, XML, annotation defaults, password and key arguments of known calls,
// encoded user:password pairs, cookies and key-named headers, test rows, suppliers, prose in other
// languages, key material lines and wrapped JWTs, joins and builders; and last the random literal.
// Most run behind a cheap test (`when`) of the text: their anchor is rare in a prompt.

import {
  B64_LAST_LINE,
  B64_LINE,
  BEYOND_ASCII,
  CHAR_LIT,
  CREDENTIAL_KEYS,
  ENCODE_CALLS,
  JWT_GAP,
  KEY_CALLS,
  LIT,
  NAME,
  NAME_INTL,
  PASSWORD_CALLS,
  SAYS_SECRET,
  SAYS_SECRET_INTL,
  SECRET_NOUN,
  SESSION_COOKIES,
} from './secretPatterns';
import type { Check, SecretRule } from './secretRuleTypes';
import { REDACTED } from './secretVocabulary';
import { INTL_SECRET_STEM } from './secretWords';

/** 120 characters of prose after a word for a credential, into the next line where the comment goes on there (` * `, `#`, `//`). */
/** The names a `parametrize` call gives its columns: one literal (`"user,pw"`) or a tuple or list of literals. */
const PARAM_NAMES = String.raw`[rRbBuU]{0,2}(?:"[^"\n]*"|'[^'\n]*')|[(\[](?:\s*[rRbBuU]{0,2}(?:"[^"\n]*"|'[^'\n]*')\s*,?)+\s*[)\]]`;
const PROSE_WINDOW = String.raw`(?:[^\n]|\n[ \t]*(?:\*(?!\/)|#|\/\/)){0,120}`;

/** A setting's name, not a word of prose (`pass 'ignore'`, `the token "NUMBER"`), that says secret; its literal no placeholder. */
const SPACED_SETTING_CHECKS: readonly Check[] = [
  { group: 2, is: /^[\p{L}_]\w*$/u },
  { group: 2, not: /^(?:pass|token|secret|key|keys|password)$/i },
  { group: 2, is: 'secretName' },
  { group: [4, 5], not: 'placeholder' },
];
/** A call given a name that says secret and a literal (groups: the name, the literal). */
const NAMED_LITERAL_CHECKS: readonly Check[] = [
  { group: 1, is: 'secretName' },
  { group: [2, 3], not: 'placeholder' },
];

export const STRUCTURE_RULES: readonly SecretRule[] = [
  {
    // A format string whose password slot (`://user:%s@`, `:{}@`, `password=%s`, `PWD={}`) is filled by `%` or `.format(...)`:
    // the argument in that slot is the credential.
    name: 'format arguments',
    when: /["']\s*(?:%\s*\(|\.format\()/,
    pattern: new RegExp(String.raw`${LIT}\s*(?:%\s*\(|\.format\()`, 'g'),
    out: { strategy: 'formatArguments' },
  },
  {
    // ODBC and ADO connection strings quote a value in braces: `PWD={...};`.
    name: 'braced setting',
    when: /=\{/,
    pattern: /(\b(?:PWD|Pwd|pwd|PASSWORD|Password|password|AccountKey|SharedAccessKey)=\{)([^{}\n]{3,200})\}/g,
    checks: [{ group: 2, not: 'placeholder' }],
    out: { parts: [1, REDACTED, '}'] },
  },
  {
    // JSON inside a literal with escaped quotes: `"{\"password\":\"...\"}"` (the value ends before the closing `\"`).
    name: 'escaped key',
    when: /\\["\']/,
    pattern: new RegExp(String.raw`\\(["'])(${NAME})\\\1\s*:\s*\\\1((?:[^"'\\\n]|\\(?!\1)[^\n]){1,256}?)\\\1`, 'gu'),
    checks: [
      { pair: [2, 3], is: 'secretKeyOrAuthToken' },
      { group: 3, not: 'placeholder' },
    ],
    out: { inner: 3, end: 2 },
  },
  {
    // Build scripts and config DSLs set a value without `=`: Gradle's `keyPassword 'x'`, `storePassword "x"`.
    name: 'spaced setting',
    // A setting's name ends in the word for the secret, right before its literal (`keyPassword '...'`).
    when: /(?:pass(?:word|wd)?|secret|token|key)[ \t]+[rRbBuUfF]{0,2}["']/i,
    pattern: new RegExp(String.raw`(^[ \t]*|[{;][ \t]*|(?<=["'])[ \t]+)${SAYS_SECRET}(${NAME})([ \t]+)${LIT}`, 'gim'),
    checks: SPACED_SETTING_CHECKS,
    out: { literal: 4 },
  },
  {
    name: 'spaced setting (other languages)',
    intl: true,
    pattern: new RegExp(String.raw`(^[ \t]*|[{;][ \t]*|(?<=["'])[ \t]+)${SAYS_SECRET_INTL}(${NAME_INTL})([ \t]+)${LIT}`, 'gimu'),
    checks: SPACED_SETTING_CHECKS,
    out: { literal: 4 },
  },
  {
    // XML text (Maven settings, Spring config) in a literal or a comment: `<password>...</password>`.
    name: 'xml element',
    when: /<\/\w/,
    pattern: new RegExp(String.raw`<(${NAME})>([^<>\n]{3,256})</\1>`, 'gu'),
    checks: [
      { group: 1, is: 'secretName' },
      { group: 2, not: 'placeholder' },
    ],
    out: { parts: ['<', 1, '>', REDACTED, '</', 1, '>'] },
  },
  {
    // A header parameter's default in an annotation that names a key or token: `@RequestHeader(value = "X-Api-Key", defaultValue = "...")`.
    name: 'annotation default',
    when: /defaultValue/,
    pattern: new RegExp(String.raw`@\w+\(([^()\n]{0,200}?)\bdefaultValue\s*=\s*${LIT}([^()\n]{0,40}\)\s*[\w<>]+\s+(\w+))?`, 'g'),
    checks: [{ group: [2, 3], not: 'placeholder' }, { match: 'annotationAuth' }],
    out: { strategy: 'annotationDefault' },
  },
  {
    // The password argument of a login, bind or connect call, after a user or a connection that need not be a literal.
    name: 'password argument',
    pattern: new RegExp(String.raw`(?<!\w)(?:new\s+)?(?:${PASSWORD_CALLS})\s*\(`, 'g'),
    out: { strategy: 'passwordArguments' },
  },
  {
    // A signing or encryption key given to a JWT, HMAC or cipher call: its literal arguments that are not algorithm names.
    name: 'key argument',
    pattern: new RegExp(String.raw`(?<!\w)(?:${KEY_CALLS})\s*\(`, 'g'),
    out: { strategy: 'keyArguments' },
  },
  {
    // `user:password` encoded for a Basic header: `Base64.getEncoder().encodeToString("svc:pw".getBytes())`, `b64encode(b"svc:pw")`,
    // the literal in parentheses (as a joined one is read).
    name: 'encoded pair',
    when: /encode|btoa/i,
    pattern: new RegExp(String.raw`\b(?:${ENCODE_CALLS})\(\s*(?:\(\s*)?[rRbBuUfF]{0,2}(["'])([^"'\s:]{1,64}):([^"'\s]{3,128})\1`, 'g'),
    checks: [{ group: 3, not: 'placeholder' }],
    out: { inner: 3, end: 1 },
  },
  {
    // A session cookie's value: `"SESSION=..."`, `JSESSIONID=...; Path=/`. A session id is random: it has a digit
    // (`session=self._session` is code).
    name: 'session cookie',
    when: /(?:sess|sid|remember|token|csrf)[\w.-]{0,12}=/i,
    pattern: new RegExp(String.raw`(^|[\s"';,])((?:${SESSION_COOKIES})=)([^;\s"'&,]{8,512})`, 'gim'),
    checks: [
      { group: 3, not: 'placeholder' },
      { group: 3, is: /\d/ },
      { group: 3, not: /^(?:self|this)\./ },
    ],
    out: { parts: [1, 2, REDACTED] },
  },
  {
    // A session cookie given as a dict's or map's entry: `cookies={"sessionid": "..."}`, `Map.of("JSESSIONID", "...")`.
    name: 'session cookie entry',
    when: /sess|sid|remember|token|csrf/i,
    pattern: new RegExp(String.raw`((\\?["'])(?:${SESSION_COOKIES})\2\s*[:,]\s*(\\?["']))([^"'\s\\]{16,512})\3`, 'gi'),
    checks: [
      { group: 4, is: /\d/ },
      { group: 4, not: 'placeholder' },
    ],
    out: { parts: [1, REDACTED, 3] },
  },
  {
    // A function or supplier that returns a literal under a secret's name: `def admin_password(): return "..."`,
    // `String getApiKey() { return "..."; }`, `secret = lambda: "..."`, `Supplier<String> password = () -> "..."`. Anchored at the
    // `return` or the arrow, the name is looked up behind.
    name: 'secret supplier',
    pattern: new RegExp(String.raw`(?:\breturn\s+|\blambda\b[^:\n]{0,40}:\s*|\(\)\s*->\s*)${LIT}`, 'g'),
    checks: [{ match: 'suppliedSecretName' }, { group: [1, 2], not: 'placeholder' }],
    out: { literal: 1 },
  },
  {
    // Test parameters named in a string or a tuple of them: `parametrize("user,pw", [("admin", "..."), ...])`,
    // `parametrize(("user", "pw"), [pytest.param("admin", "..."), ["root", "..."]])`: the columns whose name says secret.
    name: 'parametrized secret',
    when: /parametrize\(/,
    pattern: new RegExp(String.raw`\bparametrize\(\s*(${PARAM_NAMES})\s*,\s*\[`, 'g'),
    out: { strategy: 'parametrizedRows' },
  },
  {
    // JUnit's values given to a test whose one parameter says secret: `@ValueSource(strings = {"..."}) void accepts(String token)`.
    name: 'value source',
    when: /@ValueSource/,
    pattern: /@ValueSource\(\s*strings\s*=\s*\{([^{}]{1,2000})\}\s*\)([^{;]{0,200}?)\(([^()]{0,300})\)/g,
    out: { strategy: 'valueSourceRows' },
  },
  {
    // JUnit's rows from a provider method (`Arguments.of("svc", "...")`) whose consumer's parameter says secret.
    name: 'method source rows',
    when: /@MethodSource/,
    pattern: /\b(?:Arguments\.of|arguments)\(/g,
    out: { strategy: 'methodSourceRows' },
  },
  {
    // A key a method named for one returns decoded from a literal: `byte[] transitKey() { return HexFormat.of().parseHex("...") }`.
    name: 'decoded key',
    when: /parseHex|decodeHex|fromhex|unhexlify|b64decode|decodeBase64|\.decode\(/,
    pattern: new RegExp(
      String.raw`\breturn\s+(?:[\w.]+(?:\(\))?\.)*(?:parseHex|decodeHex|fromhex|unhexlify|b64decode|decodeBase64|decode)\(\s*` +
        String.raw`[rRbB]{0,2}(?:"([^"\\\n]{16,512})"|'([^'\\\n]{16,512})')`,
      'g',
    ),
    out: { strategy: 'decodedKey' },
  },
  {
    // JUnit's CSV rows given to a method whose parameter says secret: `@CsvSource({"admin, ..."}) void login(String user, String pw)`.
    name: 'csv source',
    when: /@CsvSource/,
    pattern: /@CsvSource\(\s*(?:value\s*=\s*)?\{?([^()]{1,2000}?)\}?\s*\)([^{;]{0,200}?)\(([^()]{0,300})\)/g,
    out: { strategy: 'csvRows' },
  },
  {
    // A comment or docstring in another language that states a credential: `# 数据库密码是 ...`, `// Passwort für den Testserver
    // lautet {@code ...}`, `şifresi ... olarak`: the credential-shaped words of the 120 characters after the word for it (or its
    // inflection), into the comment's next line.
    name: 'prose in other languages',
    intl: true,
    pattern: new RegExp(String.raw`${INTL_SECRET_STEM}${PROSE_WINDOW}`, 'giu'),
    checks: [{ match: 'credentialWordStart' }],
    out: { strategy: 'proseInOtherLanguages' },
  },
  {
    // The English word in a sentence of another language (`La password dell'utenza ... è ...`): the same window, when it holds a
    // letter beyond ASCII.
    name: 'English word in other prose',
    when: BEYOND_ASCII,
    pattern: new RegExp(String.raw`\b${SECRET_NOUN}\b${PROSE_WINDOW}`, 'gi'),
    // Tested apart, without the `i` flag (under it a class of accented letters takes ASCII ones: `ſ` folds to `s`), on the
    // word's own line: the sentence it is in, not a comment after it.
    checks: [{ match: 'foreignLine' }],
    out: { strategy: 'proseInOtherLanguages' },
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
    out: {
      alternatives: [{ group: 2, parts: [1, REDACTED] }, { group: 4, parts: [3, REDACTED, '\n'] }, { parts: [5, REDACTED, 7] }],
    },
  },
  {
    // A JWT wrapped over lines or split across literals: from its header (`eyJ...`), runs of base64url with blanks, quotes, `+`,
    // comment marks or escaped line breaks between, holding the token's two dots; each run is replaced.
    name: 'wrapped JWT',
    when: /eyJ/,
    pattern: new RegExp(String.raw`eyJ[A-Za-z0-9_-]{6,}[A-Za-z0-9_.-]*(?:${JWT_GAP}+[A-Za-z0-9_.-]{8,}){1,8}`, 'g'),
    out: { strategy: 'wrappedJwt' },
  },
  {
    // Lines of base64 that are a key's body without its header (in a comment, docstring, literal or a list's items, its last line
    // shorter): a block whose first line
    // opens an OpenSSH key (`b3BlbnNzaC1rZXktdjE`, "openssh-key-v1") or DER (`MII`), or that follows a line naming a private key
    // or secret. Signatures, images and compressed data in base64 stay.
    name: 'key body lines',
    when: /^[ \t]*(?:#|\/\/|\*|["'])?[ \t]*[A-Za-z0-9+/]{60}/m,
    pattern: new RegExp(String.raw`(?:^${B64_LINE}\n?)+(?:^${B64_LAST_LINE}\n?)?`, 'gm'),
    out: { strategy: 'keyBodyLines' },
  },
  {
    // Literals joined by a call under a secret's name: `SECRET = "".join(["...", "..."])`, `KEY = String.join("", "...", "...")`.
    name: 'joined literals',
    when: /\.join\(/,
    pattern: /(?:(?:""|'')\.join\(\s*[[(]|String\.join\(\s*""\s*,)/g,
    out: { strategy: 'joinedLiterals' },
  },
  {
    // A secret built by appends, under a secret's name or in a method named for one:
    // `String apiKey() { return new StringBuilder().append("...").append("...") ...`.
    name: 'built secret',
    when: /StringBuilder/,
    pattern: new RegExp(String.raw`new\s+StringBuilder\([^()]*\)((?:\s*\.append\(\s*${LIT}\s*\)){2,})`, 'g'),
    checks: [{ match: 'builtSecretName' }],
    out: { chain: 1 },
  },
  {
    // A password written a character at a time under a secret's name: `char[] KEYSTORE_PASSWORD = {'t', '0', ...}`.
    name: 'char array',
    when: /'\s*,\s*'/,
    pattern: new RegExp(
      String.raw`\b([A-Za-z_]\w*)\s*(?:\[\s*\])?\s*=\s*(?:new\s+char\s*\[\s*\]\s*)?\{` +
        String.raw`((?:\s*${CHAR_LIT}\s*,){3,}\s*${CHAR_LIT})(?=\s*,?\s*\})`,
      'g',
    ),
    checks: [{ group: 1, is: 'secretOrAuthName' }],
    out: { chain: 2 },
  },
  {
    // An API key beside its secret in one object (JSON in a string, escaped or not, or a dict): `"key": "...", "secret": "..."`,
    // `consumer_key` and `consumer_secret`: the pair is the credential, so the key goes too, a value of a token's classes.
    name: 'key of a key and secret',
    when: /secret/i,
    pattern: new RegExp(
      String.raw`((\\?["'])(?:api[_-]?key|apiKey|key|consumer[_-]?key|client[_-]?key|access[_-]?key)\2\s*:\s*\2)` +
        String.raw`([A-Za-z0-9+/_.=-]{12,128})` +
        String.raw`(\2\s*,\s*\2(?:api[_-]?secret|apiSecret|secret|consumer[_-]?secret|client[_-]?secret|secret[_-]?key)\2\s*:)`,
      'gi',
    ),
    checks: [
      { group: 3, is: /\d/ },
      { group: 3, is: /[A-Za-z]/ },
      { group: 3, not: 'placeholder' },
    ],
    out: { parts: [1, REDACTED, 4] },
  },
  {
    // Key bytes written as escapes under a name that says key: `FIELD_KEY = b"\x56\x35..."`.
    name: 'escaped key bytes',
    when: /\\x[0-9a-fA-F]{2}\\x/,
    pattern: /[bB]?(["'])((?:\\x[0-9a-fA-F]{2}){8,256})\1/g,
    checks: [{ match: 'authBinding' }],
    out: { inner: 2, end: 1 },
  },
  {
    // A cookie set by name and value: `cookies.set("sessionid", "...")`, `new Cookie("token", "...")`: a value of eight characters
    // or more with a digit.
    name: 'cookie setter',
    when: /[Cc]ookie/,
    pattern: new RegExp(
      String.raw`\b(?:cookies\.set|set_cookie|Cookie|BasicClientCookie|HttpCookie|SimpleCookie)\(\s*${LIT}\s*,\s*${LIT}`,
      'g',
    ),
    checks: [
      { group: [3, 4], not: 'placeholder' },
      { group: [3, 4], is: /^[\s\S]{8}/ },
      { group: [3, 4], is: /\d/ },
    ],
    out: { literal: 3 },
  },
  {
    // Android build fields named for a key: `buildConfigField "String", "MAPS_API_KEY", "\"...\""` (also in a text block).
    name: 'build config field',
    when: /buildConfigField|resValue/,
    pattern:
      /(\b(?:buildConfigField|resValue)\s*\(?\s*["'][\w.]+["']\s*,\s*["']([\w.]+)["']\s*,\s*["'](?:\\{1,2}["'])?)([^"'\\\n]{4,256})/g,
    checks: [
      { group: 2, is: 'secretOrAuthName' },
      { group: 3, not: 'placeholder' },
    ],
    out: { parts: [1, REDACTED] },
  },
  {
    // A setting's value concatenated after its key: `"...;password=" + "..." + ";encrypt=true"`.
    name: 'concatenated setting',
    when: /=["']\s*\+/,
    pattern: new RegExp(String.raw`(\b(?:${CREDENTIAL_KEYS}|secret|token|api[_-]?key)=)(["'])\s*\+\s*${LIT}`, 'gi'),
    checks: [{ group: [3, 4], not: 'placeholder' }],
    out: { literal: 3 },
  },
  {
    // The fallback of a secret setting read through Optional: `Optional.ofNullable(System.getenv("DB_PASSWORD")).orElse("...")`.
    name: 'setting fallback',
    when: /\.(?:orElse|or|getOrDefault)\(/,
    pattern: new RegExp(
      String.raw`\(\s*["']([\w.-]{1,64})["']\s*\)\s*\)?\s*\.(?:orElse|or|getOrDefault|orElseGet\(\s*\(\)\s*->)\(?\s*${LIT}`,
      'g',
    ),
    checks: NAMED_LITERAL_CHECKS,
    out: { literal: 2 },
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
    checks: NAMED_LITERAL_CHECKS,
    out: { literal: 2 },
  },
  {
    // A long random-looking literal, whatever its name. Data, not credentials: images and data URIs in base64, a
    // subresource-integrity digest (a lock file's `sha512-...`), UUIDs.
    name: 'random literal',
    pattern: /"([^"\s\\]{24,1024})"|'([^'\s\\]{24,1024})'|`([^`\s\\]{24,1024})`/g,
    checks: [
      { group: [1, 2, 3], is: 'random' },
      { group: [1, 2, 3], not: /^(?:iVBOR|\/9j\/|R0lGOD|UklGR|data:)/ },
      { group: [1, 2, 3], not: /^sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}$/ },
      { group: [1, 2, 3], not: /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i },
    ],
    out: { inner: [1, 2, 3], end: 1 },
  },
];

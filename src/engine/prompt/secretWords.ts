// Words that say "credential" in the languages code is commented and named in, as data: the
// rules that redact the file being completed (secretRules.ts) and the masking of other files'
// values (maskStrings.ts) read them through the two functions below, so a name or a comment in
// German, Chinese or Russian counts as an English one does.

/**
 * Latin and Cyrillic words, lower case, accents as written and without (a name is often written
 * without them: `contrasena`, `haslo`, `sifre`). Matched as whole words of a name or a comment.
 */
const WORDS = [
  // German, Dutch, Scandinavian, Finnish, Czech, Hungarian
  'passwort',
  'kennwort',
  'geheimnis',
  'zugangsdaten',
  'wachtwoord',
  'losenord',
  'lösenord',
  'passord',
  'adgangskode',
  'salasana',
  'heslo',
  'jelszo',
  'jelszó',
  // French
  'mdp',
  'motdepasse',
  'jeton',
  // Spanish, Portuguese, Italian, Catalan
  'contraseña',
  'contrasena',
  'clave',
  'senha',
  'palavrapasse',
  'segredo',
  'secreto',
  'segreto',
  'parola',
  'parolachiave',
  'contrasenya',
  // Polish, Turkish, Romanian, Indonesian
  'hasło',
  'haslo',
  'şifre',
  'sifre',
  'parolă',
  'kata sandi',
  'katasandi',
  'sandi',
  // Russian, Ukrainian, Bulgarian (and transliterations)
  'пароль',
  'пароля',
  'паролем',
  'паролі',
  'секрет',
  'токен',
  'ключ',
  'parol',
  'parolya',
  // Chinese pinyin of 密码
  'mima',
  // Vietnamese, without its tones as names are often written
  'matkhau',
];
/** Phrases of several words (matched in the text's words, in order). */
const PHRASES = [
  'mật khẩu',
  'mat khau',
  'mot de passe',
  'palavra passe',
  'palavra chave',
  'kata sandi',
  'clé secrète',
  'cle secrete',
  'clé api',
  'cle api',
];
/** Terms of scripts written without spaces between words (Chinese, Japanese, Korean): matched anywhere. */
const UNSPACED = [
  '密码',
  '密碼',
  '口令',
  '密钥',
  '秘钥',
  '密鑰',
  '令牌',
  '凭据',
  '憑據',
  'パスワード',
  'パスフレーズ',
  '暗証番号',
  '秘密鍵',
  '合言葉',
  'トークン',
  'APIキー',
  'のキー',
  '비밀번호',
  '비번',
  '암호',
  '토큰',
  '비밀키',
  // Korean "API key", "access key", "secret key", "auth key" (키 alone also means height)
  'API 키',
  'API키',
  '액세스 키',
  '비밀 키',
  '인증 키',
  // Hindi (Devanagari) password, secret key
  'पासवर्ड',
  'गुप्त कुंजी',
];

const WORD_SET = new Set(WORDS.filter((w) => !w.includes(' ')));

/** The text's words: letters and digits of any script, lower case, split at camelCase and everything else. */
function wordsOf(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1 $2')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** Whether `text` (a name, a key, a comment) holds a word of another language that says credential. */
export function saysSecretIntl(text: string): boolean {
  for (const t of UNSPACED) if (text.includes(t)) return true;
  const words = wordsOf(text);
  if (words.some((w) => WORD_SET.has(w))) return true;
  const joined = ` ${words.join(' ')} `;
  return PHRASES.some((p) => joined.includes(` ${p} `)) || words.some((w, i) => WORD_SET.has(`${w}${words[i + 1] ?? ''}`));
}

const escape = (w: string): string => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '[ _-]?');
const longestFirst = (a: string, b: string): number => b.length - a.length;

/** A regex alternation of the non-English terms, unbounded (a cheap first test; a match is confirmed by saysSecretIntl). */
export const INTL_SECRET_ALTERNATION = [...UNSPACED, ...PHRASES, ...WORDS].sort(longestFirst).map(escape).join('|');

/**
 * The same terms as words, for a rule that needs them in place (a comment that states a value, with the `u` flag): a Latin or
 * Cyrillic word starts a word and is not followed by a lower-case letter (`haslo` in `haslocal` is no word; `kennwortDb` is).
 */
export const INTL_SECRET_WORD = `(?:${[...UNSPACED].sort(longestFirst).map(escape).join('|')}|(?<![\\p{L}\\p{N}])(?:${[...PHRASES, ...WORDS]
  .sort(longestFirst)
  .map(escape)
  .join('|')})(?!\\p{Ll}))`;

/**
 * The same terms with an inflection after them (up to four lower-case letters: Turkish `şifresi`, German `Passworts`,
 * Spanish `claves`), for finding where prose states a value: the rule that reads it still wants a credential-shaped word after it.
 */
export const INTL_SECRET_STEM = `(?:${[...UNSPACED].sort(longestFirst).map(escape).join('|')}|(?<![\\p{L}\\p{N}])(?:${[...PHRASES, ...WORDS]
  .sort(longestFirst)
  .map(escape)
  .join('|')})\\p{Ll}{0,4}(?!\\p{Ll}))`;

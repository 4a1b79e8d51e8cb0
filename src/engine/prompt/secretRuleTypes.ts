// The form of a secret rule as data (secretRuleSet.ts, secretRuleSetStructure.ts): where it runs,
// what it matches, the checks a match must pass and what the match becomes. The names of tests and
// strategies are those of secretStrategies.ts, which holds the code for what a record cannot say.

/** A match's group: one group, or the first of several that took part (a literal's double- and single-quoted groups); absent: ''. */
export type Group = number | readonly number[];

/** A test of one group's text. */
export type ValueTest =
  | 'placeholder'
  | 'secretName'
  /** The last dotted part (`Context.SECURITY_CREDENTIALS`) names a credential. */
  | 'secretConstant'
  /** A credential's name, or one that says authentication (`MAPS_API_KEY`). */
  | 'secretOrAuthName'
  | 'tokenShape'
  | 'tokenOrRandom'
  | 'random'
  | 'bareCredential'
  /** An `Authorization` value: a digit, or both cases and 16 characters or more. */
  | 'authorizationToken'
  /** The literals of a chain, joined, are a placeholder. */
  | 'placeholderChain';

/** A test of two groups' texts: a name (or a quote) and a value. */
export type PairTest =
  /** A literal bound to a plain name that says secret (a value with spaces only under a password's or secret's name). */
  | 'boundSecret'
  /** The same, where the short keys `pass`, `pw`, `pwd` count too. */
  | 'boundSecretOrShortKey'
  /** A connection string's key and value (`sig` holds 16 characters or more; a password key a password-like value). */
  | 'credentialKey'
  /** A config line's key and unquoted value. */
  | 'configLine'
  /** A comment's stated value: quoted, or with a digit, a symbol or both cases. */
  | 'commentValue'
  /** A JSON key inside a literal that says secret, or says authentication over a token-shaped value. */
  | 'secretKeyOrAuthToken';

/** A test of the whole match and the text around it. */
export type MatchTest =
  | 'inlineSetting'
  /** The name the literal is bound to or its line says authentication, and the line is no test's comparison. */
  | 'authContextAround'
  /** The annotation's arguments say authentication, or the parameter's name says secret. */
  | 'annotationAuth'
  /** The function returning the literal, or the name given the lambda or supplier, says secret. */
  | 'suppliedSecretName'
  /** The name given the builder, or the function returning it, says secret. */
  | 'builtSecretName'
  /** The name the literal is bound to says authentication. */
  | 'authBinding'
  /** The match's line is written in another language: it holds a letter beyond ASCII. */
  | 'foreignLine'
  /**
   * The word a match starts with is a word for a credential, inflected or not, up to any camelCase hump (`kennwortDb`; not
   * `hasLocale`).
   */
  | 'credentialWordStart';

/** Rules whose replacement is logic: a scan of arguments, rows, lines or runs. */
export type Strategy =
  | 'prose'
  | 'formatArguments'
  | 'annotationDefault'
  | 'passwordArguments'
  | 'keyArguments'
  | 'parametrizedRows'
  | 'csvRows'
  | 'proseInOtherLanguages'
  | 'wrappedJwt'
  | 'keyBodyLines'
  | 'joinedLiterals'
  | 'valueSourceRows'
  | 'methodSourceRows'
  | 'decodedKey';

/** A check a match must pass to be replaced; a match that fails one is kept. A RegExp here must not be global or sticky. */
export type Check =
  | { group: Group; is: ValueTest | RegExp }
  | { group: Group; not: ValueTest | RegExp }
  | { pair: readonly [Group, Group]; is: PairTest }
  | { match: MatchTest };

/** Text to write: numbers are groups (absent: ''), strings are written as they are. */
export type Parts = readonly (number | string)[];

/** What a match that passes its checks becomes. */
export type Output =
  /** The parts, in place of the whole match. */
  | { parts: Parts }
  /**
   * The match up to its last occurrence of the literal of groups `literal` (double-quoted) and `literal + 1` (single-quoted), then that
   * literal with REDACTED inside; what follows the literal in the match is not written.
   */
  | { literal: number }
  /** The match with the text of `inner`, which ends `end` characters before the match does, replaced by REDACTED. */
  | { inner: Group; end: number }
  /** The match with every literal inside group `chain` (the match's last part) holding REDACTED. */
  | { chain: number }
  /** The parts of the first alternative whose group took part (an alternative without a group always does). */
  | { alternatives: readonly { group?: number; parts: Parts }[] }
  /** The named strategy's replacement: of the whole match, or of `length` characters from its start; undefined keeps the match. */
  | { strategy: Strategy };

export interface SecretRule {
  name: string;
  /** Run only on a text that holds a credential word of another language. */
  intl?: true;
  /** Run only on a text this cheap test finds something in (most prompts hold none of a rule's anchor). Not global or sticky. */
  when?: RegExp;
  /** Global; matched over the text left by the rules before. */
  pattern: RegExp;
  checks?: readonly Check[];
  out: Output;
}

// The project's own rules for credentials written in generic forms, the ones no token-format
// scanner can know: a string literal bound to a name, key, property or header whose name says
// secret, URL userinfo, `Bearer`/`Basic` values, comments and prose that state a password, config
// lines, settings inside strings, structure (a DSN's password slot, a call's password argument,
// test rows, builders, key material) and random literals. Known token formats (AWS, GitHub, Slack,
// OpenAI ...) are secretlint's (redact.ts); a few prefixes it only knows in a stricter shape are kept
// in tokenFormats.ts. Pure and synchronous.
// Why hand-written rules beside secretlint: its recommended preset knows token formats, not the
// names and structure a credential sits in. Measured (BENCHMARKS "Secret redaction" and "Trust
// round: forms nobody listed"): the preset alone kept 12.2% of the first corpus's credentials from
// the model, 5.1% of the third corpus's dev values and 6% of its held-out values (written without
// sight of the rules, scored once); the rules before that round with secretlint 47% of the held-out
// values, these rules with secretlint 83% then; the fourth corpus's held-out part (scored once) 5.2%
// with the preset alone, 86.2% with these rules; the fifth's 6.8% and 89.7%. secretlint's presets have no rule for these
// forms, and @secretlint/secretlint-rule-pattern only hosts one's own regexes.
// The rules are data: each a record (secretRuleSet.ts, secretRuleSetStructure.ts; the form in
// secretRuleTypes.ts) of its prefilter, its pattern built from the shared pieces (secretPatterns.ts),
// the checks a match must pass and what it becomes, from a fixed set of replacements; a rule whose
// test or replacement is logic names a strategy of secretStrategies.ts. This module compiles the set
// once and applies it: the literal left open at the cursor first, then each rule in order over the
// text the rules before left, counting the values replaced.

import { REDACTED, type Redacted } from './secretVocabulary';
import { SECRET_RULES } from './secretRuleSet';
import type { Check, Group, Output, Parts, SecretRule } from './secretRuleTypes';
import { redactChains } from './secretChains';
import { redactChain, redactUnterminated } from './secretScans';
import { MATCH_TESTS, PAIR_TESTS, STRATEGIES, VALUE_TESTS, type Replacement } from './secretStrategies';
import { INTL_WORD } from './secretPatterns';

export { REDACTED, isPlaceholder, isSecretName, looksRandom, shannonEntropy, tokenShape, type Redacted } from './secretVocabulary';

/** A rule ready to run: its own regular expression (reset at each text) and its checks and output as one function. */
interface CompiledRule {
  name: string;
  intl: boolean;
  when: RegExp | undefined;
  re: RegExp;
  replace: (m: RegExpExecArray) => Replacement;
}

/** The text of group `g` of `m`: the first of its groups that took part, or ''. */
function groupText(m: RegExpExecArray, g: Group): string {
  if (typeof g === 'number') return m[g] ?? '';
  for (const i of g) if (m[i] !== undefined) return m[i];
  return '';
}

/** A test regular expression keeps no state between texts: not global, not sticky. */
function stateless(re: RegExp, rule: string): RegExp {
  if (re.global || re.sticky) throw new Error(`secret rule '${rule}': a test's regular expression must not be global or sticky`);
  return re;
}

function compileCheck(check: Check, rule: string): (m: RegExpExecArray) => boolean {
  if ('match' in check) return MATCH_TESTS[check.match];
  if ('pair' in check) {
    const test = PAIR_TESTS[check.is];
    const [name, value] = check.pair;
    return (m) => test(groupText(m, name), groupText(m, value));
  }
  const want = 'is' in check;
  const t = 'is' in check ? check.is : check.not;
  const g = check.group;
  if (t instanceof RegExp) {
    const re = stateless(t, rule);
    return (m) => re.test(groupText(m, g)) === want;
  }
  const test = VALUE_TESTS[t];
  return (m) => test(groupText(m, g)) === want;
}

function compileParts(parts: Parts): (m: RegExpExecArray) => string {
  return (m) => {
    let s = '';
    for (const p of parts) s += typeof p === 'number' ? (m[p] ?? '') : p;
    return s;
  };
}

function compileOutput(out: Output): (m: RegExpExecArray) => Replacement {
  if ('parts' in out) return compileParts(out.parts);
  if ('literal' in out) {
    const dq = out.literal;
    return (m) => {
      const quote = m[dq] !== undefined ? '"' : "'";
      const value = m[dq] ?? m[dq + 1] ?? '';
      return `${m[0].slice(0, m[0].lastIndexOf(`${quote}${value}${quote}`))}${quote}${REDACTED}${quote}`;
    };
  }
  if ('inner' in out) {
    const { inner, end } = out;
    return (m) => {
      const at = m[0].length - end;
      return `${m[0].slice(0, at - groupText(m, inner).length)}${REDACTED}${m[0].slice(at)}`;
    };
  }
  if ('chain' in out) {
    const g = out.chain;
    return (m) => {
      const chain = m[g] ?? '';
      return m[0].slice(0, m[0].length - chain.length) + redactChain(chain);
    };
  }
  if ('alternatives' in out) {
    const alternatives = out.alternatives.map((a) => ({ group: a.group, write: compileParts(a.parts) }));
    return (m) => {
      for (const a of alternatives) if (a.group === undefined || m[a.group] !== undefined) return a.write(m);
      return undefined;
    };
  }
  return STRATEGIES[out.strategy];
}

function compile(rule: SecretRule): CompiledRule {
  if (!rule.pattern.global) throw new Error(`secret rule '${rule.name}': its pattern must be global`);
  const checks = (rule.checks ?? []).map((c) => compileCheck(c, rule.name));
  const write = compileOutput(rule.out);
  return {
    name: rule.name,
    intl: rule.intl === true,
    when: rule.when && stateless(rule.when, rule.name),
    re: new RegExp(rule.pattern.source, rule.pattern.flags),
    replace: checks.length === 0 ? write : (m) => (checks.every((c) => c(m)) ? write(m) : undefined),
  };
}

const RULES: readonly CompiledRule[] = SECRET_RULES.map(compile);

/**
 * Apply one rule to the whole text; counts its replacements. A match the rule keeps is searched again one character on (a kept `payload =
 * '{...}'` may hold a secret's key and value).
 */
function applyRule(text: string, rule: CompiledRule): Redacted {
  let count = 0;
  let out = '';
  let from = 0;
  const re = rule.re;
  re.lastIndex = 0;
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
  // Pieces joined make literals no one wrote: read whole, they are judged by their form and binding, not by looking random; a line
  // joined from several is wider than any written, so a word somewhere on it gives no authentication context either (a builder's
  // value is read in a statement of its own, its binding).
  // Looked up once a rule for every reading of a chain (two a chain), so as sets.
  const all = new Set(names);
  const builtRules = new Set(names.filter((n) => n !== RANDOM_LITERAL));
  const joinedRules = new Set([...builtRules].filter((n) => n !== SHAPE_IN_CONTEXT));
  const pieces = all.has(PIECES)
    ? redactChains(first.text, (line, kind) => applyRules(line, kind === 'joined' ? joinedRules : builtRules, INTL_WORD.test(line)).text)
    : { text: first.text, count: 0 };
  const rest = applyRules(pieces.text, all, INTL_WORD.test(text));
  return { text: rest.text, count: first.count + pieces.count + rest.count };
}

/** The compiled rules of `names`, in order, over `text`. */
function applyRules(text: string, names: ReadonlySet<string>, intl: boolean): Redacted {
  let out = text;
  let count = 0;
  for (const rule of RULES) {
    if (!names.has(rule.name) || (rule.intl && !intl) || (rule.when && !rule.when.test(out))) continue;
    const r = applyRule(out, rule);
    out = r.text;
    count += r.count;
  }
  return { text: out, count };
}

/** The rule names, in order (for the header of a benchmark table). */
export const GENERIC_RULES: readonly string[] = RULES.map((r) => r.name);
const UNTERMINATED = 'unterminated literal';
/** Values in pieces (joined literals, a builder's appends) read whole by the other rules (secretChains.ts). */
const PIECES = 'pieces read whole';
const RANDOM_LITERAL = 'random literal';
const SHAPE_IN_CONTEXT = 'token shape in auth context';
const ALL_RULES = [UNTERMINATED, PIECES, ...GENERIC_RULES];
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

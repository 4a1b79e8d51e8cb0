// What the show gate knows of one suggestion, all of it already at hand when the answer is cut
// (no extra model call): the model's confidence in the tokens it kept (mean and lowest
// log-probability), the suggestion's size, where the cursor is (a blank line, after a `.`), the
// language and mode, how strongly retrieval matched (the top dense cosine among the prompt's
// items), what checking did (constrained, repaired) and how many of the suggestion's identifiers
// the prompt (the file above the cursor and the retrieved items) already holds: a name the model
// made up is the commonest wrong suggestion.
import type { Candidate } from '../retrieve/types';
import type { TokenLogprob } from '../generate/types';

/** The features by name, in the order of the weights (GATE_FEATURES). */
export const GATE_FEATURES = [
  'bias',
  'meanLogprob',
  'minLogprob',
  'logChars',
  'lines',
  'blankLine',
  'afterDot',
  'java',
  'body',
  'topDense',
  'constrained',
  'repaired',
  'knownIdentifiers',
  'hitLimit',
] as const;
export type GateFeatureName = (typeof GATE_FEATURES)[number];
export type GateFeatures = Record<GateFeatureName, number>;

/** The log-probability features of a client that gave none (the gate then scores with its model without them). */
const NO_LOGPROBS = { meanLogprob: 0, minLogprob: 0 } as const;

/** Lowest log-probability a token counts with (a masked-in token can be far below; one such token should not decide alone). */
const LOGPROB_FLOOR = -10;

const KEYWORDS = new Set(
  (
    'and as assert async await break class continue def del elif else except finally for from global if import in is lambda ' +
    'nonlocal not or pass raise return try while with yield None True False self cls abstract boolean byte case catch char ' +
    'default do double enum extends final float goto implements instanceof int interface long native new package private ' +
    'protected public short static super switch synchronized this throw throws transient void volatile null true false var'
  ).split(' '),
);

interface GateInput {
  /** The suggestion as it would be inserted. */
  text: string;
  /** What the model wrote, before it was cut (the logprobs' text). */
  raw: string;
  logprobs?: readonly TokenLogprob[];
  /** The file before the cursor. */
  prefix: string;
  /** The prompt as sent (identifiers found there count as known). */
  prompt: string;
  lang: string;
  mode: string;
  contexts: readonly Candidate[];
  constrained: boolean;
  repaired: boolean;
  stoppedBy?: string;
}

/** The tokens of `raw` that the kept `text` covers: those that start before the kept text ends in it (all, when it is not found). */
function keptTokens(raw: string, text: string, logprobs: readonly TokenLogprob[]): readonly TokenLogprob[] {
  const core = text.trim();
  const at = core ? raw.indexOf(core) : -1;
  if (at < 0) return logprobs;
  const end = at + core.length;
  const kept: TokenLogprob[] = [];
  let offset = 0;
  for (const t of logprobs) {
    if (offset >= end) break;
    kept.push(t);
    offset += t.token.length;
  }
  return kept.length > 0 ? kept : logprobs;
}

function identifiers(text: string): string[] {
  return (text.match(/[A-Za-z_$][A-Za-z0-9_$]*/g) ?? []).filter((w) => w.length >= 2 && !KEYWORDS.has(w));
}

/** The gate's features of one suggestion; `hasLogprobs` says whether the confidence features are the model's. */
export function gateFeatures(input: GateInput): { features: GateFeatures; hasLogprobs: boolean } {
  const tokens = input.logprobs && input.logprobs.length > 0 ? keptTokens(input.raw, input.text, input.logprobs) : [];
  const lps = tokens.map((t) => Math.max(LOGPROB_FLOOR, t.logprob));
  const hasLogprobs = lps.length > 0;
  const lineStart = input.prefix.lastIndexOf('\n') + 1;
  const names = identifiers(input.text);
  const known = names.filter((n) => input.prompt.includes(n)).length;
  let topDense = 0;
  for (const c of input.contexts) topDense = Math.max(topDense, c.scores.dense ?? 0);
  const features: GateFeatures = {
    bias: 1,
    ...(hasLogprobs ? { meanLogprob: lps.reduce((a, b) => a + b, 0) / lps.length, minLogprob: Math.min(...lps) } : { ...NO_LOGPROBS }),
    logChars: Math.log1p(input.text.trim().length),
    lines: Math.log1p(input.text.trim() ? input.text.trim().split('\n').length - 1 : 0),
    blankLine: input.prefix.slice(lineStart).trim() === '' ? 1 : 0,
    afterDot: /\.\s*[A-Za-z_$]*$/.test(input.prefix.slice(lineStart)) ? 1 : 0,
    java: input.lang === 'java' ? 1 : 0,
    body: input.mode === 'body' ? 1 : 0,
    topDense,
    constrained: input.constrained ? 1 : 0,
    repaired: input.repaired ? 1 : 0,
    knownIdentifiers: names.length > 0 ? known / names.length : 1,
    hitLimit: input.stoppedBy === 'length' ? 1 : 0,
  };
  return { features, hasLogprobs };
}

/** The features as a vector in GATE_FEATURES' order. */
export function featureVector(features: GateFeatures): number[] {
  return GATE_FEATURES.map((name) => features[name]);
}

// The one setting a person chooses (`coderag.suggestions.show`) and the gate threshold each level
// means: the least predicted share of a suggestion a person keeps (GateModel.score) for it to be
// shown. Chosen on the validation cases (docs/BENCHMARKS.md "Show or stay silent").
export type ShowLevel = 'fewer-but-better' | 'balanced' | 'more' | 'all';
export const SHOW_LEVELS: readonly ShowLevel[] = ['fewer-but-better', 'balanced', 'more', 'all'];

/** What a person gets unless they choose. */
export const DEFAULT_SHOW_LEVEL: ShowLevel = 'balanced';

/** The thresholds of line and dot suggestions. */
export const SHOW_THRESHOLDS: Record<ShowLevel, number> = {
  // On the validation line and body suggestions (349; in-sample / leave-one-repository-out): 34% /
  // 33% shown at +13.3 / +12.4 ES over showing all; 61% / 60% at +6.8 / +6.5; 76% / 76% at +4.0 / +3.5.
  'fewer-but-better': 0.3,
  balanced: 0.22,
  more: 0.17,
  all: 0,
};

/**
 * The thresholds of method bodies, stricter than a line's: at a line's threshold the shown bodies
 * gained under +5 ES over showing them all in both languages, and a wrong body costs more to read
 * and reject (docs/BENCHMARKS.md "A body's own show threshold").
 */
export const BODY_SHOW_THRESHOLDS: Record<ShowLevel, number> = {
  'fewer-but-better': 0.3,
  balanced: 0.26,
  more: 0.22,
  all: 0,
};

/** The gate's options for a level: `all` turns it off. */
export function gateOptionsOf(level: ShowLevel): { mode: 'on' | 'off'; threshold: number; bodyThreshold: number } {
  return level === 'all'
    ? { mode: 'off', threshold: 0, bodyThreshold: 0 }
    : { mode: 'on', threshold: SHOW_THRESHOLDS[level], bodyThreshold: BODY_SHOW_THRESHOLDS[level] };
}

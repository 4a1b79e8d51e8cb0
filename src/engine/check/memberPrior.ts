// The member prior of checked decoding: the token mask (tokenMask.ts) says which members a receiver
// has, not which one the code needs. A small model picks among them almost at random (dev dot cases:
// the right member was allowed in every typed case, chosen in 0-3%). Three cues from the code before
// the dot rank the members, and each allowed token's logit gets the best score of the names it can
// still become:
// - the receiver's own uses: `defaults.X` earlier in the file (log of 1 + count);
// - the words of the last lines (identifiers and string literals, the receiver itself left out):
//   the share of the name's subwords they contain, each subword weighted by how few of the
//   receiver's members share it (`"lstrip_blocks", defaults.` -> LSTRIP_BLOCKS);
// - mentions of the name anywhere before the dot (a quarter, log of 1 + count).
// The weights were chosen on the tuning dot cases (docs/BENCHMARKS.md "Checked decoding"); the model keeps the last word
// wherever no cue speaks.
import type { MaskVocabulary } from './tokenMask';
import { identifierParts } from '../retrieve/sparse/codeTerms';
import { escapeRegExp } from '../util/regex';

/** Lines before the dot whose words count as the local context (the dot's own line included). */
const CONTEXT_LINES = 3;
const MENTION_WEIGHT = 0.25;

const IDENT = /[\p{L}_$][\p{L}\p{N}_$]*/gu;

/**
 * The lower-case words of two or more letters or digits in a name or a text (`getModuleFilename`, `LSTRIP_BLOCKS`), split as the sparse
 * path splits identifiers.
 */
export function subwords(text: string): string[] {
  return identifierParts(text)
    .filter((p) => p.length > 1 && /^[\p{L}\p{N}]/u.test(p))
    .map((p) => p.toLowerCase());
}

/** What the cues read of the text before the dot, computed once per text and reused for every dot in it. */
export class PriorContext {
  private mentionCounts: Map<string, number> | undefined;

  constructor(private readonly text: string) {}

  private mentions(): Map<string, number> {
    if (!this.mentionCounts) {
      const counts = new Map<string, number>();
      for (const m of this.text.matchAll(IDENT)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
      this.mentionCounts = counts;
    }
    return this.mentionCounts;
  }

  /**
   * Each valid name's score (only names with some evidence), for the dereference of `receiver` that
   * `text` (this context's text, possibly extended by generated code) ends in, with `partial` typed.
   */
  scores(text: string, receiver: string, partial: string, names: ReadonlySet<string>): Map<string, number> {
    const out = new Map<string, number>();
    if (names.size === 0) return out;
    const before = text.slice(0, text.length - partial.length - 1 - receiver.length);
    // The receiver's earlier uses: `receiver.name` not preceded by another identifier or dot.
    const uses = new Map<string, number>();
    const re = new RegExp(`(?<![\\p{L}\\p{N}_$.])${escapeRegExp(receiver)}\\s*\\.\\s*([\\p{L}_$][\\p{L}\\p{N}_$]*)`, 'gu');
    for (const m of before.matchAll(re)) if (names.has(m[1]!)) uses.set(m[1]!, (uses.get(m[1]!) ?? 0) + 1);
    // The local words: the last lines up to the receiver.
    let start = before.length;
    for (let i = 0; i < CONTEXT_LINES && start > 0; i++) start = before.lastIndexOf('\n', start - 1);
    const local = new Set(subwords(before.slice(Math.max(0, start))));
    // How many members share each subword (a subword every member has says nothing).
    const nameWords = new Map<string, string[]>();
    const shared = new Map<string, number>();
    for (const n of names) {
      const ws = [...new Set(subwords(n))];
      nameWords.set(n, ws);
      for (const w of ws) shared.set(w, (shared.get(w) ?? 0) + 1);
    }
    const mentions = this.mentions();
    // Mentions in the generated text after this context's own, counted once for every name.
    const extraMentions = new Map<string, number>();
    if (text.length > this.text.length)
      for (const m of text.slice(this.text.length).matchAll(IDENT)) extraMentions.set(m[0], (extraMentions.get(m[0]) ?? 0) + 1);
    for (const n of names) {
      let lexical = 0;
      const ws = nameWords.get(n)!;
      if (ws.length > 0 && local.size > 0) {
        let all = 0;
        let found = 0;
        for (const w of ws) {
          const idf = Math.log((names.size + 1) / shared.get(w)!);
          all += idf;
          if (local.has(w)) found += idf;
        }
        lexical = all > 0 ? found / all : 0;
      }
      const mentioned = (mentions.get(n) ?? 0) + (extraMentions.get(n) ?? 0);
      const score = lexical + Math.log1p(uses.get(n) ?? 0) + MENTION_WEIGHT * Math.log1p(mentioned);
      if (score > 0) out.set(n, score);
    }
    return out;
  }
}

/** The boosts of one dereference: per name with evidence, and per prefix of one, the best score times the weight. */
export interface NameBoosts {
  exact: Map<string, number>;
  prefix: Map<string, number>;
}

export function nameBoosts(scores: ReadonlyMap<string, number>, weight: number): NameBoosts {
  const exact = new Map<string, number>();
  const prefix = new Map<string, number>();
  for (const [name, s] of scores) {
    const b = s * weight;
    exact.set(name, b);
    for (let i = 1; i <= name.length; i++) {
      const p = name.slice(0, i);
      if ((prefix.get(p) ?? 0) < b) prefix.set(p, b);
    }
  }
  return { exact, prefix };
}

/**
 * Adds to each allowed token's logit the boost of the best name it can still become: a token that
 * ends the name (characters after its identifier part) gets that name's boost, one that continues
 * it the best boost among the names with that prefix.
 */
export function applyBoosts(vocab: MaskVocabulary, boosts: NameBoosts, typed: string, allowed: Uint8Array, logits: Float32Array): void {
  if (boosts.exact.size === 0) return;
  for (let i = 0; i < allowed.length; i++) {
    if (allowed[i] !== 1) continue;
    const lead = vocab.lead[i]!;
    const b = vocab.ends[i] === 1 ? boosts.exact.get(typed + lead) : boosts.prefix.get(typed + lead);
    if (b !== undefined) logits[i] = logits[i]! + b;
  }
}

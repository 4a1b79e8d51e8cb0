// Rambo's retrieval steps over the repository's methods (docs/ARCHITECTURE.md "Papers: implementation notes"):
// (a) signature-similar methods by Jaccard over the signatures' token sets, and (d) the usages of
// the essential elements, ranked by similarity to the sketch. The target and the other methods of
// its class in its file never count; nor does what the target's file holds from the cursor on
// (the knowledge base may hold the file as saved, with text the unfinished file does not have).
import type { KbItem } from '../kb/types';
import type { BodyTarget } from './detectBody';
import type { MethodEntry, RepoMethods } from './RepoMethods';
import { jaccard, signatureKey, subwordSet, tokenSet, type Tokenize } from './tokens';

export interface ScoredMethod {
  item: KbItem;
  score: number;
  /** Usages: the identifiers it was found through. */
  via?: string[];
}

/** Whether a repository method may serve the target (not itself, its class in its file, or text after the cursor). */
export function excludedFor(target: BodyTarget, filePath: string): (item: KbItem) => boolean {
  return (item) => {
    if (item.path !== filePath) return false;
    if (
      target.className !== undefined &&
      item.className !== undefined &&
      (item.className === target.className || item.className.endsWith(`.${target.className}`))
    )
      return true;
    return item.range.endLine >= target.signatureRow;
  };
}

/** Step a: the top-k methods whose signature keys share the most tokens with the target's. */
export function signatureSimilar(
  target: BodyTarget,
  filePath: string,
  repo: RepoMethods,
  topK: number,
  tokenize?: Tokenize,
): ScoredMethod[] {
  const mine = tokenSet(signatureKey(target.lang, target.signature), tokenize);
  const excluded = excludedFor(target, filePath);
  const scored: ScoredMethod[] = [];
  for (const m of repo.methods()) {
    if (m.item.lang !== target.lang || excluded(m.item)) continue;
    const score = jaccard(mine, m.signatureTokens);
    if (score > 0) scored.push({ item: m.item, score });
  }
  return scored.sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id)).slice(0, topK);
}

/** Rambo step a: the top-k methods whose signatures are most like the target's, and how they were compared (the trace's words). */
export interface SignatureSearch {
  signatureHits(
    target: BodyTarget,
    filePath: string,
    repo: RepoMethods,
    topK: number,
    signal: AbortSignal,
  ): Promise<{ methods: ScoredMethod[]; how: string }>;
}

/** The product's step a: token Jaccard of the signature keys (Rambo), over `tokenize`'s tokens where given. */
export function jaccardSignatures(tokenize?: Tokenize): SignatureSearch {
  return {
    signatureHits: (target, filePath, repo, topK) =>
      Promise.resolve({ methods: signatureSimilar(target, filePath, repo, topK, tokenize), how: 'jaccard' }),
  };
}

/** Step d: methods whose bodies use the identifiers, ranked by subword Jaccard with the sketch, top-k. */
export function rankUsages(
  target: BodyTarget,
  filePath: string,
  identifiers: readonly string[],
  sketch: string,
  repo: RepoMethods,
  topK: number,
): ScoredMethod[] {
  const excluded = excludedFor(target, filePath);
  const found = new Map<MethodEntry, string[]>();
  for (const id of identifiers) {
    for (const m of repo.using(id)) {
      if (m.item.lang !== target.lang || excluded(m.item)) continue;
      const via = found.get(m);
      if (via) via.push(id);
      else found.set(m, [id]);
    }
  }
  const sketchTokens = subwordSet(`${target.signature}\n${sketch}`);
  return [...found]
    .map(([m, via]) => ({ item: m.item, score: repo.textSimilarity(sketchTokens, m), via }))
    .sort((a, b) => b.score - a.score || a.item.id.localeCompare(b.item.id))
    .slice(0, topK);
}

/** Step e's lists, best first each. */
export interface BodyLists<T> {
  usages: readonly T[];
  definitions: readonly T[];
  /**
   * Definitions of the elements only the signature-similar methods use (body.elements 'sketch+similar'): after the sketch's and CodeRAG's.
   */
  related?: readonly T[];
  /** CodeRAG's reranked knowledge items, where they join. */
  knowledge: readonly T[];
  signatures: readonly T[];
}

/** Rambo step e: the body's lists as one list, best first, each snippet once. */
export type BodyComposer = <T extends { snippet: { id: string } }>(lists: BodyLists<T>) => T[];

/**
 * The product's step e: a usage, a definition of an element, a CodeRAG item, a signature hit, in turns, then the definitions only the
 * signature-similar methods use.
 */
export const composeInTurns: BodyComposer = (lists) =>
  mergeInTurns([lists.usages, lists.definitions, lists.knowledge, lists.signatures, lists.related ?? []]);

/** Step e's order: the lists taken in turns (a usage, a definition, a signature hit, ...), each snippet once, best first. */
export function mergeInTurns<T extends { snippet: { id: string } }>(lists: ReadonlyArray<readonly T[]>): T[] {
  const out: T[] = [];
  const seen = new Set<string>();
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) {
    for (const list of lists) {
      const x = list[i];
      if (x && !seen.has(x.snippet.id)) {
        seen.add(x.snippet.id);
        out.push(x);
      }
    }
  }
  return out;
}

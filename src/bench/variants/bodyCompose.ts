// Rambo step e's orders of the lists that the product does not ship, for `--body-compose` and
// `npm run bench:defaults`: the product composes in turns (engine/body/rambo.ts composeInTurns).
//
// Why turns ships (docs/BENCHMARKS-history.md "Defaults measured again with the filters, the gate and the
// new query"): on every validation body case (40 Python / 30 Java, shipped LM, the junk filters and the gate) turns' ES
// was 23.03 / 28.35 against knowledge-first 22.44 / 27.95, definitions-first 22.69 / 27.82 and
// rrf 21.56 / 28.35; after the Java body cut Java's was turns 27.56, knowledge-first 27.68,
// definitions-first 27.56, rrf 28.08, and summed over both languages turns still led (50.59
// against 50.12 / 50.25 / 49.64). On every second case, before the filters, knowledge-first had
// led (23.41 / 25.67 against turns 21.55 / 25.67). Earlier still, on the tuning body cases (12 per
// language), definitions-first kept recall@10 and @20 at df+s+d+dr's (0.694 / 0.915) where rrf
// fell to 0.528-0.611 / 0.753-0.832, at about the same ES (38.9 against rrf's 38.5; turns 39.5,
// knowledge-first 35.3); the body prompt's 70% share of code was chosen under rrf (ES 38.5 at
// 0.7) and confirmed under definitions-first (38.7 at 0.7, 33.0 at 0.5).
import { composeInTurns, mergeInTurns, type BodyComposer, type BodyLists } from '../../engine/body/rambo';

/**
 * `turns`: a usage, a definition, a CodeRAG item, a signature hit, and again (the product's);
 * `knowledge-first`: CodeRAG's items, then the turns of the others; `definitions-first`:
 * definitions and CodeRAG's items in turns, then usages and signature hits in turns; `rrf`:
 * reciprocal-rank fusion of the lists.
 */
export type BodyComposeName = 'turns' | 'knowledge-first' | 'definitions-first' | 'rrf';
export const BODY_COMPOSES: readonly BodyComposeName[] = ['turns', 'knowledge-first', 'definitions-first', 'rrf'];

/** Reciprocal-rank fusion's constant (Cormack et al.: 60). */
const RRF_K = 60;

type Item = { snippet: { id: string } };

function knowledgeFirst<T extends Item>({ usages, definitions, knowledge, signatures, related = [] }: BodyLists<T>): T[] {
  return mergeInTurns([[...knowledge, ...mergeInTurns([usages, definitions, signatures]), ...related]]);
}

function definitionsFirst<T extends Item>({ usages, definitions, knowledge, signatures, related = [] }: BodyLists<T>): T[] {
  return mergeInTurns([[...mergeInTurns([definitions, knowledge]), ...mergeInTurns([usages, related, signatures])]]);
}

function reciprocalRankFusion<T extends Item>({ usages, definitions, knowledge, signatures, related = [] }: BodyLists<T>): T[] {
  const score = new Map<string, { item: T; score: number; first: number }>();
  let order = 0;
  for (const list of [usages, definitions, knowledge, signatures, related]) {
    list.forEach((item, rank) => {
      const s = score.get(item.snippet.id);
      if (s) s.score += 1 / (RRF_K + rank + 1);
      else score.set(item.snippet.id, { item, score: 1 / (RRF_K + rank + 1), first: order++ });
    });
  }
  return [...score.values()].sort((a, b) => b.score - a.score || a.first - b.first).map((s) => s.item);
}

const COMPOSERS: Record<BodyComposeName, BodyComposer> = {
  turns: composeInTurns,
  'knowledge-first': knowledgeFirst,
  'definitions-first': definitionsFirst,
  rrf: reciprocalRankFusion,
};

/** The body mode's step e for `name`. */
export function bodyComposer(name: BodyComposeName): BodyComposer {
  return COMPOSERS[name];
}

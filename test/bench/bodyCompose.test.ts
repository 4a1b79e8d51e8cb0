// Rambo step e's orders of the lists: the product's turns (engine) and the orders only the bench
// runs (CodeRAG's items first, definitions first, reciprocal-rank fusion), each snippet once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { composeInTurns } from '../../src/engine/body/rambo';
import { BODY_COMPOSES, bodyComposer } from '../../src/bench/variants/bodyCompose';

void describe('step e: composing the lists', () => {
  const s = (id: string): { snippet: { id: string } } => ({ snippet: { id } });
  const lists = {
    usages: [s('u1'), s('u2'), s('shared')],
    definitions: [s('d1'), s('shared')],
    knowledge: [s('k1'), s('k2'), s('d1')],
    signatures: [s('g1')],
  };
  const ids = (xs: Array<{ snippet: { id: string } }>): string[] => xs.map((x) => x.snippet.id);

  void test("turns: a usage, a definition, a CodeRAG item, a signature hit, and again; each snippet once (the product's order)", () => {
    assert.deepEqual(ids(composeInTurns(lists)), ['u1', 'd1', 'k1', 'g1', 'u2', 'shared', 'k2']);
    assert.equal(bodyComposer('turns'), composeInTurns);
    assert.deepEqual([...BODY_COMPOSES], ['turns', 'knowledge-first', 'definitions-first', 'rrf']);
  });

  void test('knowledge-first: every CodeRAG item, then the turns of the others', () => {
    assert.deepEqual(ids(bodyComposer('knowledge-first')(lists)), ['k1', 'k2', 'd1', 'u1', 'g1', 'u2', 'shared']);
  });

  void test('definitions-first: definitions and CodeRAG items in turns, then usages and signature hits', () => {
    assert.deepEqual(ids(bodyComposer('definitions-first')(lists)), ['d1', 'k1', 'shared', 'k2', 'u1', 'g1', 'u2']);
  });

  void test("related definitions (the signature hits' elements) come after the sketch's definitions and CodeRAG's items", () => {
    const withRelated = { ...lists, related: [s('r1'), s('d1')] };
    assert.deepEqual(ids(bodyComposer('definitions-first')(withRelated)), ['d1', 'k1', 'shared', 'k2', 'u1', 'r1', 'g1', 'u2']);
    assert.deepEqual(ids(bodyComposer('knowledge-first')(withRelated)), ['k1', 'k2', 'd1', 'u1', 'g1', 'u2', 'shared', 'r1']);
    assert.deepEqual(ids(composeInTurns(withRelated)), ['u1', 'd1', 'k1', 'g1', 'r1', 'u2', 'shared', 'k2']);
  });

  void test('rrf: a snippet in two lists rises above one found once at the same rank', () => {
    const fused = ids(bodyComposer('rrf')(lists));
    assert.equal(fused[0], 'd1', `d1 is first in definitions and third in CodeRAG's items: ${fused.join(', ')}`);
    assert.deepEqual([...fused].sort(), ['d1', 'g1', 'k1', 'k2', 'shared', 'u1', 'u2']);
  });
});

// The member prior of checked decoding: its cues on hand-written code, the boosts on a hand-made
// vocabulary, and the constraint choosing the favoured member where the model's logits are flat.
import test from 'node:test';
import assert from 'node:assert/strict';
import { applyBoosts, nameBoosts, PriorContext, subwords } from '../../../src/engine/check/memberPrior';
import { maskVocabulary } from '../../../src/engine/check/tokenMask';
import { DereferenceConstraint } from '../../../src/engine/check/dereferenceConstraint';
import type { ReceiverMembers } from '../../../src/engine/check/receiverMembers';

const scoresOf = (text: string, receiver: string, names: string[], partial = ''): Map<string, number> =>
  new PriorContext(text).scores(text, receiver, partial, new Set(names));

void test('subwords split snake case, camel case and upper-case runs, dropping one-letter parts', () => {
  assert.deepEqual(subwords('get_module_filename'), ['get', 'module', 'filename']);
  assert.deepEqual(subwords('getHTMLParser2'), ['get', 'html', 'parser']);
  assert.deepEqual(subwords('LSTRIP_BLOCKS'), ['lstrip', 'blocks']);
  assert.deepEqual(subwords('x'), []);
});

void test('a word of the line before the dot favours the member that holds it; the receiver itself is no evidence', () => {
  const names = ['LSTRIP_BLOCKS', 'TRIM_BLOCKS', 'NEWLINE_SEQUENCE'];
  const s = scoresOf('def f(options):\n    x = getbool(options, "lstrip_blocks", defaults.', 'defaults', names);
  const best = [...s].sort((a, b) => b[1] - a[1])[0]![0];
  assert.equal(best, 'LSTRIP_BLOCKS');
  // "blocks" is shared by two members, "lstrip" by one: the rarer word counts more.
  assert.ok(s.get('LSTRIP_BLOCKS')! > (s.get('TRIM_BLOCKS') ?? 0));
  assert.equal(s.has('NEWLINE_SEQUENCE'), false);
  // A member named after the receiver gets nothing from the receiver's own name.
  assert.equal(scoresOf('x = 1\nblocks.', 'blocks', ['blocks_total', 'other']).size, 0);
});

void test('earlier uses of the same receiver count, uses of another receiver with the same name do not', () => {
  const text = 'cart.add(a)\ncart.add(b)\nother.cart.total()\n\n\n\ncart.';
  const s = scoresOf(text, 'cart', ['add', 'total', 'remove']);
  assert.ok(s.get('add')! > s.get('total')!, `add ${s.get('add')} total ${s.get('total')}`);
  // `total` only as a mention (a quarter weight), `remove` nowhere.
  assert.ok(Math.abs(s.get('total')! - 0.25 * Math.log(2)) < 1e-9);
  assert.equal(s.has('remove'), false);
});

void test('the boosts go to tokens by the best name they can still become; ending tokens need a whole name', () => {
  const vocab = maskVocabulary(['add', 'ad', 'd', 'total', '(', 'x']);
  const boosts = nameBoosts(
    new Map([
      ['add', 2],
      ['address', 3],
    ]),
    10,
  );
  const logits = new Float32Array(6).fill(0);
  applyBoosts(vocab, boosts, '', Uint8Array.from([1, 1, 0, 1, 0, 0]), logits);
  // "add" and "ad" both lead to "address" (30) as well as "add" (20); "total" has no evidence; masked ids untouched.
  assert.deepEqual([...logits], [30, 30, 0, 0, 0, 0]);
  const after = new Float32Array(6).fill(0);
  applyBoosts(vocab, boosts, 'add', Uint8Array.from([0, 0, 0, 0, 1, 0]), after);
  assert.deepEqual([...after], [0, 0, 0, 0, 20, 0], 'an ending token after "add" takes the boost of "add" itself');
});

void test('with flat logits the constraint writes the favoured member; with the prior off it writes the first allowed one', () => {
  const VOCAB = ['add', 'total', 'remove', '(', ' '];
  const names = new Set(['add', 'total', 'remove']);
  const members: ReceiverMembers = { receiver: 'cart', partial: '', names, entities: ['instance of Cart'] };
  const prefix = 'def f(cart):\n    cart.remove(1)\n    cart.';
  const pick = (weight: number): string => {
    const c = new DereferenceConstraint(prefix, () => undefined, members, weight);
    const logits = new Float32Array(VOCAB.length).fill(1);
    c.apply(VOCAB, '', logits);
    let best = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
    if (weight > 0) assert.deepEqual(c.events[0]!.favoured, ['remove']);
    else assert.equal(c.events[0]!.favoured, undefined);
    return VOCAB[best]!;
  };
  assert.equal(pick(32), 'remove');
  assert.equal(pick(0), 'add');
});

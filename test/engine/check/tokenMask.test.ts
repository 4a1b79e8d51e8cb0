// The dereference token mask on a hand-made vocabulary, and the constraint's per-step states.
import test from 'node:test';
import assert from 'node:assert/strict';
import { maskVocabulary, memberTokenMask, namePrefixes } from '../../../src/engine/check/tokenMask';
import { DereferenceConstraint } from '../../../src/engine/check/dereferenceConstraint';
import type { ReceiverMembers } from '../../../src/engine/check/receiverMembers';

const VOCAB = [
  'add',
  'ad',
  'd',
  'apply',
  '_',
  'discount',
  'add(',
  '(',
  '.',
  ' ',
  'total',
  'tot',
  'al',
  'items',
  '_items',
  'x',
  '\n',
  '<|endoftext|>',
  '',
  'al(',
  'al.',
];
const NAMES = new Set(['add', 'apply_discount', 'total']);

function allowedTokens(typed: string): string[] {
  const vocab = maskVocabulary(VOCAB);
  const allowed = new Uint8Array(VOCAB.length);
  const n = memberTokenMask(vocab, NAMES, namePrefixes(NAMES), typed, allowed);
  const out = VOCAB.filter((_, i) => allowed[i] === 1);
  assert.equal(out.length, n);
  return out;
}

void test('right after the dot only tokens starting a valid name are allowed (a whole name followed by more ends it)', () => {
  assert.deepEqual(allowedTokens(''), ['add', 'ad', 'apply', 'add(', 'total', 'tot']);
});

void test('inside a name, tokens continue it; at a complete name, tokens that end it (punctuation, end of text) are allowed too', () => {
  assert.deepEqual(allowedTokens('ad'), ['d']);
  assert.deepEqual(allowedTokens('apply'), ['_']);
  assert.deepEqual(allowedTokens('apply_'), ['d', 'discount']);
  assert.deepEqual(allowedTokens('tot'), ['al', 'al(', 'al.']);
  assert.deepEqual(allowedTokens('add'), ['(', '.', ' ', '\n', '<|endoftext|>']);
  assert.deepEqual(allowedTokens('addx'), []);
});

void test('the constraint masks from the cursor dot until the name is written, then decoding is free; a generated dot resolves again', () => {
  const members = (receiver: string): ReceiverMembers => ({ receiver, partial: '', names: NAMES, entities: [`instance of Cart`] });
  const resolved: string[] = [];
  const c = new DereferenceConstraint(
    'cart.',
    (text) => {
      resolved.push(text);
      return text.endsWith('total.') ? undefined : members('x');
    },
    members('cart'),
  );
  const step = (generated: string): number => {
    const logits = new Float32Array(VOCAB.length + 2).fill(1);
    c.apply(VOCAB, generated, logits);
    return logits.filter((v) => v !== -Infinity).length;
  };
  assert.equal(step(''), 6);
  assert.equal(step('tot'), 3);
  assert.equal(step('total'), 5);
  // The name is written: free again (padding ids past the vocabulary included).
  assert.equal(step('total '), VOCAB.length + 2);
  assert.equal(step('total.'), VOCAB.length + 2, 'an unresolved receiver is not constrained');
  assert.deepEqual(resolved, ['cart.total.']);
  assert.equal(c.events.length, 1);
  assert.deepEqual(
    { ...c.events[0], minAllowed: c.events[0]!.minAllowed },
    { receiver: 'cart', entities: ['instance of Cart'], names: 3, at: 'cursor', steps: 3, minAllowed: 3, written: 'total' },
  );
});

// Model text is inserted as it is: it ends before a U+FFFD or a lone surrogate, in every mode's postprocessing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { cutAtMalformed } from '../../../src/engine/generate/postprocess/wellFormed';
import { capLength, postprocessCompletion } from '../../../src/engine/generate/postprocess/postprocess';

void test('the text ends before the first U+FFFD or lone surrogate; whole pairs stay', () => {
  assert.equal(cutAtMalformed('total = price\uFFFD * 2'), 'total = price');
  assert.equal(cutAtMalformed('name = "\uD83D'), 'name = "');
  assert.equal(cutAtMalformed('\uDE00x = 1'), '');
  assert.equal(cutAtMalformed('a\uDE00\uD83D'), 'a');
  assert.equal(cutAtMalformed('s = "😀"'), 's = "😀"');
});

void test('line postprocessing cuts at U+FFFD; capping never splits a pair', () => {
  const ctx = { lang: 'python' as const, prefix: 'def f():\n    return ', suffix: '\n' };
  assert.equal(postprocessCompletion('value\uFFFD + 1', ctx), 'value');
  assert.equal(postprocessCompletion('\uDC00value', ctx), '');
  assert.equal(capLength('ab😀', 3), 'ab');
});

// The engine's view of a document: LF line breaks, the cursor at the same place, never inside a
// surrogate pair; suggestions back with the document's line break.
import test from 'node:test';
import assert from 'node:assert/strict';
import { clampToCharBoundary, engineText, lineBreakOf, withLineBreak } from '../../../src/engine/util/documentText';

void test('a CRLF or CR document reads as LF, the cursor before the same character', () => {
  for (const lineBreak of ['\r\n', '\r', '\n'] as const) {
    const doc = ['def f(x):', '    return x', ''].join(lineBreak);
    const at = doc.indexOf('return');
    const view = engineText(doc, at);
    assert.equal(view.text, 'def f(x):\n    return x\n', JSON.stringify(lineBreak));
    assert.equal(view.text.slice(view.offset, view.offset + 6), 'return');
    assert.equal(view.lineBreak, lineBreak);
  }
});

void test('a cursor between the CR and the LF of a line break goes before the break', () => {
  const doc = 'a = 1\r\nb = 2\r\n';
  const view = engineText(doc, doc.indexOf('\n'));
  assert.equal(view.text.slice(0, view.offset), 'a = 1');
  assert.equal(view.text.slice(view.offset), '\nb = 2\n');
});

void test('an offset inside a surrogate pair moves before the pair; out-of-range and fractional offsets clamp', () => {
  const text = 'x = "😀"';
  const inside = text.indexOf('😀') + 1;
  assert.equal(clampToCharBoundary(text, inside), inside - 1);
  assert.equal(clampToCharBoundary(text, inside + 1), inside + 1, 'after the pair stays');
  assert.equal(clampToCharBoundary(text, -3), 0);
  assert.equal(clampToCharBoundary(text, 99), text.length);
  assert.equal(clampToCharBoundary(text, 2.7), 2);
  assert.equal(clampToCharBoundary(text, Number.NaN), 0);
  assert.equal(engineText(`${text}\r\n`, inside).offset, inside - 1);
});

void test('suggestions take the document line break; the first break decides', () => {
  assert.equal(withLineBreak('a\nb\n', '\r\n'), 'a\r\nb\r\n');
  assert.equal(withLineBreak('a\nb', '\n'), 'a\nb');
  assert.equal(lineBreakOf('one line'), '\n');
  assert.equal(lineBreakOf('a\r\nb\nc'), '\r\n');
});

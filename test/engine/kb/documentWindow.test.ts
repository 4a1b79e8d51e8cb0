import test from 'node:test';
import assert from 'node:assert/strict';
import { TextDocument } from 'vscode-languageserver-textdocument';
import {
  documentAround,
  offsetOfPosition,
  overLimits,
  WINDOW_AFTER_CHARS,
  WINDOW_BEFORE_CHARS,
} from '../../../src/engine/kb/documentWindow';

void test('a document within the limits is taken whole; past the bytes, lines or line length it is windowed around the cursor', () => {
  const small = 'def f():\n    return 1\n';
  assert.deepEqual(documentAround(small, 9, { maxBytes: 1000 }), { prefix: 'def f():\n', suffix: '    return 1\n' });
  assert.match(overLimits('é'.repeat(600), { maxBytes: 1000 }) ?? '', /1,200 bytes > 1,000/, 'bytes, not characters');
  assert.match(overLimits('\n'.repeat(40), { maxBytes: 1000, maxLines: 30 }) ?? '', /more than 30 lines/);
  assert.match(overLimits(`a\n${'x'.repeat(50)}\n`, { maxBytes: 1000, maxLineChars: 40 }) ?? '', /a line of 50 characters > 40/);
  assert.equal(overLimits('\n'.repeat(30), { maxBytes: 1000, maxLines: 31 }), undefined);
});

void test("the window holds whole lines around the cursor, or the cursor line's neighbourhood when that line alone is longer", () => {
  const lines = Array.from({ length: 100_000 }, (_, i) => `v${i} = ${i}`);
  const text = lines.join('\n');
  const offset = text.indexOf('v50000 = ');
  const view = documentAround(text, offset, { maxBytes: 1_000_000_000 });
  assert.match(view.windowed ?? '', /more than 30,000 lines/);
  assert.ok(view.prefix.length <= WINDOW_BEFORE_CHARS && view.prefix.length > WINDOW_BEFORE_CHARS / 2);
  assert.ok(view.prefix.startsWith('v') && view.prefix.endsWith('\n'), 'starts and ends at line boundaries');
  assert.ok(view.suffix.startsWith('v50000 = 50000\n') && view.suffix.endsWith('\n') && view.suffix.length <= WINDOW_AFTER_CHARS);
  const line = 'x'.repeat(1_000_000);
  const one = documentAround(line, 600_000, { maxBytes: 100_000 });
  assert.deepEqual([one.prefix.length, one.suffix.length], [WINDOW_BEFORE_CHARS, WINDOW_AFTER_CHARS]);
});

void test('offsetOfPosition agrees with a TextDocument on \\n, \\r\\n and lone \\r line breaks, and clamps to the line', () => {
  const text = 'ab\ncd\r\nef\rgh\n\nlast';
  const doc = TextDocument.create('file:///x.py', 'python', 1, text);
  for (let line = 0; line < 7; line++) {
    for (const character of [0, 1, 2, 5])
      assert.equal(offsetOfPosition(text, { line, character }), doc.offsetAt({ line, character }), `${line}:${character}`);
  }
});

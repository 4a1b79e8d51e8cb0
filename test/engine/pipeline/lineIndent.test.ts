// Line mode on an empty line: the indentation the cursor lacks goes into the prompt and the
// suggestion, so the model writes the statement instead of closing the block.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { missingLineIndent } from '../../../src/engine/pipeline/lineIndent';

void describe('missingLineIndent', () => {
  test("one level deeper below a line that opens a block (Java `{`, Python `:`), in the file's own unit", () => {
    const java = 'class A {\n    void f() {\n        for (int i = 0; i < n; i++) {\n';
    assert.equal(missingLineIndent(java, '\n    }\n'), ' '.repeat(12));
    const py = 'def f(x):\n  if x:  # two-space file\n';
    assert.equal(missingLineIndent(py, ''), '    ');
    const tabs = 'class A {\n\tvoid f() {\n\t\tif (ok) {\n';
    assert.equal(missingLineIndent(tabs, '\n'), '\t\t\t');
  });

  test("the previous statement's level after a plain line; blank lines in between are skipped", () => {
    assert.equal(missingLineIndent('def f(x):\n    y = x + 1\n\n', '\n    return y\n'), '    ');
    assert.equal(missingLineIndent('    int a = 1; // done {\n', ''), '    ');
  });

  test('only what the cursor still lacks; nothing when the line has text or the cursor is deep enough', () => {
    assert.equal(missingLineIndent('def f(x):\n    if x:\n    ', ''), '    ');
    assert.equal(missingLineIndent('def f(x):\n    if x:\n        ', ''), '');
    assert.equal(missingLineIndent('def f(x):\n    y = 1\n    re', ''), '');
    assert.equal(missingLineIndent('def f(x):\n    y = 1\n', 'return y\n'), '');
    assert.equal(missingLineIndent('', 'x = 1\n'), '');
    assert.equal(missingLineIndent('\n\n', ''), '');
  });
});

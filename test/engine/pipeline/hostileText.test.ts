// Long runs in the open file or the model's answer (issue 44, round 2, item 4): the scans over a
// line or an answer are linear. The time limits are hang detectors far above the expected
// milliseconds (each case took minutes with the `$`-anchored patterns they replace).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { missingLineIndent } from '../../../src/engine/pipeline/lineIndent';
import { lineSettled } from '../../../src/engine/generate/postprocess/postprocess';
import { guessBodyTarget } from '../../../src/engine/body/detectBody';

void test('a 300 KB run of spaces on the line above an empty cursor line: the indentation is still worked out', { timeout: 20_000 }, () => {
  const prefix = `def f():\n    x = 1${' '.repeat(300_000)}+ 2  # note\n    if x:\n`;
  assert.equal(missingLineIndent(prefix, ''), '        ');
  assert.equal(missingLineIndent(`    y = a${' '.repeat(300_000)}b\n`, ''), '    ');
});

void test('a 64 KiB answer without a line break: the single line is not settled; one that ended a line is', { timeout: 20_000 }, () => {
  const settled = lineSettled({ lang: 'python', prefix: 'x = ', suffix: '' })!;
  for (let n = 4096; n <= 64 * 1024; n += 4096) assert.equal(settled('retries=3, '.repeat(n / 11)), false);
  assert.equal(settled(`${'a'.repeat(64 * 1024)}\n`), true);
  assert.equal(settled('   \n'), false);
});

void test('a forced body request over a method header followed by 300 KB of spaces: the signature loses only its trailing brace and spaces', { timeout: 20_000 }, () => {
  const target = guessBodyTarget('java', `class A {\n  int f(int x) {${' '.repeat(300_000)}`);
  assert.equal(target?.name, 'f');
  assert.equal(target?.signature, '  int f(int x) ');
});

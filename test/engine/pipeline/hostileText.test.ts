// Long runs in the open file or the model's answer (test/faults/README.md, round 2, row 4): the scans over a
// line or an answer are linear. The 10 s bounds are hang detectors, not timing targets: each case
// takes milliseconds, and took 20 s to minutes with the `$`-anchored patterns replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { missingLineIndent } from '../../../src/engine/pipeline/lineIndent';
import { lineSettled } from '../../../src/engine/generate/postprocess/postprocess';
import { guessBodyTarget } from '../../../src/engine/body/detectBody';

/** Run `work`, failing when it holds the thread 10 s or more (a stall, not a slow machine). */
function notStalled<T>(work: () => T): T {
  const start = performance.now();
  const out = work();
  const ms = performance.now() - start;
  assert.ok(ms < 10_000, `held the event loop ${Math.round(ms)} ms`);
  return out;
}

void test('a 300 KB run of spaces on the line above an empty cursor line: the indentation is still worked out', () => {
  const prefix = `def f():\n    x = 1${' '.repeat(300_000)}+ 2  # note\n    if x:\n`;
  assert.equal(
    notStalled(() => missingLineIndent(prefix, '')),
    '        ',
  );
  assert.equal(
    notStalled(() => missingLineIndent(`    y = a${' '.repeat(300_000)}b\n`, '')),
    '    ',
  );
});

void test('a 64 KiB answer without a line break: the single line is not settled; one that ended a line is', () => {
  const settled = lineSettled({ lang: 'python', prefix: 'x = ', suffix: '' })!;
  notStalled(() => {
    for (let n = 4096; n <= 64 * 1024; n += 4096) assert.equal(settled('retries=3, '.repeat(n / 11)), false);
  });
  assert.equal(settled(`${'a'.repeat(64 * 1024)}\n`), true);
  assert.equal(settled('   \n'), false);
});

void test('a forced body request over a method header with 300 KB of spaces after it: the signature is read, its trailing brace dropped', () => {
  const target = notStalled(() => guessBodyTarget('java', `class A {\n  int f(int x) {${' '.repeat(300_000)}\n`));
  assert.equal(target?.name, 'f');
  assert.equal(target?.signature, '  int f(int x) ');
  const spaced = notStalled(() => guessBodyTarget('java', `class A {\n  int f(int x,${' '.repeat(300_000)}int y) {\n`));
  assert.equal(spaced?.signature, `  int f(int x,${' '.repeat(300_000)}int y) `);
});

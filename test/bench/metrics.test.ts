import test from 'node:test';
import assert from 'node:assert/strict';
import {
  containsIdentifier,
  editSimilarity,
  identifiers,
  levenshtein,
  medianP95,
  normalizePair,
  normalizedLines,
  scoreCompletion,
  scoreContexts,
  setF1,
  type CrossfileDef,
} from '../../src/bench/metrics';

const close = (actual: number, expected: number, eps = 1e-9): void =>
  assert.ok(Math.abs(actual - expected) < eps, `${actual} != ${expected}`);

void test('levenshtein on hand-computed pairs', () => {
  assert.equal(levenshtein('kitten', 'sitting'), 3);
  assert.equal(levenshtein('flaw', 'lawn'), 2);
  assert.equal(levenshtein('', 'abc'), 3);
  assert.equal(levenshtein('abc', ''), 3);
  assert.equal(levenshtein('same', 'same'), 0);
  assert.equal(levenshtein('prefix-a-suffix', 'prefix-bb-suffix'), 2);
});

void test('levenshtein agrees with the textbook dynamic programme on random strings', () => {
  const reference = (a: string, b: string): number => {
    const d = Array.from({ length: a.length + 1 }, (_, i) =>
      Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
    );
    for (let i = 1; i <= a.length; i++)
      for (let j = 1; j <= b.length; j++)
        d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length]![b.length]!;
  };
  let seed = 7;
  const rnd = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  for (let t = 0; t < 300; t++) {
    const a = Array.from({ length: rnd(12) }, () => 'abc'[rnd(3)]).join('');
    const b = Array.from({ length: rnd(12) }, () => 'abc'[rnd(3)]).join('');
    assert.equal(levenshtein(a, b), reference(a, b), `${a} / ${b}`);
  }
});

void test('ES is 1 - Levenshtein / max length, in percent', () => {
  close(editSimilarity('kitten', 'sitting'), 100 * (1 - 3 / 7));
  assert.equal(editSimilarity('', ''), 100);
  assert.equal(editSimilarity('abc', ''), 0);
});

void test('normalisation: stripped non-empty lines, Python # comment lines dropped, prediction cut to the truth line count, joined without separator', () => {
  assert.deepEqual(normalizedLines('    # comment\n    y = bar()\n\n    return y  \n', 'python'), ['y = bar()', 'return y']);
  const pair = normalizePair('y = bar()  \n# c\nreturn y\nextra line', '    # comment\n    y = bar()\n\n    return y', 'python');
  assert.deepEqual(pair, { prediction: 'y = bar()return y', groundTruth: 'y = bar()return y' });
  // A `#` inside a line is not a comment line.
  assert.deepEqual(normalizedLines('x = 1  # note', 'python'), ['x = 1  # note']);
});

void test('Java comment lines: // lines and whole block-comment lines are dropped, code after */ is kept', () => {
  const gt = '// add it\nlist.add(x);\n/* block\n * more\n */\nreturn list;';
  assert.deepEqual(normalizedLines(gt, 'java'), ['list.add(x);', 'return list;']);
  assert.deepEqual(normalizedLines('/** doc */\nfoo();\n/* a */ bar();\n/* open\n still */ baz();', 'java'), [
    'foo();',
    '/* a */ bar();',
    'still */ baz();',
  ]);
  // `#` is not a comment in Java.
  assert.deepEqual(normalizedLines('# not a comment', 'java'), ['# not a comment']);
  const s = scoreCompletion('/** doc */\nlist.add(x);\n// note\nreturn list;\n}', gt, 'java');
  assert.equal(s.em, 100);
  assert.equal(s.es, 100);
});

void test('identifiers: string literals removed, keywords dropped, True/False/None kept (Python)', () => {
  assert.deepEqual(identifiers('return f"{x} y" if flag else None', 'python'), ['flag', 'None']);
  assert.deepEqual(identifiers("a = b'raw' + r'''multi\nline''' + c", 'python'), ['a', 'c']);
  assert.deepEqual(identifiers('if True and not y: pass', 'python'), ['True', 'y']);
});

void test('identifiers: Java strings, chars and keywords; true/false/null kept', () => {
  assert.deepEqual(identifiers('return new Foo("a b", \'c\', true, null);', 'java'), ['Foo', 'true', 'null']);
  assert.deepEqual(identifiers('String s = "say \\"hi\\""; int n = s.length();', 'java'), ['String', 's', 'n', 's', 'length']);
});

void test('identifier F1 is the F1 of the two sets', () => {
  close(setF1(['x', 'foo', 'a', 'c'], ['x', 'foo', 'a', 'b']), 0.75);
  close(setF1(['a', 'a', 'b'], ['a']), (2 * 0.5 * 1) / 1.5);
  assert.equal(setF1([], []), 1);
  assert.equal(setF1(['a'], []), 0);
});

void test('scoreCompletion on a hand-computed Python case', () => {
  const s = scoreCompletion('x = foo(a, c)\nreturn x', 'x = foo(a, b)', 'python');
  assert.equal(s.em, 0);
  close(s.es, 100 * (1 - 1 / 13));
  assert.equal(s.idEm, 0);
  close(s.idF1, 75);
  const exact = scoreCompletion('  x = foo(a, b)\n\nmore()', 'x = foo(a, b)', 'python');
  assert.deepEqual(exact, { em: 100, es: 100, idEm: 100, idF1: 100 });
  // Same identifiers in the same order, different code: identifier EM 100, EM 0.
  const ids = scoreCompletion('x = foo(a, "b")', 'x = foo(a)', 'python');
  assert.equal(ids.em, 0);
  assert.equal(ids.idEm, 100);
});

void test('a missing prediction scores as the empty string', () => {
  assert.deepEqual(scoreCompletion(undefined, 'a = 1', 'python'), { em: 0, es: 0, idEm: 0, idF1: 0 });
  assert.deepEqual(scoreCompletion('', 'a = 1', 'python'), { em: 0, es: 0, idEm: 0, idF1: 0 });
});

const defs: CrossfileDef[] = [
  { name: 'Foo', kind: 'class', file: 'a.py', line: 0 },
  { name: 'bar', kind: 'function', file: 'b.py', line: 3 },
  { name: 'baz', kind: 'function', file: 'c.py', line: 9 },
];
const contexts = [
  { path: 'a.py', text: '# a.py\nclass Foo:\n    pass', source: 'sparse' },
  { path: 'x.py', text: 'bar()', source: 'dense' },
  { path: 'c.py', text: 'def baz2(): ...', source: 'sparse' },
  { path: 'b.py', text: 'def bar():\n    return 1', source: 'dataflow' },
];

void test('context recall@k, full coverage and name coverage@k on a hand-computed case', () => {
  const k3 = scoreContexts(defs, contexts, 3)!;
  close(k3.recall, 1 / 3); // Foo only: bar's file is 4th, c.py has baz2 not baz
  assert.equal(k3.full, 0);
  close(k3.coverage, 2 / 3); // Foo, and bar through x.py
  const k4 = scoreContexts(defs, contexts, 4)!;
  close(k4.recall, 2 / 3);
  close(k4.coverage, 2 / 3);
  const all = scoreContexts(defs.slice(0, 2), contexts, 4)!;
  assert.deepEqual(all, { recall: 1, full: 1, coverage: 1 });
  assert.deepEqual(scoreContexts(defs, undefined, 10), { recall: 0, full: 0, coverage: 0 });
  assert.equal(scoreContexts([], contexts, 10), undefined);
  assert.equal(scoreContexts(undefined, contexts, 10), undefined);
});

void test('containsIdentifier matches whole identifiers only', () => {
  assert.ok(containsIdentifier('x = get(1)', 'get'));
  assert.ok(!containsIdentifier('x = getX(1)', 'get'));
  assert.ok(!containsIdentifier('x = _get(1)', 'get'));
  assert.ok(containsIdentifier('get', 'get'));
});

void test('median and p95 (nearest rank)', () => {
  assert.deepEqual(medianP95([5, 1, 3]), { median: 3, p95: 5 });
  assert.deepEqual(medianP95([4, 1, 3, 2]), { median: 2.5, p95: 4 });
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.deepEqual(medianP95(hundred), { median: 50.5, p95: 95 });
  assert.equal(medianP95([]), undefined);
});

// The copy prior's votes and mix, on hand-written prompts and a small vocabulary.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CopyPrior, TokenLookup, type CopyPriorOptions } from '../../../src/engine/generate/copyPrior';

const options: CopyPriorOptions = { minChars: 3, maxChars: 40, minWeight: 0.3, weightPerChar: 0.1, maxWeight: 0.6 };
// Single characters, a few words, and a piece of a multi-byte character (never a match).
const vocab = [...'abcdefghijklmnopqrstuvwxyz_=(). \n', 'build', 'bu', 'reg', 'load', ' =', '\uFFFD'];
const lookup = new TokenLookup(vocab);
const id = (t: string): number => vocab.indexOf(t);

void describe('copy prior', () => {
  void test('the vocabulary lookup finds the longest token a text starts with', () => {
    assert.equal(lookup.longestPrefix('build_widget'), id('build'));
    assert.equal(lookup.longestPrefix('bux'), id('bu'));
    assert.equal(lookup.longestPrefix('?'), undefined);
    assert.equal(lookup.longestPrefix(''), undefined);
  });

  void test('the longest tail match votes for the longest token the text after it starts with', () => {
    const prior = new CopyPrior('reg = build_widget(p)\n\nreg = ', lookup, options);
    const v = prior.vote('');
    assert.ok(v);
    // `reg =` matched (4 characters that are not spaces), then `build...` followed it.
    assert.equal(v.match, 4);
    assert.deepEqual([...v.next], [[id('build'), 1]]);
    assert.ok(Math.abs(v.weight - 0.4) < 1e-9);
    // Mid-word, after the model wrote `bu`: the tail now matches `reg = bu`, and `i` follows.
    const mid = prior.vote('bu');
    assert.ok(mid);
    assert.equal(mid.match, 6);
    assert.deepEqual([...mid.next], [[id('i'), 1]]);
    assert.ok(Math.abs(mid.weight - 0.6) < 1e-9, 'capped at maxWeight');
  });

  void test('matches of equal length share the vote; indentation and short matches give none', () => {
    const prior = new CopyPrior('x.load(a)\ny.load(b)\nz.load(', lookup, options);
    const v = prior.vote('');
    assert.ok(v);
    assert.equal(v.match, 6);
    assert.deepEqual(
      [...v.next].sort((a, b) => a[0] - b[0]),
      [
        [id('a'), 0.5],
        [id('b'), 0.5],
      ],
    );
    // Only spaces and newlines in common: nothing to copy.
    assert.equal(new CopyPrior('        x\n        ', lookup, options).vote(''), undefined);
    // `ab` is two characters, under minChars.
    assert.equal(new CopyPrior('abc\nab', lookup, options).vote(''), undefined);
    assert.equal(new CopyPrior('', lookup, options).vote(''), undefined);
  });

  void test('text besides the prompt (the file above its window) is copied from too, but no match crosses into the prompt', () => {
    const prior = new CopyPrior('z.load(', lookup, options, 'x.load(a)\n');
    const v = prior.vote('');
    assert.ok(v);
    assert.deepEqual([...v.next], [[id('a'), 1]]);
    // `before` ends in `load(`: its end is followed by nothing (the separator), not by the prompt's start.
    assert.equal(new CopyPrior('abc', lookup, options, 'x.load(').vote('x.load('), undefined);
  });

  void test("the prompt's own end is never its match: nothing follows it", () => {
    const prior = new CopyPrior('load(', lookup, options);
    assert.equal(prior.vote(''), undefined);
  });

  void test("the mix lifts the copied token above the model's choice, keeps masked tokens masked and sums to one", () => {
    const prior = new CopyPrior('reg = build(p)\nreg = ', lookup, { ...options, minWeight: 0.5 });
    const logits = new Float32Array(vocab.length).fill(0);
    logits[id('load')] = 3;
    logits[id('\uFFFD')] = -Infinity;
    assert.equal(prior.apply('', logits), true);
    let best = 0;
    logits.forEach((l, i) => (l > logits[best]! ? (best = i) : undefined));
    assert.equal(best, id('build'));
    assert.equal(logits[id('\uFFFD')], -Infinity);
    const sum = [...logits].reduce((s, l) => s + Math.exp(l), 0);
    assert.ok(Math.abs(sum - 1) < 1e-4, String(sum));
    // No match: the logits stay as they were.
    const untouched = new Float32Array([1, 2, 3]);
    const silent = new CopyPrior('abc', lookup, options);
    assert.equal(silent.apply('', untouched), false);
    assert.deepEqual([...untouched], [1, 2, 3]);
    // What each did, for the trace: the first voted once and changed the model's choice (load -> build).
    assert.deepEqual(prior.stats, { steps: 1, voted: 1, changed: 1, longestMatch: 4 });
    assert.deepEqual(silent.stats, { steps: 1, voted: 0, changed: 0, longestMatch: 0 });
  });
});

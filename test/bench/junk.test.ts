// The bench's junk detector and the shown/ungated scores of `eval score`: what a user
// would reject on sight is counted, and a suppressed suggestion is scored in the ungated figures only.
import test from 'node:test';
import assert from 'node:assert/strict';
import { junkOf } from '../../src/bench/junk';
import { scorePredictions } from '../../src/bench/score';
import type { BenchCase, Prediction } from '../../src/bench/cases';

void test('junk: a line repeated more than twice, a redaction placeholder, an unknown member, an echo of the text after the cursor', () => {
  assert.deepEqual(junkOf('this.cart = cart;\n'.repeat(15) + 'this', '}\n', false), ['repeat']);
  assert.deepEqual(junkOf('a = 1\na = 1\nb = 2', '', false), [], 'twice is not junk');
  assert.deepEqual(junkOf('CheckoutService(cart, lineno="<redacted>")', '', false), ['placeholder']);
  assert.deepEqual(junkOf('Iterators.this);', '', true), ['unknown-member']);
  assert.deepEqual(junkOf('    return total\n', 'return   total\n\ndef f():\n', false), ['echo']);
  assert.deepEqual(junkOf('return total + tax', 'return total\n', false), []);
  assert.deepEqual(junkOf('   ', 'anything', true), [], 'an empty suggestion shows nothing');
});

void test('junk: a loop inside a line, or lines made of the same pieces, counts as a loop; a builder chain and varied lines do not', () => {
  // A call chain and a phrase written again and again in one line (the first line before the loop is no excuse).
  assert.deepEqual(junkOf('timezones() -> st.timezones() -> st.timezones() -> st.timezones() -> st.', '', false), ['loop']);
  assert.deepEqual(junkOf('x = 1\nreturn True if not None or not None or not None or None or not None or', '', false), ['loop']);
  // Lines of the same pieces in another order.
  assert.deepEqual(junkOf('int min = max;\nint max = min;\nint min = max;\n', '', false), ['loop']);
  for (const fine of [
    'builder.add(a).add(b).add(c).add(d).add(e);',
    "self.assertEqual(f('a'), 1)\nself.assertEqual(f('b'), 2)\nself.assertEqual(f('c'), 3)",
    'item_show_func: t.Optional[t.Callable[[t.Optional[V]], t.Optional[str]]] = None,',
    'int a = 1;\nint b = 2;\nint c = 3;',
  ])
    assert.deepEqual(junkOf(fine, '', false), [], fine);
});

void test('eval score: ES/EM over all cases and over the shown ones, the share shown and the junk rate of what is shown', () => {
  const cases: BenchCase[] = ['a', 'b', 'c', 'd'].map((id) => ({
    prompt: 'x = ',
    groundtruth: 'compute(1)',
    right_context: 'print(x)\n',
    metadata: { task_id: id, repository: 'r', file: 'm.py', lang: 'python' },
  }));
  const p = (task_id: string, prediction: string, shown?: boolean): Prediction => ({
    task_id,
    prediction,
    contexts: [],
    timings_ms: {},
    ...(shown === undefined ? {} : { shown }),
  });
  const report = scorePredictions(cases, [
    p('a', 'compute(1)', true),
    p('b', 'compute(1)'),
    p('c', 'zzz', false),
    p('d', 'print(x)', true),
  ]);
  const s = report.overall;
  assert.equal(s.em, 50);
  assert.equal(s.shown_share, 0.75, 'a prediction without `shown` is shown; c is not');
  assert.ok(Math.abs(s.em_shown - 200 / 3) < 1e-9);
  assert.ok(s.es_shown > s.es);
  assert.ok(Math.abs(s.junk_rate! - 1 / 3) < 1e-9, 'd only repeats the text after the cursor');
  assert.deepEqual(s.junk, { echo: 1 });
});

// Fitting the show gate offline: the logistic fit with soft targets recovers the weights that made
// the targets, keeps dropped features at 0, and the curve counts the share shown and its mean ES.
import test from 'node:test';
import assert from 'node:assert/strict';
import { fitLogistic, scoreOf, showCurve, type GateSample } from '../../src/bench/gateFit';
import { GATE_FEATURES } from '../../src/engine/gate/features';

void test('soft-target logistic fit recovers the generating weights; dropped features stay 0', () => {
  const truth = GATE_FEATURES.map((_, i) => (i === 0 ? -1 : i === 1 ? 1.5 : i === 3 ? -0.5 : 0));
  const samples: GateSample[] = [];
  for (let k = 0; k < 400; k++) {
    const x = GATE_FEATURES.map((_, i) => (i === 0 ? 1 : i === 1 ? -3 + (6 * k) / 400 : i === 3 ? ((k * 7) % 13) / 4 : 0));
    samples.push({ x, y: scoreOf(truth, x), hasLogprobs: true, group: 'g' });
  }
  const w = fitLogistic(samples, 1e-6);
  for (const i of [0, 1, 3]) assert.ok(Math.abs(w[i]! - truth[i]!) < 0.05, `${GATE_FEATURES[i]}: ${w[i]} vs ${truth[i]}`);
  const dropped = fitLogistic(samples, 1e-6, ['meanLogprob']);
  assert.equal(dropped[1], 0);
});

void test('the curve: the share of suggestions at or above each threshold and the mean ES of those', () => {
  const scored = [
    { score: 0.1, es: 10 },
    { score: 0.3, es: 40 },
    { score: 0.5, es: 80 },
    { score: 0.7, es: 60 },
  ];
  assert.deepEqual(showCurve(scored, [0, 0.3, 0.6, 0.9]), [
    { threshold: 0, shown: 1, esShown: 47.5 },
    { threshold: 0.3, shown: 0.75, esShown: 60 },
    { threshold: 0.6, shown: 0.25, esShown: 60 },
    { threshold: 0.9, shown: 0, esShown: null },
  ]);
});

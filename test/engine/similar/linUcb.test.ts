// LinUCB (ProCC's perspective chooser) on hand-computed cases, and its saved state.
import test from 'node:test';
import assert from 'node:assert/strict';
import { LinUcb } from '../../../src/engine/similar/linUcb';

const close = (actual: number, expected: number): void => assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} != ${expected}`);

test('with no rewards every arm scores alpha * |x| and the first arm wins the tie', () => {
  const bandit = new LinUcb(['a', 'b'] as const, 2, { alpha: 0.1 });
  const choice = bandit.choose([1, 0]);
  assert.equal(choice.arm, 'a');
  close(choice.scores.a, 0.1);
  close(choice.scores.b, 0.1);
});

test('an update moves the rewarded arm by theta = A^-1 b (hand-computed)', () => {
  const bandit = new LinUcb(['a', 'b'] as const, 2, { alpha: 0.1 });
  bandit.update('a', [1, 0], 1); // A_a = diag(2, 1), b_a = (1, 0), theta_a = (0.5, 0)
  let choice = bandit.choose([1, 0]);
  assert.equal(choice.arm, 'a');
  close(choice.scores.a, 0.5 + 0.1 * Math.sqrt(0.5));
  close(choice.scores.b, 0.1);
  bandit.update('b', [0, 1], 1);
  choice = bandit.choose([0, 1]);
  assert.equal(choice.arm, 'b');
  close(choice.scores.a, 0.1);
  close(choice.scores.b, 0.5 + 0.1 * Math.sqrt(0.5));
  // A zero reward on a correlated context: A_a = [[3,1],[1,2]], A_a^-1 = [[2,-1],[-1,3]]/5,
  // theta_a = (0.4, -0.2); for x = (1, 1): 0.2 + 0.1 * sqrt(0.6).
  bandit.update('a', [1, 1], 0);
  close(bandit.score('a', [1, 1]), 0.2 + 0.1 * Math.sqrt(0.6));
  assert.deepEqual(bandit.pullCounts(), { a: 2, b: 1 });
});

test('choice among allowed arms only', () => {
  const bandit = new LinUcb(['a', 'b', 'none'] as const, 1);
  bandit.update('a', [1], 1);
  assert.equal(bandit.choose([1]).arm, 'a');
  assert.equal(bandit.choose([1], ['b', 'none']).arm, 'b');
});

test('the saved state restores the same scores; a state of another shape is refused', () => {
  const bandit = new LinUcb(['lexical', 'summary'] as const, 3, { alpha: 0.2 });
  bandit.update('summary', [0.5, 0.2, 1], 1);
  bandit.update('lexical', [0.1, 0.9, 1], 0.25);
  const saved = JSON.parse(JSON.stringify(bandit));
  const again = LinUcb.fromJSON(saved, ['lexical', 'summary'] as const, 3);
  for (const x of [
    [0.5, 0.2, 1],
    [0.3, 0.3, 1],
  ]) {
    close(again.score('lexical', x), bandit.score('lexical', x));
    close(again.score('summary', x), bandit.score('summary', x));
  }
  assert.equal(again.alpha, 0.2);
  assert.throws(() => LinUcb.fromJSON(saved, ['lexical', 'summary'] as const, 4), /dimension 3, expected 4/);
  assert.throws(() => LinUcb.fromJSON(saved, ['lexical'] as const, 3), /arms/);
  assert.throws(
    () => LinUcb.fromJSON({ ...saved, b: { lexical: [1, 2], summary: [0, 0, 0] } }, ['lexical', 'summary'] as const, 3),
    /b of arm lexical/,
  );
  assert.throws(() => LinUcb.fromJSON('garbage', ['lexical'] as const, 3), /not a saved LinUCB state/);
  again.reset();
  close(again.score('summary', [1, 0, 0]), 0.2);
});

test('bad contexts and rewards are refused, not learned', () => {
  const bandit = new LinUcb(['a'] as const, 2);
  assert.throws(() => bandit.choose([1]), /2/);
  assert.throws(() => bandit.update('a', [1, Number.NaN], 1), /finite/);
  assert.throws(() => bandit.update('a', [1, 0], Number.POSITIVE_INFINITY), /finite/);
  assert.deepEqual(bandit.pullCounts(), { a: 0 });
});

test('a saved state whose matrix is singular, asymmetric or below the identity is refused; the host starts afresh with finite scores', () => {
  const state = (A: number[]): unknown => ({ version: 1, arms: ['a'], dim: 2, alpha: 0.1, A: { a: A }, b: { a: [1, 1] }, pulls: { a: 3 } });
  // Diagonal 1 but singular (every score would be NaN), asymmetric, and positive definite yet not I + sum x x^T.
  for (const A of [
    [1, 1, 1, 1],
    [2, 1, 0, 2],
    [1, 0.5, 0.5, 1],
  ])
    assert.throws(() => LinUcb.fromJSON(state(A), ['a'] as const, 2), /not symmetric positive definite/, JSON.stringify(A));
  const fine = LinUcb.fromJSON(state([2, 1, 1, 2]), ['a'] as const, 2);
  assert.ok(Number.isFinite(fine.score('a', [1, 1])));
});

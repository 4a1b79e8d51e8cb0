// The loop guard's choice of tokens, on hand-written id sequences.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyLoopGuard, DEFAULT_LOOP_GUARD, loopContinuations } from '../../../src/engine/generate/loopGuard';

void describe('loop guard', () => {
  void test('a two-token cycle is allowed three copies; the token that would start the fourth is banned', () => {
    // "t" ":" repeated: 7 = "t", 8 = ":"
    assert.deepEqual(loopContinuations([1, 2, 7, 8, 7, 8]), []);
    assert.deepEqual(loopContinuations([1, 2, 7, 8, 7, 8, 7]), []);
    assert.deepEqual(loopContinuations([1, 2, 7, 8, 7, 8, 7, 8]), [7]);
    // Mid-cycle: after "t : t : t : t" the next ":" would extend it.
    assert.deepEqual(loopContinuations([7, 8, 7, 8, 7, 8, 7]), [8]);
  });

  void test('one token may repeat six times in a row, a line of four or more tokens twice', () => {
    assert.deepEqual(loopContinuations([5, 9, 9, 9, 9, 9]), []);
    assert.deepEqual(loopContinuations([5, 9, 9, 9, 9, 9, 9]), [9]);
    const line = [10, 11, 12, 13, 14];
    assert.deepEqual(loopContinuations([3, ...line, ...line.slice(0, 4)]), []);
    assert.deepEqual(loopContinuations([3, ...line, ...line]), [10]);
  });

  void test('code that repeats a prefix without cycling is left alone', () => {
    // `self.a = a` / `self.b = b`: the shared `self` `.` does not make a cycle.
    const ids = [20, 21, 30, 40, 30, 50, 20, 21, 31, 40, 31, 50, 20, 21];
    assert.deepEqual(loopContinuations(ids), []);
    assert.deepEqual(loopContinuations([]), []);
  });

  void test('the banned tokens are masked unless nothing finite would be left', () => {
    const ids = [7, 8, 7, 8, 7, 8];
    const logits = new Float32Array([0, 1, 2, 3, 4, 5, 6, 9, 8]);
    assert.equal(applyLoopGuard(ids, logits), 1);
    assert.equal(logits[7], -Infinity);
    assert.equal(logits[8], 8);
    const only = new Float32Array(9).fill(-Infinity);
    only[7] = 1;
    assert.equal(applyLoopGuard(ids, only, DEFAULT_LOOP_GUARD), 0);
    assert.equal(only[7], 1);
  });
});

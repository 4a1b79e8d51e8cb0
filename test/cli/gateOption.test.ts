// `coderag eval`'s show-gate options and what its predictions file keeps of the gate: a
// suggestion the gate kept back is still the prediction, marked `shown: false`, with the score
// and features the fit script reads back.
import test from 'node:test';
import assert from 'node:assert/strict';
import { gateOption } from '../../src/cli/commands/eval';
import { formatPrediction, validatePrediction } from '../../src/bench/cases';

void test('--gate on|off, --gate-threshold X (every mode) and --gate-body-threshold Y; none leaves the default; nonsense is a usage error', () => {
  assert.deepEqual(gateOption(undefined, undefined), {});
  assert.deepEqual(gateOption('off', undefined), { gate: { mode: 'off' } });
  assert.deepEqual(gateOption(undefined, '0.3'), { gate: { mode: 'on', threshold: 0.3, bodyThreshold: 0.3 } });
  assert.deepEqual(gateOption('on', '0'), { gate: { mode: 'on', threshold: 0, bodyThreshold: 0 } });
  assert.deepEqual(gateOption('on', '0.22', '0.26'), { gate: { mode: 'on', threshold: 0.22, bodyThreshold: 0.26 } });
  assert.deepEqual(gateOption(undefined, undefined, '0.3'), { gate: { mode: 'on', bodyThreshold: 0.3 } });
  assert.throws(() => gateOption('maybe', undefined), /--gate must be on or off/);
  assert.throws(() => gateOption('on', '1.5'), /--gate-threshold must be a number from 0 to 1/);
  assert.throws(() => gateOption('on', '0.2', '-1'), /--gate-body-threshold must be a number from 0 to 1/);
});

void test('a prediction keeps shown: false and the gate score and features through the predictions file', () => {
  const gate = { score: 0.12, threshold: 0.22, logprobs: true, features: { bias: 1, meanLogprob: -2.5 } };
  const line = formatPrediction({ task_id: 't/1', prediction: 'x = 1', contexts: [], timings_ms: {}, shown: false, gate });
  const back = validatePrediction(JSON.parse(line));
  assert.ok(typeof back !== 'string', String(back));
  assert.equal(back.prediction, 'x = 1', 'the suppressed text is the prediction');
  assert.equal(back.shown, false);
  assert.deepEqual(back.gate, gate);
});

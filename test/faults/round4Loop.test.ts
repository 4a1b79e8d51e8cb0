// The server's event loop while it loads its models, indexes a large module, rebuilds the sparse
// index of a large repository and saves the dense vectors: each long synchronous step is cut into
// pieces with the loop let through between them, so a request never waits behind one of them
// for long. A timer probe (a tick every few ms, as a request would wait) measures the longest turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSession } from '../../src/engine/models/onnxSession';
import { repoRoot } from '../helpers/paths';

void test('models: ONNX sessions asked for at once are created one per turn of the event loop (a timer runs between any two loads)', async () => {
  const lm = join(repoRoot, 'models', 'coderag-lm', 'onnx', 'decoder_model_merged.onnx');
  const encoder = join(repoRoot, 'models', 'coderag-encoder', 'onnx', 'model.onnx');
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const ticksAtLoad: number[] = [];
  try {
    // As the server asks at start: the probing LM, the query encoder's sessions, another LM session.
    const sessions = await Promise.all(
      [lm, encoder, encoder, lm].map((file) =>
        openSession(file, 'test', { inputs: ['input_ids'], outputs: [] }, { threads: 1 }).then((s) => {
          ticksAtLoad.push(ticks);
          return s;
        }),
      ),
    );
    await Promise.all(sessions.map((s) => s.release()));
  } finally {
    clearInterval(ticker);
  }
  for (let i = 1; i < ticksAtLoad.length; i++)
    assert.ok(
      ticksAtLoad[i]! > ticksAtLoad[i - 1]!,
      `the timer ran between load ${i} and load ${i + 1}: ticks at each load ${ticksAtLoad.join(', ')}`,
    );
});

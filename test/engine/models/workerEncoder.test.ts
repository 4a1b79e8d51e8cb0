// The encoder's thread (WorkerEncoder) gives the in-process encoder's vectors, fails a cancelled
// request with CancellationError, stops when idle and starts again on the next request.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ModelRegistry } from '../../../src/engine/models';
import { BULK_TEXTS, WorkerEncoder, encoderWorkerEntry } from '../../../src/engine/models/WorkerEncoder';
import { CancellationError } from '../../../src/engine/util/errors';
import { repoRoot } from '../../helpers/paths';

const registryOptions = { modelsDir: join(repoRoot, 'models'), threads: 1 };
const texts = ['def add(a, b):\n    return a + b\n', 'public int size() { return count; }', 'class Ledger:\n    total = 0\n'.repeat(60)];

void test('the thread embeds as the in-process encoder, cancels, stops when idle and starts again', async () => {
  // No bundle in the repository root: the TypeScript entry through tsx.
  const entry = encoderWorkerEntry(join(repoRoot, 'no-bundle-here'));
  assert.ok(entry, 'a worker entry for the sources');
  const local = await new ModelRegistry(registryOptions).encoder(undefined, new AbortController().signal);
  const thread = await WorkerEncoder.start(entry, { registry: registryOptions }, { idleMs: 300 });
  try {
    assert.equal(thread.fingerprint, local.fingerprint);
    assert.equal(thread.dim, local.dim);
    const signal = new AbortController().signal;
    for (const [mine, theirs] of [
      [await thread.embedItems(texts, signal), await local.embedItems!(texts, signal)],
      [await thread.embed(texts, signal), await local.embed(texts, signal)],
    ] as const) {
      assert.equal(mine.length, texts.length);
      mine.forEach((v, i) => v.forEach((x, d) => assert.ok(Math.abs(x - theirs[i]![d]!) < 1e-5)));
    }
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(thread.embedItems(texts, aborted.signal), CancellationError);
    // Idle: the thread stops; the next request starts it again.
    for (let waited = 0; thread.running && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    assert.equal(thread.running, false);
    const again = await thread.embedItems(texts.slice(0, 1), signal);
    assert.equal(again[0]!.length, thread.dim);
    assert.equal(thread.starts, 2);
  } finally {
    await thread.dispose();
    await local.dispose();
  }
});

void test('after a bulk run the thread stops after the shorter wait; after a few texts it stays for the longer one', async () => {
  const entry = encoderWorkerEntry(join(repoRoot, 'no-bundle-here'))!;
  const thread = await WorkerEncoder.start(entry, { registry: registryOptions }, { idleMs: 60_000, idleAfterBulkMs: 200 });
  try {
    const signal = new AbortController().signal;
    const stopped = async (): Promise<boolean> => {
      for (let waited = 0; thread.running && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      return !thread.running;
    };
    await thread.embedItems(texts.slice(0, 2), signal);
    assert.equal(await stopped(), false, 'a few texts: the thread stays (60 s wait)');
    const many = Array.from({ length: BULK_TEXTS }, (_, i) => `def f${i}(x):\n    return x + ${i}\n`);
    for (let i = 0; i < many.length; i += 64) await thread.embedItems(many.slice(i, i + 64), signal);
    assert.equal(await stopped(), true, 'after a bulk run the thread stops');
    await thread.embedItems(texts.slice(0, 2), signal);
    assert.equal(thread.starts, 2);
    assert.equal(await stopped(), false, 'the new thread has done little: the long wait again');
  } finally {
    await thread.dispose();
  }
});

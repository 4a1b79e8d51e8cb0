// Idle time: what a pause reads goes in pieces through the model slot, and yields to any request.
import test from 'node:test';
import assert from 'node:assert/strict';
import { LatestWinsSlot } from '../../src/engine/generate/modelSlot';
import { isCancellationError } from '../../src/engine/util/errors';
import { idleChunks, pieceChars } from '../../src/server/CompletionFeature';

const lines = (n: number, tag: string): string => Array.from({ length: n }, (_, i) => `${tag}_${i} = compute(${i}, "${tag}")\n`).join('');

test('an idle read goes in pieces from where the last prompt ends, each a prompt ending at a line end, the last the whole head', () => {
  const block = lines(40, 'block');
  const last = block + lines(10, 'local_a');
  const head = block + lines(30, 'appended') + lines(10, 'local_a');
  const pieces = idleChunks(head, last);
  assert.ok(pieces.length >= 3, `${pieces.length} pieces`);
  assert.equal(pieces.at(-1), head);
  let before = 0;
  for (const p of pieces) {
    assert.ok(head.startsWith(p), 'each piece is a prefix of the head');
    assert.ok(p.endsWith('\n'), 'and ends at a line end');
    assert.ok(p.length > before, 'and is longer than the one before');
    // A piece adds at most about 300 characters and a line to what the server holds: a keystroke waits for one piece at most.
    assert.ok(p.length - Math.max(before, block.length) <= 300 + 40, `a piece of ${p.length - before} characters`);
    before = p.length;
  }
  assert.deepEqual(idleChunks(last, last), [last], 'nothing new: one prompt, read from the cache');
});

test('idle work runs only while the slot is free, and a request that comes cuts it', async () => {
  const slot = new LatestWinsSlot();
  const signal = new AbortController().signal;
  let release!: () => void;
  const busy = slot.run(() => new Promise<void>((r) => (release = r)), signal);
  await assert.rejects(
    slot.runIdle(() => Promise.resolve('read'), signal),
    (e) => isCancellationError(e),
    'a busy slot refuses idle work',
  );
  release();
  await busy;
  let idleAborted = false;
  const idle = slot.runIdle(
    (s) =>
      new Promise<string>((resolve, reject) => {
        s.addEventListener('abort', () => {
          idleAborted = true;
          reject(new Error('cut'));
        });
        setTimeout(() => resolve('read'), 5000);
      }),
    signal,
  );
  const request = slot.run(() => Promise.resolve('suggestion'), signal);
  await assert.rejects(idle);
  assert.equal(idleAborted, true, 'the request cut the idle read');
  assert.equal(await request, 'suggestion');
  await assert.rejects(
    (async () => {
      let hold!: () => void;
      const first = slot.run(() => new Promise<void>((r) => (hold = r)), signal);
      const waiting = slot.run(() => Promise.resolve(), signal).catch(() => undefined);
      try {
        await slot.runIdle(() => Promise.resolve(), signal);
      } finally {
        hold();
        await first.catch(() => undefined);
        await waiting;
      }
    })(),
    (e) => isCancellationError(e),
    'nor does idle work start while a request waits for the slot',
  );
});

test('a piece is what the server reads in about a second: shorter for a slow server, 300 characters before it is measured', () => {
  assert.equal(pieceChars(undefined), 300);
  assert.equal(pieceChars(12), 60, 'a loaded CPU at 1.5B: the least piece');
  assert.equal(pieceChars(85), 255);
  assert.equal(pieceChars(50_000), 1200, 'a GPU: the most');
  const head = lines(100, 'x');
  assert.ok(idleChunks(head, '', pieceChars(12)).length > 2 * idleChunks(head, '', pieceChars(85)).length);
});

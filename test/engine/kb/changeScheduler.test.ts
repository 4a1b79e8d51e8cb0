// The one scheduler that keeps the sparse, dense and window indexes and the symbol table current.
import test from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChangeScheduler, REFRESH_DELAY_MS } from '../../../src/engine/kb/changeScheduler';
import { Emitter } from '../../../src/engine/util/disposable';
import type { KbChangeEvent } from '../../../src/engine/kb/types';

function setup(built = true): { kb: Emitter<KbChangeEvent>; scheduler: ChangeScheduler; runs: string[][] } {
  const kb = new Emitter<KbChangeEvent>();
  const runs: string[][] = [];
  const scheduler: ChangeScheduler = new ChangeScheduler(
    { onDidChange: kb.event },
    {
      built: () => built,
      refresh: () => scheduler.exclusive(() => Promise.resolve(runs.push(scheduler.take().sort()))),
      onError: () => undefined,
    },
  );
  return { kb, scheduler, runs };
}

void test('ChangeScheduler: changes within the delay make one refresh of every changed or removed path', async () => {
  const { kb, scheduler, runs } = setup();
  kb.fire({ changed: ['a.py'], removed: [] });
  kb.fire({ changed: ['b.py'], removed: ['c.py'] });
  assert.deepEqual(runs, [], 'not at once');
  await sleep(REFRESH_DELAY_MS * 3);
  assert.deepEqual(runs, [['a.py', 'b.py', 'c.py']]);
  assert.equal(scheduler.hasPending, false);
  scheduler.dispose();
});

void test('ChangeScheduler: nothing is scheduled before the index was built, nor after dispose; the changes stay pending', async () => {
  const unbuilt = setup(false);
  unbuilt.kb.fire({ changed: ['a.py'], removed: [] });
  await sleep(REFRESH_DELAY_MS * 3);
  assert.deepEqual(unbuilt.runs, []);
  assert.equal(unbuilt.scheduler.hasPending, true);
  const disposed = setup();
  disposed.kb.fire({ changed: ['a.py'], removed: [] });
  disposed.scheduler.dispose();
  await sleep(REFRESH_DELAY_MS * 3);
  assert.deepEqual(disposed.runs, []);
  unbuilt.scheduler.dispose();
});

void test('ChangeScheduler: runs take turns, and a failed run puts its paths back', async () => {
  const { scheduler } = setup();
  const order: string[] = [];
  let release!: () => void;
  const first = scheduler.exclusive(async () => {
    order.push('first start');
    await new Promise<void>((r) => (release = r));
    order.push('first end');
  });
  const second = scheduler.exclusive(() => Promise.resolve(order.push('second')));
  await sleep(5);
  assert.equal(scheduler.busy, true);
  release();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['first start', 'first end', 'second']);
  scheduler.putBack(['x.py']);
  assert.deepEqual(scheduler.take(), ['x.py']);
  scheduler.dispose();
});

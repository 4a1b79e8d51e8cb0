import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bestFitHeapSort, heapSortCallBound } from '../../../src/engine/rerank/bestFitHeapSort';
import { seededRandom } from '../../../src/bench/random';

interface Doc {
  id: number;
  relevance: number;
}

function shuffled(n: number, random: () => number): Doc[] {
  const values = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [values[i], values[j]] = [values[j]!, values[i]!];
  }
  return values.map((relevance, id) => ({ id, relevance }));
}

/** A deterministic fake reranker: the window's most relevant document; records every window. */
function fakeComparator(windows: Doc[][]) {
  return (window: readonly Doc[]): Promise<number> => {
    windows.push([...window]);
    let best = 0;
    window.forEach((d, i) => {
      if (d.relevance > window[best]!.relevance) best = i;
    });
    return Promise.resolve(best);
  };
}

function check(docs: Doc[], topU: number, result: { top: Doc[]; rest: Doc[]; calls: number }, windows: Doc[][]): void {
  const expected = [...docs].sort((a, b) => b.relevance - a.relevance).slice(0, topU);
  assert.deepEqual(
    result.top.map((d) => d.id),
    expected.map((d) => d.id),
  );
  const topIds = new Set(expected.map((d) => d.id));
  assert.deepEqual(
    result.rest.map((d) => d.id),
    docs.filter((d) => !topIds.has(d.id)).map((d) => d.id),
    'the rest keeps retrieval order',
  );
  assert.equal(result.calls, windows.length);
  for (const w of windows) {
    assert.ok(w.length >= 2 && w.length <= 6, `window of ${w.length}`);
    for (let i = 1; i < w.length; i++) assert.ok(w[i - 1]!.id < w[i]!.id, 'a window is shown in retrieval order');
  }
  assert.ok(
    result.calls <= heapSortCallBound(docs.length, topU),
    `${result.calls} calls > bound ${heapSortCallBound(docs.length, topU)} for n=${docs.length}`,
  );
}

void test('returns the true top-u in order within the call bound over many permutations of 31', async () => {
  const random = seededRandom(7);
  const counts: number[] = [];
  for (let p = 0; p < 500; p++) {
    const docs = shuffled(31, random);
    const windows: Doc[][] = [];
    const result = await bestFitHeapSort(docs, fakeComparator(windows), { topU: 10 }, new AbortController().signal);
    check(docs, 10, result, windows);
    counts.push(result.calls);
  }
  const bound = heapSortCallBound(31, 10);
  const max = Math.max(...counts);
  const mean = counts.reduce((s, c) => s + c, 0) / counts.length;
  // O(u log n): far below the n(n-1)/2 = 465 of an all-pairs comparison.
  assert.ok(bound <= 10 * Math.ceil(Math.log(31) / Math.log(5)) + 31 / 5 + 1, `bound ${bound}`);
  assert.ok(max <= bound);
  process.stdout.write(`# 31 candidates, u=10: calls mean ${mean.toFixed(1)}, max ${max}, bound ${bound}\n`);
});

void test('every permutation of 7 and sizes 0..45 give the true top-u', async () => {
  const perms: number[][] = [];
  const permute = (prefix: number[], left: number[]): void => {
    if (left.length === 0) perms.push(prefix);
    left.forEach((v, i) => permute([...prefix, v], [...left.slice(0, i), ...left.slice(i + 1)]));
  };
  permute([], [0, 1, 2, 3, 4, 5, 6]);
  for (const perm of perms) {
    const docs = perm.map((relevance, id) => ({ id, relevance }));
    for (const topU of [1, 3, 7, 10]) {
      const windows: Doc[][] = [];
      check(docs, Math.min(topU, 7), await bestFitHeapSort(docs, fakeComparator(windows), { topU }, new AbortController().signal), windows);
    }
  }
  const random = seededRandom(11);
  for (let n = 0; n <= 45; n++) {
    for (let r = 0; r < 20; r++) {
      const docs = shuffled(n, random);
      const windows: Doc[][] = [];
      check(
        docs,
        Math.min(10, n),
        await bestFitHeapSort(docs, fakeComparator(windows), { topU: 10 }, new AbortController().signal),
        windows,
      );
    }
  }
});

void test('a comparator that always keeps the first of the window keeps retrieval order', async () => {
  const docs = Array.from({ length: 31 }, (_, id) => ({ id, relevance: 0 }));
  const result = await bestFitHeapSort(docs, () => Promise.resolve(0), { topU: 10 }, new AbortController().signal);
  assert.deepEqual(
    result.top.map((d) => d.id),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  // Out-of-range answers are treated the same way.
  const bad = await bestFitHeapSort(docs, () => Promise.resolve(99), { topU: 10 }, new AbortController().signal);
  assert.deepEqual(
    bad.top.map((d) => d.id),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
});

void test('an aborted signal stops the sort', async () => {
  const controller = new AbortController();
  const docs = shuffled(31, seededRandom(3));
  let calls = 0;
  await assert.rejects(
    bestFitHeapSort(
      docs,
      () => {
        if (++calls === 3) controller.abort();
        return Promise.resolve(0);
      },
      {},
      controller.signal,
    ),
    (e: Error) => e.name === 'CancellationError',
  );
  assert.equal(calls, 3);
});

// Query construction (CodeRAG section 2.2): chunking, last-k lines, Jaccard-closest chunk, probing
// through a fake prober, and the fallbacks when the model is missing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { chunkLines, contentLines } from '../../../src/engine/query/chunkLines';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { jaccardChunkQuery } from '../../../src/engine/query/jaccardChunkQuery';
import { jaccard, wordSet } from '../../../src/engine/query/bagOfWords';
import { probeQuery, type ChunkProber } from '../../../src/engine/query/probeQuery';
import { buildQuery } from '../../../src/engine/query/buildQuery';
import { prefixAt } from '../../../src/engine/query/unfinishedFile';
import { CancellationError } from '../../../src/engine/util/errors';

const numbered = (n: number): string => Array.from({ length: n }, (_, i) => `line${i + 1}`).join('\n');

void test('prefixAt cuts at a 1-based line and column, clamping past the end', () => {
  const text = 'ab\ncd\r\nef';
  assert.equal(prefixAt(text, 1), '');
  assert.equal(prefixAt(text, 2), 'ab\n');
  assert.equal(prefixAt(text, 2, 2), 'ab\nc');
  assert.equal(prefixAt(text, 2, 99), 'ab\ncd');
  assert.equal(prefixAt(text, 99), 'ab\ncd\nef');
});

void test('chunkLines aligns f-line chunks at the cursor; a blank cursor line is dropped', () => {
  const { chunks, target } = chunkLines(numbered(7) + '\n', 3);
  assert.deepEqual(
    chunks.map((c) => [c.startLine, c.endLine]),
    [
      [0, 0],
      [1, 3],
      [4, 6],
    ],
  );
  assert.equal(target?.text, 'line5\nline6\nline7');
  assert.deepEqual(chunkLines('', 3).chunks, []);
  assert.equal(chunkLines('', 3).target, undefined);
  assert.deepEqual(contentLines('a\n  \n'), ['a', '  ']);
  assert.deepEqual(contentLines('a\n  '), ['a']);
  assert.throws(() => chunkLines('x', 0), RangeError);
});

void test('lastLinesQuery takes the last k content lines', () => {
  const q3 = lastLinesQuery(numbered(12) + '\n', 3);
  assert.equal(q3.strategy, 'last3');
  assert.equal(q3.text, 'line10\nline11\nline12');
  assert.deepEqual(q3.spans, [{ startLine: 9, endLine: 11 }]);
  const q10 = lastLinesQuery('only line', 10);
  assert.equal(q10.strategy, 'last10');
  assert.equal(q10.text, 'only line');
  assert.equal(lastLinesQuery('', 10).text, '');
  // The partial cursor line is part of the query.
  assert.equal(lastLinesQuery('a\nb\ncart.ad', 2).text, 'b\ncart.ad');
});

void test('jaccard and wordSet are bag-of-words over Unicode words', () => {
  assert.deepEqual([...wordSet('größe = Währung(x_1)')].sort(), ['Währung', 'größe', 'x_1']);
  assert.equal(jaccard(new Set(['a', 'b']), new Set(['b', 'c'])), 1 / 3);
  assert.equal(jaccard(new Set(), new Set()), 0);
});

void test('jaccardChunkQuery picks the chunk most similar to the target chunk, then the target chunk', () => {
  const prefix = [
    'import os',
    'x = 1',
    'y = 2',
    'cart = Cart(owner)',
    'cart.total',
    'z = 3',
    'w = 4',
    'v = 5',
    'q = 6',
    'total = cart.total',
    'print(cart)',
    'cart.',
  ].join('\n');
  const q = jaccardChunkQuery(prefix);
  assert.equal(q.strategy, 'jaccard');
  assert.deepEqual(q.spans, [
    { startLine: 3, endLine: 5 },
    { startLine: 9, endLine: 11 },
  ]);
  assert.equal(q.text, 'cart = Cart(owner)\ncart.total\nz = 3\ntotal = cart.total\nprint(cart)\ncart.');
  assert.equal(q.chunkScores?.length, 3);
  // Deterministic: the same input gives the same query.
  assert.deepEqual(jaccardChunkQuery(prefix), q);
});

void test('jaccardChunkQuery: with <= 2 chunks the whole prefix is the query; ties go to the nearest chunk', () => {
  assert.equal(jaccardChunkQuery('a\nb\nc\nd').text, 'a\nb\nc\nd');
  const q = jaccardChunkQuery(['p', 'p', 'p', 'q', 'q', 'q', 'r', 'r', 'r', 's', 's', 's'].join('\n'));
  // Every earlier chunk scores 0 against the target: the nearest one wins.
  assert.deepEqual(q.spans[0], { startLine: 6, endLine: 8 });
});

void test('probeQuery sends chunk + "\\n" + target chunk to the prober and keeps the best-scored chunk (Alg. 1)', async () => {
  const seen: string[] = [];
  const prober: ChunkProber = {
    scoreProbes(probes, m) {
      assert.equal(m, 5);
      seen.push(...probes);
      return Promise.resolve(probes.map((p) => (p.startsWith('b1') ? -0.5 : -3)));
    },
  };
  const prefix = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'c1', 'c2', 'c3', 't1', 't2', 't3'].join('\n');
  const q = await probeQuery(prefix, prober, {}, new AbortController().signal);
  assert.equal(seen.length, 3);
  assert.equal(seen[0], 'a1\na2\na3\nt1\nt2\nt3');
  assert.equal(q.text, 'b1\nb2\nb3\nt1\nt2\nt3');
  assert.deepEqual(
    q.chunkScores?.map((c) => c.score),
    [-3, -0.5, -3],
  );
  // maxProbes keeps the chunks nearest the cursor.
  seen.length = 0;
  await probeQuery(prefix, prober, { maxProbes: 1 }, new AbortController().signal);
  assert.deepEqual(seen, ['c1\nc2\nc3\nt1\nt2\nt3']);
});

void test('buildQuery falls back when the probing model is missing or fails, and propagates cancellation', async () => {
  const prefix = numbered(20);
  const missing = await buildQuery(prefix, { strategy: 'probe', fallback: 'last10' }, undefined, new AbortController().signal);
  assert.equal(missing.strategy, 'last10');
  assert.match(missing.fallbackReason ?? '', /model not available/);
  const failing: ChunkProber = { scoreProbes: () => Promise.reject(new Error('onnx exploded')) };
  const failed = await buildQuery(prefix, { strategy: 'probe' }, failing, new AbortController().signal);
  assert.equal(failed.strategy, 'jaccard');
  assert.match(failed.fallbackReason ?? '', /onnx exploded/);
  const controller = new AbortController();
  controller.abort();
  const slow: ChunkProber = { scoreProbes: (p) => Promise.resolve(p.map(() => 0)) };
  await assert.rejects(buildQuery(prefix, { strategy: 'probe' }, slow, controller.signal), CancellationError);
  const last3 = await buildQuery(prefix, { strategy: 'last3' }, undefined, new AbortController().signal);
  assert.equal(last3.text, 'line18\nline19\nline20');
  assert.ok((last3.elapsedMs ?? -1) >= 0);
});

void test('bad input: empty prefix, cursor at line 1, a 20,000-line prefix', async () => {
  for (const strategy of ['last3', 'last10', 'jaccard'] as const) {
    const q = await buildQuery('', { strategy }, undefined, new AbortController().signal);
    assert.equal(q.text, '');
    assert.deepEqual(q.spans, []);
  }
  const big = Array.from({ length: 20000 }, (_, i) => `value_${i} = compute(value_${i - 1}, ${i})`).join('\n');
  const start = performance.now();
  const q = await buildQuery(big, { strategy: 'jaccard' }, undefined, new AbortController().signal);
  assert.ok(performance.now() - start < 2000);
  assert.equal(q.spans.length, 2);
  assert.equal(q.spans[1]?.endLine, 19999);
});

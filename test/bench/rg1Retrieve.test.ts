// RG-1 baseline (RepoCoder, CodeRAG Table 1): 10-line windows, last-10-lines query, Jaccard.
import test from 'node:test';
import assert from 'node:assert/strict';
import { Rg1Retriever } from '../../src/bench/baselines/rg1Retrieve';
import { lastLinesQuery } from '../../src/engine/query/lastLinesQuery';
import { fixtureKb, unfinishedAfter } from '../engine/retrieve/retrieveFixtures';

void test('RG-1 windows: the most similar window wins; the unfinished file is excluded; ties stable', async () => {
  const texts: Record<string, string> = {
    'a.py': Array.from({ length: 25 }, (_, i) => `alpha_${i} = beta(${i})`).join('\n'),
    'b.py': 'def gamma(x):\n    return delta(x) + epsilon\n',
    'target.py': 'def gamma(x):\n    return delta(x) + epsilon\n',
  };
  const kb = { repoRoot: '/nowhere', paths: () => Object.keys(texts).sort(), onDidChange: () => ({ dispose() {} }) };
  const rg1 = new Rg1Retriever(kb, { readText: (p) => Promise.resolve(texts[p] ?? '') });
  const prefix = 'y = gamma(1)\nz = delta(y) + epsilon\n';
  const r = await rg1.retrieve(
    { file: { path: 'target.py', lang: 'python', prefix }, query: lastLinesQuery(prefix, 10), topJ: 2 },
    new AbortController().signal,
  );
  assert.equal(r.results[0]?.snippet.id, 'b.py#window:0-2');
  assert.equal(r.results[0]?.snippet.kind, 'window');
  assert.ok(r.results[0]!.snippet.text.startsWith('# b.py\n'));
  assert.ok(r.results.every((x) => x.snippet.path !== 'target.py'));
  // Windows are 10 lines with a stride of 5: a.py (25 lines) has windows starting 0, 5, 10, 15.
  const a = await rg1.retrieve(
    { file: { path: 't.py', lang: 'python', prefix: 'alpha_3 = beta(3)' }, query: lastLinesQuery('', 10), topJ: 10 },
    new AbortController().signal,
  );
  assert.deepEqual(
    a.results
      .filter((x) => x.snippet.path === 'a.py')
      .map((x) => x.snippet.range.startLine)
      .sort((p, q) => p - q),
    [0, 5, 10, 15],
  );
  rg1.dispose();
});

void test('RG-1 on a fixture repository and on an empty query', async () => {
  const kb = await fixtureKb('pyshop');
  const rg1 = new Rg1Retriever(kb);
  const file = unfinishedAfter('pyshop', 'app/main.py', 17, 'make_gateway(');
  const r = await rg1.retrieve({ file, query: lastLinesQuery(file.prefix, 10), topJ: 15 }, new AbortController().signal);
  assert.ok(r.results.length > 0 && r.results.length <= 31);
  assert.ok(r.results.every((x) => x.snippet.path !== 'app/main.py'));
  const empty = await rg1.retrieve(
    { file: { path: 'x.py', lang: 'python', prefix: '' }, query: lastLinesQuery('', 10), topJ: 15 },
    new AbortController().signal,
  );
  assert.deepEqual(empty.results, []);
  rg1.dispose();
});

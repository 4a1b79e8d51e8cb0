// Multi-path retrieval (CodeRAG section 2.2.1): the merge into <= 2j+1 deduplicated candidates,
// per-path budgets, failures recorded in the trace, cancellation.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mergeCandidates } from '../../../src/engine/retrieve/mergeCandidates';
import { multiPathRetrieve } from '../../../src/engine/retrieve/multiPathRetrieve';
import {
  snippetOfItem,
  type PathName,
  type PathResult,
  type PathTrace,
  type RetrievalRequest,
  type Retriever,
} from '../../../src/engine/retrieve/types';
import { SparseRetriever } from '../../../src/engine/retrieve/sparse/sparseRetrieve';
import { DataflowRetriever } from '../../../src/engine/retrieve/dataflow/dataflowRetrieve';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { CancellationError } from '../../../src/engine/util/errors';
import { fakeItem, fixtureKb, parsers, unfinishedAfter } from './retrieveFixtures';

const snip = (path: string, name: string) => snippetOfItem(fakeItem(path, name, `def ${name}(): pass`));

function trace(path: PathName, names: Array<[string, string, number]>, status: PathTrace['status'] = 'ok'): PathTrace {
  return { path, status, elapsedMs: 1, budgetMs: 10, results: names.map(([p, n, score]) => ({ snippet: snip(p, n), score })) };
}

const request: RetrievalRequest = {
  file: { path: 'target.py', lang: 'python', prefix: 'x = 1\n' },
  query: { strategy: 'last3', text: 'x = 1', spans: [] },
  topJ: 2,
};

function fake(name: PathName, run: (signal?: AbortSignal) => Promise<PathResult>): Retriever {
  return { name, retrieve: (_r, signal) => run(signal) };
}

void test("mergeCandidates: round-robin from dataflow first (ten per round), deduplicated with every path's score, capped, target file dropped", () => {
  const ks = Array.from({ length: 11 }, (_, i): [string, string, number] => ['d.py', `k${i + 1}`, 0.5 - i / 100]);
  const merged = mergeCandidates(
    [
      trace('sparse', [
        ['a.py', 'f', 0.9],
        ['b.py', 'g', 0.8],
        ['target.py', 'own', 0.7],
        ['c.py', 'h', 0.6],
      ]),
      trace('dataflow', [['b.py', 'g', 1], ...ks]),
      trace('dense', [['e.py', 'z', 0.99]], 'error'),
    ],
    14,
    'target.py',
  );
  // Ten from dataflow, one from sparse, the rest of dataflow, then sparse again.
  assert.deepEqual(
    merged.map((c) => c.snippet.name),
    ['g', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8', 'k9', 'f', 'k10', 'k11', 'h'],
  );
  const g = merged[0]!;
  assert.deepEqual(g.paths, ['dataflow', 'sparse']);
  assert.deepEqual(g.scores, { dataflow: 1, sparse: 0.8 });
  assert.deepEqual(g.ranks, { dataflow: 0, sparse: 1 });
  assert.ok(merged.every((c) => c.snippet.path !== 'target.py'));
  assert.equal(mergeCandidates([], 5).length, 0);
});

void test('mergeCandidates: dataflow results marked lead come before the turn-taking', () => {
  const df = trace('dataflow', [
    ['d.py', 'k', 1],
    ['e.py', 'm', 1],
    ['f.py', 'n', 0.1],
  ]);
  df.results[0]!.lead = true;
  df.results[1]!.lead = true;
  const merged = mergeCandidates(
    [
      trace('sparse', [
        ['a.py', 'f', 0.9],
        ['b.py', 'g', 0.8],
      ]),
      df,
    ],
    10,
  );
  assert.deepEqual(
    merged.map((c) => c.snippet.name),
    ['k', 'm', 'n', 'f', 'g'],
  );
});

void test("mergeCandidates: a path a host adds takes its turn after CodeRAG's paths and is named among the paths that found a candidate", () => {
  const merged = mergeCandidates(
    [
      trace('window-baseline', [
        ['a.py', 'f', 0.9],
        ['w.py', 'w', 0.8],
      ]),
      trace('sparse', [
        ['a.py', 'f', 0.5],
        ['s.py', 's', 0.4],
      ]),
    ],
    10,
  );
  assert.deepEqual(
    merged.map((c) => c.snippet.name),
    ['f', 'w', 's'],
    "sparse first, then the host's path",
  );
  assert.deepEqual(merged[0]!.paths, ['sparse', 'window-baseline']);
  assert.deepEqual(merged[1]!.paths, ['window-baseline']);
});

void test('multiPathRetrieve: a path that throws or exceeds its budget is recorded; the others still return', async () => {
  const ok = fake('sparse', () => Promise.resolve({ results: [{ snippet: snip('a.py', 'f'), score: 1 }] }));
  const throws = fake('dataflow', () => Promise.reject(new Error('graph exploded')));
  let sawAbort = false;
  const slow = fake(
    'dense',
    (signal) =>
      new Promise((resolve) => {
        const timer = setTimeout(() => resolve({ results: [{ snippet: snip('z.py', 'late'), score: 1 }] }), 500);
        signal?.addEventListener('abort', () => {
          sawAbort = true;
          clearTimeout(timer);
        });
      }),
  );
  const t = await multiPathRetrieve(
    [ok, throws, slow],
    request,
    { budgetsMs: { sparse: 1000, dataflow: 1000, dense: 30 } },
    new AbortController().signal,
  );
  const byPath = Object.fromEntries(t.paths.map((p) => [p.path, p]));
  assert.equal(byPath.sparse?.status, 'ok');
  assert.equal(byPath.dataflow?.status, 'error');
  assert.match(byPath.dataflow?.message ?? '', /graph exploded/);
  assert.equal(byPath.dense?.status, 'timeout');
  assert.ok(sawAbort, 'the timed-out path saw its signal abort');
  assert.deepEqual(
    t.candidates.map((c) => c.snippet.name),
    ['f'],
  );
  assert.ok(t.elapsedMs < 400);
});

void test('multiPathRetrieve: synchronous work past its budget counts as a timeout', async () => {
  const busy = fake('sparse', () => {
    const end = performance.now() + 30;
    while (performance.now() < end) {
      // spin: a path that never yields
    }
    return Promise.resolve({ results: [{ snippet: snip('a.py', 'f'), score: 1 }] });
  });
  const t = await multiPathRetrieve([busy], request, { budgetsMs: { sparse: 5 } }, new AbortController().signal);
  assert.equal(t.paths[0]?.status, 'timeout');
  assert.equal(t.candidates.length, 0);
});

void test("multiPathRetrieve: the request's AbortSignal cancels (already aborted, and mid-flight)", async () => {
  const never = fake('sparse', () => new Promise(() => undefined));
  const pre = new AbortController();
  pre.abort();
  await assert.rejects(multiPathRetrieve([never], request, {}, pre.signal), CancellationError);
  const mid = new AbortController();
  const pending = multiPathRetrieve([never], request, { budgetsMs: { sparse: 10_000 } }, mid.signal);
  setTimeout(() => mid.abort(), 20);
  await assert.rejects(pending, CancellationError);
});

void test('fixture: sparse + dataflow merged; the definition is in the candidates and the target file is not', async () => {
  const kb = await fixtureKb('pyshop');
  const sparse = new SparseRetriever(kb);
  const dataflow = new DataflowRetriever(kb, await parsers());
  try {
    const file = unfinishedAfter('pyshop', 'app/main.py', 21, 'len(gateway.');
    const t = await multiPathRetrieve(
      [sparse, dataflow],
      { file, query: lastLinesQuery(file.prefix, 10), topJ: 15 },
      { budgetsMs: { sparse: 5000, dataflow: 5000 } },
      new AbortController().signal,
    );
    assert.ok(t.candidates.length <= 31);
    assert.ok(t.paths.every((p) => p.status === 'ok'));
    const ids = t.candidates.map((c) => c.snippet.id);
    assert.ok(ids.slice(0, 5).includes('pyshop/payments.py#class:PaymentGateway'), ids.join('\n'));
    assert.ok(ids.every((id) => !id.startsWith('app/main.py')));
    assert.equal(new Set(ids).size, ids.length);
  } finally {
    sparse.dispose();
    dataflow.dispose();
  }
});

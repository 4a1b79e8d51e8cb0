import test from 'node:test';
import assert from 'node:assert/strict';
import type { BenchCase, Prediction } from '../../src/bench/cases';
import { formatScoreReport, scorePredictions } from '../../src/bench/score';

const mk = (id: string, repo: string, file: string, groundtruth: string, defs?: { name: string; file: string }[]): BenchCase => ({
  prompt: '',
  groundtruth,
  metadata: {
    task_id: id,
    repository: repo,
    file,
    ...(defs ? { crossfile_defs: defs.map((d) => ({ ...d, kind: 'function', line: 0 })) } : {}),
  },
});

void test('aggregates per repository and overall; missing predictions count as empty', () => {
  const cases = [
    mk('a/0', 'a', 'x.py', 'y = f(1)', [{ name: 'f', file: 'm.py' }]),
    mk('a/1', 'a', 'x.py', 'z = g()', [
      { name: 'g', file: 'n.py' },
      { name: 'h', file: 'n.py' },
    ]),
    mk('b/0', 'b', 'A.java', 'return x;'),
  ];
  const preds: Prediction[] = [
    {
      task_id: 'a/0',
      prediction: 'y = f(1)',
      contexts: [{ path: 'm.py', text: 'def f(): ...', source: 'sparse' }],
      timings_ms: { total: 10, sparse: 2 },
    },
    {
      task_id: 'a/1',
      prediction: 'z = g(',
      contexts: [{ path: 'n.py', text: 'def g(): ...', source: 'sparse' }],
      timings_ms: { total: 30, sparse: 4 },
    },
    { task_id: 'zz/9', prediction: 'unmatched', contexts: [], timings_ms: {} },
  ];
  const r = scorePredictions(cases, preds, 10);
  assert.equal(r.overall.n, 3);
  assert.equal(r.overall.missing, 1);
  // EM: 100, 0, 0 -> 33.33; ES: 100, 1 - 1/7, 0
  assert.ok(Math.abs(r.overall.em - 100 / 3) < 1e-9);
  assert.ok(Math.abs(r.overall.es - (100 + 100 * (1 - 1 / 7)) / 3) < 1e-9);
  assert.equal(r.overall.id_em, 200 / 3); // z, g equal in a/1
  assert.equal(r.overall.n_recall, 2);
  assert.equal(r.overall.recall, (1 + 0.5) / 2);
  assert.equal(r.overall.full_recall, 0.5);
  assert.equal(r.overall.coverage, (1 + 0.5) / 2);
  assert.equal(r.by_repo.a!.n, 2);
  assert.equal(r.by_repo.b!.recall, null);
  assert.equal(r.by_repo.b!.em, 0);
  assert.deepEqual(r.timings_ms.total, { median: 20, p95: 30 });
  assert.equal(r.unmatched_predictions, 1);
  const text = formatScoreReport(r);
  assert.match(text, /^repository\s+n\s+EM\s+ES\s+ID-EM\s+ID-F1\s+NIM\s+recall@10\s+full@10\s+cover@10\s+unk-member/);
  assert.match(text, /overall\s+3\s+33\.33/);
  assert.match(text, /sparse\s+3\.0\s+4\.0/);
});

void test('recall by kind of definition: each kind its own share of recalled definitions, printed as a table', () => {
  const withKinds = (id: string, defs: { name: string; file: string; kind: string }[]): BenchCase => ({
    prompt: '',
    groundtruth: 'x',
    metadata: { task_id: id, repository: 'r', file: 'x.java', crossfile_defs: defs.map((d) => ({ ...d, line: 0 })) },
  });
  const cases = [
    withKinds('r/0', [
      { name: 'Pool', file: 'Pool.java', kind: 'class' },
      { name: 'borrow', file: 'Pool.java', kind: 'classFunction' },
    ]),
    withKinds('r/1', [{ name: 'Config', file: 'Config.java', kind: 'class' }]),
  ];
  const preds: Prediction[] = [
    // A usage of Config from another file does not recall the class.
    {
      task_id: 'r/0',
      prediction: '',
      contexts: [{ path: 'Pool.java', text: 'class Pool { T borrow() }', source: 'sparse' }],
      timings_ms: {},
    },
    { task_id: 'r/1', prediction: '', contexts: [{ path: 'Main.java', text: 'new Config()', source: 'sparse' }], timings_ms: {} },
  ];
  const r = scorePredictions(cases, preds, 10);
  assert.deepEqual(r.by_kind, { class: { n: 2, recall: 0.5 }, classFunction: { n: 1, recall: 1 } });
  const text = formatScoreReport(r);
  assert.match(text, /kind\s+defs\s+recall@10/);
  assert.match(text, /class\s+2\s+0\.500/);
});

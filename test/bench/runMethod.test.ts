// The evaluation harness's methods (docs/BENCHMARKS.md): parsing method names, and a
// retrieval-only run of several methods over the pyshop fixture in memory, where the target
// file's own items must never be a context.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RUN_OPTIONS, methodNeeds, parseMethod, STANDARD_METHODS } from '../../src/bench/runMethod';
import { runEval } from '../../src/bench/runEval';
import type { BenchCase, Prediction } from '../../src/bench/cases';
import { scorePredictions } from '../../src/bench/score';
import { compareMethods, formatComparisonMarkdown } from '../../src/bench/compare';
import { comparisonChartSvg } from '../../src/bench/chart';
import { UserError } from '../../src/engine/util/errors';
import type { DenseEncoder } from '../../src/engine/retrieve/dense/denseRetrieve';
import { fixturesDir } from '../helpers/paths';
import { parsers } from './mineHelpers';

void test('parseMethod: the standard methods and unions of s, d, df with a reranker', () => {
  for (const m of STANDARD_METHODS) assert.equal(parseMethod(m).name, m);
  assert.deepEqual(parseMethod('s+df+d+lr'), {
    name: 's+df+d+lr',
    paths: ['dataflow', 'sparse', 'dense'],
    rerank: 'llm',
    iterative: false,
    usesQuery: true,
  });
  assert.deepEqual(parseMethod('repocoder'), { name: 'repocoder', paths: ['rg1'], rerank: 'none', iterative: true, usesQuery: false });
  assert.deepEqual(parseMethod('zero-shot').paths, []);
  assert.equal(parseMethod('df').usesQuery, false);
  assert.deepEqual(parseMethod('draco').paths, ['dataflow']);
  assert.throws(() => parseMethod('df+x'), UserError);
  assert.throws(() => parseMethod('lr'), UserError);
  assert.throws(() => parseMethod('s+lr+dr'), UserError);
  assert.deepEqual(methodNeeds([parseMethod('rg1'), parseMethod('df+s+d+dr')], 'probe'), {
    prober: true,
    encoder: true,
    llmReranker: false,
    distilledReranker: true,
    similar: false,
  });
  assert.equal(methodNeeds([parseMethod('rg1')], 'probe').prober, false);
});

const bow: DenseEncoder = {
  name: 'bow',
  dim: 128,
  embed: (texts) =>
    Promise.resolve(
      texts.map((t) => {
        const v = new Float32Array(128);
        for (const w of t.match(/\w\w+/g) ?? []) v[[...w].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % 128]! += 1;
        const n = Math.hypot(...v) || 1;
        return v.map((x) => x / n);
      }),
    ),
};

void test('runEval retrieval-only: every method runs on every case, contexts never come from the target file', async () => {
  const text = readFileSync(join(fixturesDir, 'pyshop', 'app/main.py'), 'utf8');
  const lines = text.split('\n');
  // Line 17 (0-based 16): `gateway = make_gateway(config.DEFAULT_GATEWAY, api_key="demo")`.
  const cases: BenchCase[] = [16, 18].map((row, i) => ({
    prompt: lines.slice(0, row).join('\n') + '\n',
    groundtruth: lines[row]!,
    right_context: lines.slice(row + 1).join('\n'),
    metadata: {
      task_id: `pyshop/${i}`,
      repository: 'pyshop',
      file: 'app/main.py',
      lang: 'python',
      crossfile_defs: [
        {
          name: i === 0 ? 'make_gateway' : 'CheckoutService',
          kind: 'function',
          file: i === 0 ? 'pyshop/payments.py' : 'pyshop/services/checkout.py',
          line: 0,
        },
      ],
    },
  }));
  const methods = ['zero-shot', 'rg1', 'draco', 's', 'd', 'df+s+d'].map(parseMethod);
  const written = new Map<string, Prediction[]>();
  const report = await runEval(
    {
      cases,
      reposDir: fixturesDir,
      methods,
      options: { ...DEFAULT_RUN_OPTIONS, generate: false, query: 'last3' },
      parsers: await parsers(),
      encoder: bow,
      write: (m, p) => {
        written.set(m, [...(written.get(m) ?? []), p]);
        return Promise.resolve();
      },
    },
    new AbortController().signal,
  );
  assert.equal(report.repos.length, 1);
  assert.deepEqual(Object.keys(report.repos[0]!.prepareMs).sort(), ['dataflow', 'dense', 'rg1', 'sparse']);
  for (const m of methods) {
    const preds = written.get(m.name)!;
    assert.equal(preds.length, 2, m.name);
    assert.deepEqual(report.methods[m.name]!.problems, {}, m.name);
    for (const p of preds) {
      assert.equal(p.prediction, '');
      assert.ok(
        p.contexts.every((c) => c.path !== 'app/main.py'),
        m.name,
      );
      assert.ok(p.contexts.length <= 10);
      assert.equal(typeof p.timings_ms.total, 'number');
      assert.equal(p.timings_ms.generate, undefined);
      // The latency ratio's measure: the retrieve stage (its paths concurrently) plus the rerank.
      if (m.name !== 'zero-shot')
        assert.equal(p.timings_ms['retrieve+rerank'], (p.timings_ms.retrieve ?? NaN) + (p.timings_ms.rerank ?? 0), m.name);
    }
    if (m.name === 'zero-shot') assert.ok(preds.every((p) => p.contexts.length === 0));
  }
  // The merged CodeRAG list finds both definitions.
  const merged = scorePredictions(cases, written.get('df+s+d')!, 10);
  assert.equal(merged.overall.recall, 1);
  const rows = compareMethods(cases, written);
  assert.equal(rows.length, methods.length);
  const md = formatComparisonMarkdown(rows, { title: 't', generated: false });
  assert.match(md, /\| df\+s\+d \| 1\.000 \|/);
  assert.match(md, /\| method \| query \| sparse \| dense \| dataflow \| rg1 \| retrieve \| rerank \| retrieve\+rerank \|/);
  assert.match(md, /Recall@10 by kind of definition/);
  assert.match(comparisonChartSvg(rows, 't'), /<title>df\+s\+d recall@k \(%\): 100\.0<\/title>/);
});

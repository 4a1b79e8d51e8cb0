// `coderag eval --method product`: the editor with its default settings. Its options are the
// server's (one mapping for both), it chooses body mode in an empty method body as the server
// does, and every prediction says whether it would be shown.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RUN_OPTIONS, methodNeeds, parseMethod, withSimilarMode } from '../../src/bench/runMethod';
import { productPipelineOptions } from '../../src/bench/product';
import { runEval } from '../../src/bench/runEval';
import { openDistilledReranker } from '../../src/bench/evalModels';
import type { BenchCase, Prediction } from '../../src/bench/cases';
import { mergeConfig, pipelineSettings, type ServerConfig } from '../../src/server/config';
import { resolveOptions, type PipelineOptions } from '../../src/engine/pipeline';
import type { DenseEncoder } from '../../src/engine/retrieve/dense/denseRetrieve';
import { fixturesDir, repoRoot } from '../helpers/paths';
import { parsers } from './mineHelpers';
import { recordingModel } from '../helpers/recordingModel';

/** The server's options for `config`. */
const serverPipelineOptions = (config: ServerConfig): PipelineOptions => resolveOptions(pipelineSettings(config));

/** The options without what only the harness sets: the time budgets (an evaluation measures quality). */
function withoutBudgets(o: PipelineOptions): unknown {
  return {
    ...o,
    retrieval: { ...o.retrieval, budgetsMs: undefined },
    rerank: { ...o.rerank, timeoutMs: undefined },
    similar: { ...o.similar, budgetsMs: undefined },
  };
}

void test('product runs with the options the server builds from the default settings, and a changed setting reaches both alike', () => {
  const harness = { pathBudgetMs: 10_000, rerankTimeoutMs: 60_000 };
  assert.deepEqual(withoutBudgets(productPipelineOptions(harness)), withoutBudgets(serverPipelineOptions(mergeConfig().config)));
  const settings = { similar: { mode: 'lexical' }, experimental: { check: { mode: 'repair' }, query: { strategy: 'last3' } } };
  assert.deepEqual(
    withoutBudgets(productPipelineOptions({ ...harness, check: 'repair', similarMode: 'lexical', query: 'last3' })),
    withoutBudgets(serverPipelineOptions(mergeConfig(settings).config)),
  );
  // A research knob (no setting) changes only its own value.
  const prior = productPipelineOptions({ ...harness, checkPrior: 0 });
  assert.equal(prior.check.prior, 0);
  assert.deepEqual({ ...prior, check: undefined }, { ...productPipelineOptions(harness), check: undefined });
});

void test('product is the folder pipeline: dataflow, sparse and dense, the distilled reranker, the similar mode of the settings', () => {
  const p = parseMethod('product');
  assert.deepEqual(p.paths, ['dataflow', 'sparse', 'dense']);
  assert.equal(p.rerank, mergeConfig().config.rerank.kind, "the editor's reranker");
  assert.equal(p.product, true);
  assert.equal(withSimilarMode(p, 'bandit').similar, 'bandit');
  assert.equal(withSimilarMode(parseMethod('df+s'), 'bandit').similar, undefined, 'only the product takes --similar');
  assert.equal(methodNeeds([withSimilarMode(p, 'lexical')], 'probe').similar, true);
});

const bow: DenseEncoder = {
  name: 'bow',
  dim: 64,
  embed: (texts) =>
    Promise.resolve(
      texts.map((t) => {
        const v = new Float32Array(64);
        for (const w of t.match(/\w\w+/g) ?? []) v[[...w].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) >>> 0, 7) % 64]! += 1;
        const n = Math.hypot(...v) || 1;
        return v.map((x) => x / n);
      }),
    ),
};

void test('product picks body mode in an empty method body and line mode elsewhere, and marks every prediction shown', async () => {
  const text = readFileSync(join(fixturesDir, 'pyshop', 'app/main.py'), 'utf8');
  const lines = text.split('\n');
  const line: BenchCase = {
    prompt: lines.slice(0, 16).join('\n') + '\n',
    groundtruth: lines[16]!,
    right_context: lines.slice(17).join('\n'),
    metadata: { task_id: 'pyshop/line', repository: 'pyshop', file: 'app/main.py', lang: 'python' },
  };
  // The cursor in a new method's empty body, as a line case (no `task`): the product decides the mode from the text.
  const body: BenchCase = {
    prompt: text.replace(/\n*$/, '\n\n\ndef total_due(cart):\n    '),
    groundtruth: 'return cart.total()',
    right_context: '\n',
    metadata: { task_id: 'pyshop/body', repository: 'pyshop', file: 'app/main.py', lang: 'python' },
  };
  const written: Prediction[] = [];
  await runEval(
    {
      cases: [line, body],
      reposDir: fixturesDir,
      methods: [parseMethod('product')],
      options: { ...DEFAULT_RUN_OPTIONS, generate: false },
      parsers: await parsers(),
      encoder: bow,
      rerankers: { distilled: await openDistilledReranker(join(repoRoot, 'models')) },
      write: (_, p) => {
        written.push(p);
        return Promise.resolve();
      },
    },
    new AbortController().signal,
  );
  const byId = new Map(written.map((p) => [p.task_id, p]));
  assert.equal(byId.get('pyshop/line')!.timings_ms.detect, undefined, 'line mode');
  assert.equal(typeof byId.get('pyshop/body')!.timings_ms.detect, 'number', 'body mode');
  assert.ok(written.every((p) => p.shown === true));
});

void test("product completes a line case on the editor's empty line: the line's indentation is primed and the suggestion carries it", async () => {
  const text = readFileSync(join(fixturesDir, 'pyshop', 'app/main.py'), 'utf8');
  const lines = text.split('\n');
  // mine.ts: prompt + groundtruth + "\n" + right_context; the ground truth `    gateway = ...` is indented under `def main()`.
  const c: BenchCase = {
    prompt: lines.slice(0, 16).join('\n') + '\n',
    groundtruth: lines[16]!,
    right_context: lines.slice(17).join('\n'),
    metadata: { task_id: 'pyshop/indent', repository: 'pyshop', file: 'app/main.py', lang: 'python' },
  };
  const { client, seen } = recordingModel('gateway = make_gateway(config.DEFAULT_GATEWAY)\n', 'stop');
  const written: Prediction[] = [];
  await runEval(
    {
      cases: [c],
      reposDir: fixturesDir,
      methods: [parseMethod('product')],
      options: { ...DEFAULT_RUN_OPTIONS, check: 'off' },
      parsers: await parsers(),
      encoder: bow,
      model: client,
      rerankers: { distilled: await openDistilledReranker(join(repoRoot, 'models')) },
      write: (_, p) => {
        written.push(p);
        return Promise.resolve();
      },
    },
    new AbortController().signal,
  );
  assert.ok(seen[0]?.prompt.endsWith('\n    '), `the prompt ends in the line's indentation: ${JSON.stringify(seen[0]?.prompt.slice(-20))}`);
  assert.equal(written[0]?.prediction, '    gateway = make_gateway(config.DEFAULT_GATEWAY)');
});

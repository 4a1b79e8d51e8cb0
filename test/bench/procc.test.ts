// ProCC's methods in the evaluation harness (docs/BENCHMARKS.md): procc-lex, procc-hyp, procc-sum,
// procc-union, procc (the bandit, learning online over the cases in file order) and a CodeRAG
// method with ProCC's window (+pc), on two pyshop cases with the shipped encoder, causal LM and
// embedded generator; then the bandit fitted offline and frozen on the held-out case.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_RUN_OPTIONS, methodNeeds, parseMethod } from '../../src/bench/runMethod';
import { runEval } from '../../src/bench/runEval';
import type { BenchCase, Prediction } from '../../src/bench/cases';
import { scorePredictions, topWindowRelevance } from '../../src/bench/score';
import { armMethodsOf, contextsOf, fitBandit, frozenChoices, replayFrozenBandit } from '../../src/bench/banditReplay';
import { compareMethods, formatComparisonMarkdown } from '../../src/bench/compare';
import { ModelRegistry } from '../../src/engine/models';
import { EmbeddedClient } from '../../src/engine/generate/EmbeddedClient';
import { embeddedLMOf } from '../../src/engine/index/pipelineAdapters';
import { SIMILAR_ARMS } from '../../src/engine/similar/types';
import { fixturesDir, repoRoot } from '../helpers/paths';
import { parsers } from './mineHelpers';

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });
test.after(() => registry.dispose());

void test("parseMethod: ProCC's methods and a CodeRAG method with ProCC's window", () => {
  assert.equal(parseMethod('procc-lex').similar, 'lexical');
  assert.equal(parseMethod('procc-hyp').similar, 'hypothetical');
  assert.equal(parseMethod('procc-sum').similar, 'summary');
  assert.equal(parseMethod('procc-union').similar, 'union');
  assert.equal(parseMethod('procc').similar, 'bandit');
  assert.deepEqual(parseMethod('procc').paths, []);
  const pc = parseMethod('df+s+d+dr+pc');
  assert.deepEqual([pc.name, pc.paths, pc.rerank, pc.similar], ['df+s+d+dr+pc', ['dataflow', 'sparse', 'dense'], 'distilled', 'bandit']);
  // One perspective's window beside CodeRAG's knowledge: each arm's reward for the offline fit.
  assert.deepEqual(
    ['lex', 'hyp', 'sum'].map((p) => parseMethod(`df+s+d+dr+pc-${p}`).similar),
    ['lexical', 'hypothetical', 'summary'],
  );
  assert.deepEqual(parseMethod('df+s+pc-sum').paths, ['dataflow', 'sparse']);
  assert.deepEqual(methodNeeds([parseMethod('procc-hyp')], 'probe'), {
    prober: false,
    encoder: true,
    llmReranker: false,
    distilledReranker: false,
    similar: true,
  });
});

void test('topWindowRelevance: the best identifier F1 of one line of the chosen window against the ground truth', () => {
  const p: Prediction = {
    task_id: 't',
    prediction: '',
    timings_ms: {},
    contexts: [
      { path: 'a.py', text: 'x = 1\ngateway = make_gateway(kind)\n', source: 'similar:lexical' },
      { path: 'b.py', text: 'gateway = make_gateway(kind, api_key)', source: 'sparse' },
    ],
  };
  assert.equal(topWindowRelevance(p, 'gateway = make_gateway(kind)', 'python'), 100);
  assert.equal(topWindowRelevance({ ...p, contexts: p.contexts.slice(1) }, 'gateway = make_gateway(kind)', 'python').toFixed(1), '85.7');
  assert.equal(topWindowRelevance(undefined, 'x', 'python'), 0);
});

void test('runEval: every ProCC method runs on every case; the online bandit is rewarded after each case; the frozen replay chooses per case', async () => {
  const text = readFileSync(join(fixturesDir, 'pyshop', 'app/main.py'), 'utf8');
  const lines = text.split('\n');
  const cases: BenchCase[] = [16, 18].map((row, i) => ({
    prompt: lines.slice(0, row).join('\n') + '\n',
    groundtruth: lines[row]!,
    right_context: lines.slice(row + 1).join('\n'),
    metadata: { task_id: `pyshop/${i}`, repository: 'pyshop', file: 'app/main.py', lang: 'python', crossfile_defs: [] },
  }));
  const lm = await registry.causalLM(undefined, new AbortController().signal);
  const encoder = await registry.encoder(undefined, new AbortController().signal);
  const methods = ['zero-shot', 'procc-lex', 'procc-hyp', 'procc-sum', 'procc-union', 'procc', 'df+s+pc'].map(parseMethod);
  const written = new Map<string, Prediction[]>();
  const report = await runEval(
    {
      cases,
      reposDir: fixturesDir,
      methods,
      options: { ...DEFAULT_RUN_OPTIONS, query: 'last3', maxNewTokens: 16 },
      parsers: await parsers(),
      encoder,
      model: new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) }),
      nextLine: (prompt, maxNewTokens, signal) => lm.generate(prompt, { maxNewTokens }, signal),
      similar: { windowLines: 10 },
      write: (m, p) => {
        written.set(m, [...(written.get(m) ?? []), p]);
        return Promise.resolve();
      },
    },
    new AbortController().signal,
  );
  const repo = report.repos[0]!;
  assert.ok(repo.windows && repo.windows.count > 5 && repo.windows.bytes > 0, JSON.stringify(repo.windows));
  for (const m of methods) {
    const preds = written.get(m.name)!;
    assert.equal(preds.length, 2, m.name);
    for (const p of preds)
      assert.ok(
        p.contexts.every((c) => c.path !== 'app/main.py'),
        m.name,
      );
  }
  for (const p of written.get('procc-lex')!) {
    assert.equal(p.similar?.arm, 'lexical');
    assert.equal(p.contexts.filter((c) => c.source === 'similar:lexical').length, 1);
    assert.equal(typeof p.timings_ms['sim-lexical'], 'number');
  }
  // The online bandit: each case chosen before its reward, the reward ES/100 of its completion.
  const online = written.get('procc')!;
  for (const p of online) {
    assert.equal(p.similar?.chosen_by, 'bandit');
    assert.equal(p.similar?.features.length, 7);
    assert.ok(p.similar?.reward !== undefined && p.similar.reward >= 0 && p.similar.reward <= 1);
  }
  const state = report.bandits!['procc']!;
  assert.deepEqual(state.arms, [...SIMILAR_ARMS]);
  assert.equal(
    Object.values(state.pulls).reduce((a, b) => a + b, 0),
    2,
  );
  // df+s+pc learns with its own bandit.
  assert.equal(
    Object.values(report.bandits!['df+s+pc']!.pulls).reduce((a, b) => a + b, 0),
    2,
  );

  const features = new Map(online.map((p) => [p.task_id, p.similar!.features]));
  const replay = replayFrozenBandit(cases, written, features, 1);
  assert.deepEqual(replay.fitCases, ['pyshop/0']);
  assert.equal(replay.predictions.length, 1);
  const arm = replay.predictions[0]!.similar!.arm;
  const method = { lexical: 'procc-lex', hypothetical: 'procc-hyp', summary: 'procc-sum', none: 'zero-shot' }[arm as 'lexical']!;
  assert.equal(replay.predictions[0]!.prediction, written.get(method)![1]!.prediction);

  const md = formatComparisonMarkdown(compareMethods(cases, written), { title: 't', generated: true });
  assert.match(md, /\| REL \|/);
  assert.match(md, /sim-hypothetical/);
  assert.equal(scorePredictions(cases, written.get('procc-union')!).overall.n, 2);
});

void test("fitBandit: fitted offline with every arm's reward, the frozen bandit picks the arm whose completions score best, and returns that arm's prediction", () => {
  const cases: BenchCase[] = [0, 1, 2].map((i) => ({
    prompt: 'x = 1\n',
    groundtruth: 'total = price * count',
    right_context: '',
    metadata: { task_id: `r${i % 2}/${i}`, repository: `r${i % 2}`, file: 'a.py', lang: 'python', crossfile_defs: [] },
  }));
  const { arms, bandit: banditMethod } = armMethodsOf('df+s');
  assert.deepEqual([arms.none, arms.summary, banditMethod], ['df+s', 'df+s+pc-sum', 'df+s+pc']);
  const pred = (id: string, text: string): Prediction => ({ task_id: id, prediction: text, contexts: [], timings_ms: {} });
  const byMethod = new Map<string, Prediction[]>();
  // Summary's window gives the right line; the others a wrong one.
  for (const [arm, m] of Object.entries(arms))
    byMethod.set(
      m,
      cases.map((c) => pred(c.metadata.task_id, arm === 'summary' ? 'total = price * count' : 'print(x)')),
    );
  const x = [1, 0.5, 0.2, 0.4, 0.1, 0.6, 0.3];
  byMethod.set(
    banditMethod,
    cases.map((c) => ({ ...pred(c.metadata.task_id, ''), similar: { arm: 'none', chosen_by: 'bandit', features: x } })),
  );
  const features = contextsOf(byMethod.get(banditMethod));
  const { bandit, fitted } = fitBandit(cases.slice(0, 2), byMethod, features, arms);
  assert.deepEqual(fitted, ['r0/0', 'r1/1']);
  // Two full-information updates per arm: A = I + 2xx^T for every arm, b = 2 * ES/100 * x.
  const state = bandit.toJSON();
  assert.deepEqual(state.pulls, { lexical: 2, hypothetical: 2, summary: 2, none: 2 });
  assert.equal(state.b.summary![0], 2);
  assert.ok(state.b.none![0]! < 0.5, String(state.b.none![0]));
  const out = frozenChoices(bandit, cases.slice(2), byMethod, features, arms);
  assert.deepEqual(out.chosen, { summary: 1 });
  assert.equal(out.predictions[0]!.prediction, 'total = price * count');
  assert.equal(out.predictions[0]!.similar?.arm, 'summary');
  // A run without one arm's method cannot be fitted as if it had it.
  const missing = new Map(byMethod);
  missing.delete(arms.lexical);
  assert.deepEqual(fitBandit(cases, missing, features, arms).bandit.arms, ['hypothetical', 'summary', 'none']);
});

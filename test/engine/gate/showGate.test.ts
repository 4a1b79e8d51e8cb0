// The show gate in the pipeline, with the real embedded model over the pyshop fixture: the gate
// scores every suggestion from the model's own log-probabilities; below the threshold the editor
// gets no ghost text while the result keeps the text (shown: false); the setting's levels change
// what is shown; the gate's model moves with accepted and rejected suggestions.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, grammarsDir, repoRoot } from '../../helpers/paths';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../../../src/engine/kb/parsers';
import { ModelRegistry, type CausalLM } from '../../../src/engine/models';
import { EmbeddedClient } from '../../../src/engine/generate/EmbeddedClient';
import { createPipeline, formatTraceMarkdown, resolveOptions, type CompletionRequest } from '../../../src/engine/pipeline';
import { createRepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { causalLMProber, embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';
import { GateModel } from '../../../src/engine/gate/model';
import { BODY_SHOW_THRESHOLDS, gateOptionsOf, SHOW_LEVELS, SHOW_THRESHOLDS } from '../../../src/engine/gate/levels';
import { PIPELINE_DEFAULTS } from '../../../src/engine/pipeline/defaults';
import type { Retriever } from '../../../src/engine/retrieve/types';
import type { ModelClient } from '../../../src/engine/generate/types';

const mainPy = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8');
// The start of a statement (`return cart`), where the model writes a line.
const cursor = mainPy.indexOf('    return cart') + 4;
const request: CompletionRequest = {
  filePath: 'app/main.py',
  lang: 'python',
  prefix: mainPy.slice(0, cursor),
  suffix: mainPy.slice(cursor),
};
const base = { retrieval: { budgetsMs: { sparse: 5000, dataflow: 5000 } }, generate: { maxNewTokens: 12, temperature: 0 } };

void describe('the show gate', () => {
  let kb: KnowledgeBase;
  let lm: CausalLM;
  let retrievers: Retriever[];
  let dispose: () => void;
  let model: EmbeddedClient;
  const signal = new AbortController().signal;

  before(async () => {
    const parsers = await loadParsers(grammarsDir);
    kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'pyshop'), parsers });
    await kb.index(undefined, new AbortController().signal);
    ({ retrievers, dispose } = createRepositoryIndex(kb, parsers));
    lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
    model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
  });
  after(() => {
    dispose?.();
    kb?.dispose();
  });

  const run = (gate: { mode: 'on' | 'off'; threshold: number; bodyThreshold?: number }, showGateModel?: GateModel) =>
    createPipeline(resolveOptions({ ...base, gate }), {
      env: {
        repo: { retrievers: retrievers },
        prober: causalLMProber(lm),
        model: model,
        ...(showGateModel ? { showGateModel: showGateModel } : {}),
      },
    }).complete(request, signal);

  void test('the editor, the CLI and eval start from the gate on at the balanced level', () => {
    assert.deepEqual(PIPELINE_DEFAULTS.gate, {
      mode: 'on',
      threshold: SHOW_THRESHOLDS.balanced,
      bodyThreshold: BODY_SHOW_THRESHOLDS.balanced,
    });
    assert.deepEqual(resolveOptions().gate, PIPELINE_DEFAULTS.gate);
  });

  void test('each level asks at least as much of a method body as of a line, and a stricter level more of both', () => {
    const on = SHOW_LEVELS.filter((l) => l !== 'all');
    for (const level of on) assert.ok(BODY_SHOW_THRESHOLDS[level] >= SHOW_THRESHOLDS[level], level);
    for (let i = 1; i < on.length; i++) {
      assert.ok(
        SHOW_THRESHOLDS[on[i - 1]!] > SHOW_THRESHOLDS[on[i]!] && BODY_SHOW_THRESHOLDS[on[i - 1]!] > BODY_SHOW_THRESHOLDS[on[i]!],
        on[i],
      );
    }
  });

  void test('a suggestion scored below the threshold gives no ghost text; the result keeps it, marked not shown', async () => {
    const shown = await run({ mode: 'on', threshold: 0 });
    assert.equal(shown.items.length, 1, 'at threshold 0 the suggestion is shown');
    const g = shown.trace.gate!;
    assert.ok(g, 'the trace has the gate');
    assert.equal(g.shown, true);
    assert.equal(g.logprobs, true, "the embedded model's log-probabilities are among the features");
    assert.ok(g.features.meanLogprob < 0 && g.features.minLogprob <= g.features.meanLogprob, JSON.stringify(g.features));
    assert.ok(g.score > 0 && g.score < 1);
    assert.equal(shown.outcomes.gate?.shown, true);

    const silent = await run({ mode: 'on', threshold: Math.min(1, g.score + 0.01) });
    assert.deepEqual(silent.items, [], 'no ghost text');
    assert.equal(silent.outcomes.gate?.shown, false);
    assert.equal(silent.outcomes.gate?.text, shown.items[0]!.text, 'the result keeps the text');
    assert.equal(silent.trace.gate?.shown, false);
    assert.equal(silent.trace.completion, shown.items[0]!.text);
    assert.match(
      formatTraceMarkdown(silent.trace),
      /Show gate: \*\*not shown\*\* \(score < [\d.]+: CodeRAG stayed silent\); score [\d.]+; meanLogprob -/,
      'Explain says why',
    );

    const off = await run({ mode: 'off', threshold: 1 });
    assert.equal(off.items[0]?.text, shown.items[0]!.text, 'with the gate off every suggestion is shown');
  });

  void test("the setting's levels change what is shown: a score between two levels' thresholds is shown at one, not the other", async () => {
    const { trace } = await run(gateOptionsOf('all'));
    const score = trace.gate!.score;
    // Weights that put this suggestion's score between `more` and `fewer-but-better`: only the bias moves it.
    const mid = (SHOW_THRESHOLDS.more + SHOW_THRESHOLDS['fewer-but-better']) / 2;
    const shift = Math.log(mid / (1 - mid)) - Math.log(score / (1 - score));
    const state = new GateModel().toJSON();
    const weights = { withLogprobs: [...state.withLogprobs], withoutLogprobs: [...state.withoutLogprobs] };
    weights.withLogprobs[0]! += shift;
    const moved = new GateModel(weights);
    const more = await run(gateOptionsOf('more'), moved);
    const fewer = await run(gateOptionsOf('fewer-but-better'), moved);
    assert.ok(Math.abs(more.trace.gate!.score - mid) < 1e-6);
    assert.equal(more.items.length, 1, '`more` shows it');
    assert.equal(fewer.items.length, 0, '`fewer-but-better` stays silent');
    assert.equal((await run(gateOptionsOf('all'), moved)).items.length, 1, '`all` shows it');
  });

  void test('rejections move the gate to stay silent for a like suggestion, acceptances to show it again', async () => {
    const showGateModel = new GateModel();
    const first = await run(gateOptionsOf('all'), showGateModel);
    const { features, logprobs, score } = first.trace.gate!;
    const threshold = score - 0.05;
    assert.equal((await run({ mode: 'on', threshold }, showGateModel)).items.length, 1, 'shown before any outcome');
    let n = 0;
    while (showGateModel.score(features, logprobs) >= threshold && n < 50) {
      showGateModel.update(features, logprobs, 0);
      n++;
    }
    assert.ok(n > 1 && n < 50, `a few rejections silence it, not one (${n})`);
    assert.equal((await run({ mode: 'on', threshold }, showGateModel)).items.length, 0, 'silent after the rejections');
    while (showGateModel.score(features, logprobs) < threshold && n < 200) {
      showGateModel.update(features, logprobs, 1);
      n++;
    }
    assert.equal((await run({ mode: 'on', threshold }, showGateModel)).items.length, 1, 'shown again after acceptances');
  });

  void test('a client that gives no log-probabilities is not silenced: the gate abstains and the trace says so', async () => {
    const plain: ModelClient = {
      backend: 'ollama',
      model: 'no-logprobs',
      family: 'plain',
      endpoint: 'test',
      generate: async (r, s) => {
        const { logprobs: _dropped, ...rest } = await model.generate(r, s);
        return rest;
      },
    };
    const result = await createPipeline(resolveOptions({ ...base, gate: { mode: 'on', threshold: 1 } }), {
      env: { repo: { retrievers: retrievers }, prober: causalLMProber(lm), model: plain },
    }).complete(request, signal);
    assert.equal(result.items.length, 1, 'shown at threshold 1');
    assert.equal(result.trace.gate?.logprobs, false);
    assert.equal(result.trace.gate?.threshold, 0, 'the gate did not decide');
    assert.equal(result.trace.gate?.features.meanLogprob, 0);
  });
});

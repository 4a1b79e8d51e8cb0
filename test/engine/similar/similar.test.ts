// ProCC's similar code (ProCC, Tan et al. 2024) on the fixture repositories with the shipped
// encoder and causal LM: the code-window index builds, persists, reloads and follows a changed
// file; each perspective finds the window it should; the pipeline's similar-code stage puts the
// chosen top-1 window into the prompt and fills trace.similar; a perspective that runs late or
// fails is reported, never thrown.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { ModelRegistry } from '../../../src/engine/models';
import type { Encoder } from '../../../src/engine/models/types';
import { CodeWindowIndex } from '../../../src/engine/similar/windowIndex';
import { SimilarRetriever, type NextLineModel } from '../../../src/engine/similar/perspectives';
import { similarStage, type SimilarStageOptions } from '../../../src/engine/similar/chooseWindows';
import { createSimilarBandit, SIMILAR_FEATURE_DIM } from '../../../src/engine/similar/bandit';
import { createPipeline, formatTraceMarkdown, resolveOptions } from '../../../src/engine/pipeline';
import { createRepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';
import { EmbeddedClient } from '../../../src/engine/generate/EmbeddedClient';
import { sleep } from '../../../src/engine/util/abort';
import { CancellationError } from '../../../src/engine/util/errors';
import { copyFixture, repoRoot, tempDir } from '../../helpers/paths';
import { fixtureKb, parsers } from '../retrieve/retrieveFixtures';

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });
test.after(() => registry.dispose());
let encoderPromise: Promise<Encoder> | undefined;
const encoder = (): Promise<Encoder> => (encoderPromise ??= registry.encoder(undefined, new AbortController().signal));
const never = new AbortController().signal;

const STAGE: SimilarStageOptions = {
  mode: 'union',
  budgetsMs: { lexical: 5000, hypothetical: 20000, summary: 5000 },
  fallback: 'lexical',
  topK: 5,
};

/** A window's text as a request prefix in another file (the cursor after it, on a new line). */
function requestAfter(text: string, path = 'app/other.py'): { filePath: string; lang: 'python'; prefix: string; suffix: string } {
  return { filePath: path, lang: 'python', prefix: `${text}\n`, suffix: '' };
}

void test('the window index builds fixed windows with vectors, persists them, reloads them and re-embeds only a changed file', async () => {
  const repo = copyFixture('pyshop');
  const cache = tempDir();
  try {
    const kb = await KnowledgeBase.open({ repoRoot: repo.path, parsers: await parsers() });
    await kb.index(undefined, new AbortController().signal);
    const enc = await encoder();
    const index = new CodeWindowIndex(kb, enc, { windowLines: 10, indexFolder: cache.path });
    assert.equal(index.ready, false);
    const first = await index.prepare(never);
    assert.equal(first.store, 'missing');
    assert.ok(index.ready);
    assert.ok(first.windows > 5 && first.embedded > 0 && first.bytes > 0, JSON.stringify(first));
    const payments = index.windows().filter((w) => w.path === 'pyshop/payments.py');
    assert.deepEqual(
      payments.slice(0, 2).map((w) => [w.startLine, w.endLine]),
      [
        [0, 9],
        [10, 19],
      ],
    );
    // A window's summary holds the signatures of what it defines.
    assert.ok(
      index.windows().some((w) => w.path === 'pyshop/payments.py' && w.summary.includes('def make_gateway')),
      'make_gateway in a summary',
    );
    index.dispose();

    // A second index over the same folder loads the saved vectors and embeds nothing.
    const again = new CodeWindowIndex(kb, enc, { windowLines: 10, indexFolder: cache.path });
    const second = await again.prepare(never);
    assert.equal(second.store, 'loaded');
    assert.equal(second.embedded, 0);
    assert.equal(second.windows, first.windows);

    // A changed file: only its new window texts are embedded, and the search sees them.
    const file = join(repo.path, 'pyshop/util.py');
    writeFileSync(
      file,
      readFileSync(file, 'utf8') + '\n\ndef brand_new_helper(quantity_of_widgets):\n    return quantity_of_widgets * 42\n',
    );
    await kb.updateFile('pyshop/util.py');
    const refreshing = again.prepare(never);
    // Requests meanwhile search the windows as they were.
    assert.equal(again.ready, true);
    const third = await refreshing;
    assert.ok(third.embedded >= 1 && third.embedded <= 3, JSON.stringify(third));
    assert.ok(again.windows().some((w) => w.text.includes('brand_new_helper')));
    again.dispose();
    kb.dispose();
  } finally {
    repo.cleanup();
    cache.cleanup();
  }
});

void test('windows are embedded as queries are (the full length), never at the shorter item length; a host routes them through embedWindows', async () => {
  const kb = await fixtureKb('pyshop');
  const enc = await encoder();
  const calls = { embed: 0, embedItems: 0, embedWindows: 0 };
  const counting = {
    name: enc.name,
    dim: enc.dim,
    embed: (texts: string[], signal: AbortSignal) => ((calls.embed += texts.length), enc.embed(texts, signal)),
    embedItems: (texts: string[], signal: AbortSignal) => ((calls.embedItems += texts.length), enc.embedItems!(texts, signal)),
  };
  const plain = new CodeWindowIndex(kb, counting, { windowLines: 10 });
  const built = await plain.prepare(never);
  assert.deepEqual(calls, { embed: built.embedded, embedItems: 0, embedWindows: 0 });
  plain.dispose();
  const routed = new CodeWindowIndex(kb, counting, {
    windowLines: 10,
    embedWindows: (texts, signal) => ((calls.embedWindows += texts.length), enc.embed(texts, signal)),
  });
  const again = await routed.prepare(never);
  assert.deepEqual(calls, { embed: built.embedded, embedItems: 0, embedWindows: again.embedded });
  // The encoder really embeds items shorter than queries, so which method windows go through matters.
  assert.ok(enc.maxLength > (enc as { itemMaxLength?: number }).itemMaxLength!, `${enc.maxLength}`);
  routed.dispose();
});

void test('each perspective returns the expected window first (lexical, hypothetical line, summary), the unfinished file excluded', async () => {
  const kb = await fixtureKb('pyshop');
  const index = new CodeWindowIndex(kb, await encoder(), { windowLines: 10 });
  await index.prepare(never);
  const target = index.windows().find((w) => w.path === 'pyshop/payments.py' && w.text.includes('def make_gateway'))!;
  assert.ok(target, 'a window defines make_gateway');
  // The hypothetical line: a fixed line stands in for the model here (its matching is what is checked).
  const line: NextLineModel = () => Promise.resolve('    gateway = make_gateway(kind, api_key=key)\n');
  const retriever = new SimilarRetriever(index, kb, () => line, { hypotheticalMatch: 'embed' });

  const lexical = await retriever.search('lexical', requestAfter(target.text), 3, never);
  assert.equal(lexical.hits[0]?.window.id, target.id);
  // The query window is the last 10 lines up to the cursor (9 of the window's and the cursor's line).
  assert.ok(lexical.hits[0]!.score > 0.9, String(lexical.hits[0]!.score));
  // Its own file is the unfinished one: never retrieved.
  const own = await retriever.search('lexical', requestAfter(target.text, 'pyshop/payments.py'), 3, never);
  assert.ok(own.hits.every((h) => h.window.path !== 'pyshop/payments.py'));

  const hyp = await retriever.search('hypothetical', requestAfter('def checkout(kind, key):'), 5, never);
  assert.equal(hyp.query, '    gateway = make_gateway(kind, api_key=key)');
  assert.ok(hyp.hits.length > 0);
  const hypLexical = await new SimilarRetriever(index, kb, () => line, { hypotheticalMatch: 'lexical' }).search(
    'hypothetical',
    requestAfter('def checkout(kind, key):'),
    5,
    never,
  );
  assert.ok(
    hypLexical.hits.some((h) => h.window.text.includes('make_gateway')),
    hypLexical.hits.map((h) => h.window.id).join('\n'),
  );

  // The summary of a query window that calls make_gateway matches the window that defines it.
  const summary = await retriever.search(
    'summary',
    requestAfter('def pay(order):\n    gw = make_gateway("stripe")\n    return gw'),
    5,
    never,
  );
  assert.ok(summary.query.includes('def make_gateway'), summary.query);
  assert.ok(
    summary.hits.slice(0, 3).some((h) => h.window.id === target.id),
    summary.hits.map((h) => h.window.id).join('\n'),
  );

  // The shipped causal LM writes one line (whatever it is) within the request.
  const lm = await registry.causalLM(undefined, new AbortController().signal);
  const real = new SimilarRetriever(index, kb, () => (prompt, maxNewTokens, signal) => lm.generate(prompt, { maxNewTokens }, signal));
  const written = await real.search('hypothetical', requestAfter(target.text), 3, never);
  assert.ok(!written.query.includes('\n'));
  index.dispose();
});

void test('the stage reports a perspective that runs late or fails, chooses with the bandit, and is cancelled only by the request', async () => {
  const kb = await fixtureKb('pyshop');
  const index = new CodeWindowIndex(kb, await encoder(), { windowLines: 10 });
  await index.prepare(never);
  const slow: NextLineModel = async (_p, _n, signal) => {
    await sleep(5000, signal);
    return 'x = 1';
  };
  const retriever = new SimilarRetriever(index, kb, () => slow);
  const target = index.windows().find((w) => w.text.includes('def make_gateway'))!;
  const request = requestAfter(target.text);

  const late = await similarStage(
    request,
    retriever,
    undefined,
    { ...STAGE, budgetsMs: { lexical: 5000, hypothetical: 50, summary: 5000 } },
    never,
  );
  const hyp = late.trace.perspectives.find((p) => p.name === 'hypothetical')!;
  assert.equal(hyp.status, 'timeout');
  assert.equal(late.trace.chosenBy, 'union');
  assert.ok(late.windows.some((w) => w.id === target.id));

  const failing = new SimilarRetriever(index, kb, undefined);
  const failed = await similarStage(request, failing, undefined, STAGE, never);
  assert.equal(failed.trace.perspectives.find((p) => p.name === 'hypothetical')?.status, 'error');

  // A bandit that has learned that the summary pays off here chooses it; the trace keeps its context and scores.
  const { bandit } = createSimilarBandit();
  const probe = await similarStage(request, failing, bandit, { ...STAGE, mode: 'bandit' }, never);
  assert.equal(probe.trace.features.length, SIMILAR_FEATURE_DIM);
  for (let i = 0; i < 20; i++) {
    bandit.update('summary', probe.trace.features, 1);
    bandit.update('lexical', probe.trace.features, 0);
  }
  const chosen = await similarStage(request, failing, bandit, { ...STAGE, mode: 'bandit' }, never);
  assert.equal(chosen.trace.chosenBy, 'bandit');
  assert.equal(chosen.trace.arm, 'summary');
  assert.ok(chosen.trace.scores && chosen.trace.scores.summary! > chosen.trace.scores.lexical!);
  assert.equal(chosen.windows.length, 1);
  // Without a bandit, `bandit` mode falls back to its fixed perspective.
  const fallback = await similarStage(request, failing, undefined, { ...STAGE, mode: 'bandit' }, never);
  assert.equal(fallback.trace.chosenBy, 'fixed');
  assert.equal(fallback.trace.arm, 'lexical');
  // An index still building: skipped, with the reason.
  const building = new SimilarRetriever(new CodeWindowIndex(kb, await encoder()), kb, undefined);
  const skipped = await similarStage(request, building, undefined, STAGE, never);
  assert.ok(skipped.trace.perspectives.every((p) => p.status === 'skipped' && p.message?.includes('being built')));

  const controller = new AbortController();
  const running = similarStage(request, retriever, undefined, STAGE, controller.signal);
  setTimeout(() => controller.abort(), 30);
  await assert.rejects(running, (e) => e instanceof CancellationError);
  index.dispose();
});

void test("the pipeline puts the chosen top-1 window into the prompt under ProCC's heading and fills trace.similar", async () => {
  const kb = await fixtureKb('pyshop');
  const enc = await encoder();
  const lm = await registry.causalLM(undefined, new AbortController().signal);
  const paths = createRepositoryIndex(kb, await parsers(), {
    paths: ['sparse'],
    similar: { encoder: enc, windowLines: 10, nextLine: () => (prompt, n, s) => lm.generate(prompt, { maxNewTokens: n }, s) },
  });
  await paths.windows!.prepare(never);
  const target = paths.windows!.windows().find((w) => w.text.includes('def make_gateway'))!;
  const model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
  const options = resolveOptions({ similar: { mode: 'lexical' }, generate: { maxNewTokens: 8 } });
  const pipeline = createPipeline(options, { env: { repo: { retrievers: paths.retrievers, similar: paths.similar }, model: model } });
  const result = await pipeline.complete(requestAfter(target.text), never);
  const similar = result.trace.similar!;
  assert.equal(similar.arm, 'lexical');
  assert.equal(similar.chosenBy, 'fixed');
  assert.deepEqual(similar.snippets, [target.id]);
  assert.equal(similar.features.length, SIMILAR_FEATURE_DIM);
  assert.ok(result.trace.prompt!.text.includes(`Compare this snippet from ${target.path}:`), result.trace.prompt!.text.slice(0, 400));
  assert.ok(result.contexts.some((c) => c.origin?.kind === 'similar' && c.origin.arm === 'lexical' && c.snippet.id === target.id));
  assert.ok(result.trace.stages.some((s) => s.stage === 'similar' && s.status === 'ok'));
  assert.match(formatTraceMarkdown(result.trace), /## Similar code \(ProCC\)[\s\S]*\| lexical \| ok \|/);

  // Off: no stage, no trace.
  const off = await createPipeline(resolveOptions({ generate: { maxNewTokens: 4 } }), {
    env: { repo: { retrievers: paths.retrievers, similar: paths.similar }, model: model },
  }).complete(requestAfter(target.text), never);
  assert.equal(off.trace.similar, undefined);
  assert.ok(!off.trace.prompt!.text.includes('Compare this snippet'));
  paths.dispose();
});

void test('createSimilarBandit: a bad saved state gives a fresh bandit and the reason; a good one is restored', () => {
  const { bandit } = createSimilarBandit();
  bandit.update('hypothetical', [1, 0.5, 0.2, 0.4, 0.1, 0.3, 0.2], 0.7);
  const restored = createSimilarBandit(JSON.parse(JSON.stringify(bandit.toJSON())));
  assert.equal(restored.error, undefined);
  assert.deepEqual(restored.bandit.pullCounts(), bandit.pullCounts());
  const bad = createSimilarBandit({ version: 1, dim: 3 });
  assert.match(bad.error ?? '', /dimension/);
  assert.deepEqual(Object.values(bad.bandit.pullCounts()), [0, 0, 0, 0]);
});

// The baselines' body mode (src/bench/baselines/lineStagesBody.ts): the line stages with the body's
// priming and hold, and the product's body cut, so a baseline's body is cut as the product's is.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, grammarsDir } from '../helpers/paths';
import { assertHeldToBody, recordingModel } from '../helpers/recordingModel';
import { KnowledgeBase } from '../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../src/engine/kb/parsers';
import { RepoMethods } from '../../src/engine/body/RepoMethods';
import { bodyMode, createPipeline, PIPELINE_DEFAULTS, resolveOptions, type CompletionRequest } from '../../src/engine/pipeline';
import { lineStagesBodyMode } from '../../src/bench/baselines/lineStagesBody';

const rel = 'src/main/java/com/example/shop/payment/Gateways.java';
const HEADER = 'public static PaymentGateway create(String name, String apiKey) {';

function emptied(): CompletionRequest {
  const text = readFileSync(join(fixturesDir, 'javashop', rel), 'utf8');
  const start = text.indexOf(HEADER) + HEADER.length;
  const end = text.indexOf('\n    }\n', start);
  const edited = `${text.slice(0, start)}\n        \n    }\n${text.slice(end + 7)}`;
  return { filePath: rel, lang: 'java', prefix: edited.slice(0, start + 9), suffix: edited.slice(start + 9) };
}

/** Python: a method emptied, the cursor at column 0 of its body's empty line (the mode primes the indentation). */
function emptiedPython(): CompletionRequest {
  const path = 'pyshop/services/checkout.py';
  const text = readFileSync(join(fixturesDir, 'pyshop', path), 'utf8');
  const at = text.indexOf('    def ', text.indexOf('class '));
  const bodyStart = text.indexOf('\n', at) + 1;
  const next = text.indexOf('\n    def ', bodyStart);
  return { filePath: path, lang: 'python', prefix: text.slice(0, bodyStart), suffix: `\n${next < 0 ? '' : text.slice(next)}` };
}

void describe("the baselines' body mode", () => {
  let parsers: Parsers;
  let kb: KnowledgeBase;
  let repo: RepoMethods;
  const signal = new AbortController().signal;
  const line = (): ReturnType<typeof lineStagesBodyMode> => lineStagesBodyMode(parsers, PIPELINE_DEFAULTS.body.maxLines);

  before(async () => {
    parsers = await loadParsers(grammarsDir);
    kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'javashop'), parsers });
    await kb.index(undefined, signal);
    repo = new RepoMethods(kb);
  });
  after(() => {
    repo.dispose();
    kb.dispose();
  });

  void test("it runs the line stages and cuts a body as the product does: the same raw answer gives the product's text, capped alike", async () => {
    const raw =
      'Function<String, PaymentGateway> factory = REGISTRY.get(name);\n        return factory.apply(apiKey);\n    }\n\n    public void other() {';
    for (const maxChars of [4000, 30]) {
      const options = resolveOptions({ postprocess: { maxChars }, body: { knowledge: false } });
      const texts: string[] = [];
      const stages: string[][] = [];
      for (const { mode, hooks } of [
        { mode: bodyMode({ parsers }), hooks: { body: { sketch: 'none' as const } } },
        { mode: line(), hooks: {} },
      ]) {
        const { client } = recordingModel(raw, 'stop');
        const result = await createPipeline(
          options,
          { env: { repo: { retrievers: [], methods: repo }, model: client }, hooks },
          mode,
        ).complete(emptied(), signal);
        texts.push(result.items[0]?.text ?? '');
        stages.push(result.trace.stages.map((s) => s.stage));
      }
      assert.equal(texts[1], texts[0], `maxChars ${maxChars}`);
      assert.ok(!texts[0]!.includes('other()'), 'cut where the method ends');
      assert.ok(texts[0]!.length <= maxChars, `capped at ${maxChars}: ${JSON.stringify(texts[0])}`);
      assert.deepEqual(stages[1], ['query', 'retrieve', 'rerank', 'prompt', 'generate', 'postprocess'], 'the line stages');
    }
  });

  void test('a Python body primed at column 0: the inserted text begins with the indentation and stops at the next method', async () => {
    const pyKb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'pyshop'), parsers });
    try {
      await pyKb.index(undefined, signal);
      const pyRepo = new RepoMethods(pyKb);
      const raw = 'return self.total\n\n    def other(self):\n        pass';
      const texts: string[] = [];
      for (const { mode, hooks } of [
        { mode: bodyMode({ parsers }), hooks: { body: { sketch: 'none' as const } } },
        { mode: line(), hooks: {} },
      ]) {
        const { client } = recordingModel(raw, 'stop');
        const result = await createPipeline(
          resolveOptions({ body: { knowledge: false } }),
          { env: { repo: { retrievers: [], methods: pyRepo }, model: client }, hooks },
          mode,
        ).complete(emptiedPython(), signal);
        texts.push(result.items[0]?.text ?? '');
      }
      pyRepo.dispose();
      assert.equal(texts[1], texts[0]);
      assert.equal(texts[0], '        return self.total');
    } finally {
      pyKb.dispose();
    }
  });

  void test('a body the token limit stopped inside the method loses the line it cut; a finished one keeps every line', async () => {
    const text = 'Function<String, PaymentGateway> factory = REGISTRY.get(name);\n        if (factory == null) thr';
    const { client: cutShort } = recordingModel(text, 'length');
    const cut = await createPipeline(
      resolveOptions({ body: { maxNewTokens: 16 } }),
      { env: { repo: { retrievers: [], methods: repo }, model: cutShort } },
      line(),
    ).complete(emptied(), signal);
    assert.equal(
      cut.items[0]?.text.trim(),
      'Function<String, PaymentGateway> factory = REGISTRY.get(name);',
      JSON.stringify(cut.items[0]?.text),
    );
    const { client: stopped } = recordingModel(text, 'stop');
    const kept = await createPipeline(
      resolveOptions({ body: { maxNewTokens: 16 } }),
      { env: { repo: { retrievers: [], methods: repo }, model: stopped } },
      line(),
    ).complete(emptied(), signal);
    assert.match(kept.items[0]?.text ?? '', /thr$/, 'not stopped by the limit, nothing is dropped');
  });

  void test("it holds the model to the body, and a streaming server's time to first token is in the trace", async () => {
    const { client, seen } = recordingModel('return null;\n    }', 'stop');
    const streaming = {
      ...client,
      generate: (r: Parameters<typeof client.generate>[0], s: AbortSignal) =>
        client.generate(r, s).then((g) => ({ ...g, firstTokenMs: 42 })),
    };
    const result = await createPipeline(
      resolveOptions(),
      { env: { repo: { retrievers: [], methods: repo }, model: streaming } },
      line(),
    ).complete(emptied(), signal);
    assert.equal(result.trace.model?.firstTokenMs, 42, JSON.stringify(result.trace.model));
    assertHeldToBody(seen);
    assert.match(result.items[0]?.text ?? '', /return null;/);
  });
});

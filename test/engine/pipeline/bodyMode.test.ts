// The body mode through the one pipeline: auto picks it in an empty method body and
// the line mode elsewhere; Rambo's steps are timed in the trace; the embedded model writes a body.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, grammarsDir, repoRoot } from '../../helpers/paths';
import { assertHeldToBody, recordingModel } from '../../helpers/recordingModel';
import { estimateTokens } from '../../../src/engine/prompt/fitPromptBudget';
import { PromptMemory } from '../../../src/engine/prompt/promptMemory';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { ModelRegistry } from '../../../src/engine/models';
import { EmbeddedClient } from '../../../src/engine/generate/EmbeddedClient';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { composeInTurns, mergeInTurns, type BodyComposer } from '../../../src/engine/body/rambo';
import { originLabel } from '../../../src/engine/retrieve/types';
import {
  autoRouter,
  bodyMode,
  createPipeline,
  formatTraceMarkdown,
  resolveOptions,
  type BodyModeHooks,
  type CompletionRequest,
} from '../../../src/engine/pipeline';
import { createRepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';
import { mergeConfig, pipelineSettings } from '../../../src/server/config';

const rel = 'src/main/java/com/example/shop/payment/Gateways.java';
const HEADER = 'public static PaymentGateway create(String name, String apiKey) {';
// The one-argument overload: the shipped model writes a body there (for the two-argument one it only loops, and nothing is shown).
const OVERLOAD = 'public static PaymentGateway create(String name) {';

// Rambo's prompt form ends its fragments with this line; the code before the cursor follows it.
const RAMBO_INSTRUCTION = '// Based on above, complete the method body of the class\n';

/** Tokens of the code after Rambo's instruction line (the whole prompt when there is none). */
function codeTokens(prompt: string): number {
  const at = prompt.indexOf(RAMBO_INSTRUCTION);
  return estimateTokens(at < 0 ? prompt : prompt.slice(at + RAMBO_INSTRUCTION.length));
}

function emptied(header = HEADER): CompletionRequest {
  const text = readFileSync(join(fixturesDir, 'javashop', rel), 'utf8');
  const start = text.indexOf(header) + header.length;
  const end = text.indexOf('\n    }\n', start);
  const edited = `${text.slice(0, start)}\n        \n    }\n${text.slice(end + 7)}`;
  const cursor = start + 9;
  return { filePath: rel, lang: 'java', prefix: edited.slice(0, cursor), suffix: edited.slice(cursor) };
}

void describe('body mode through createPipeline', () => {
  let kb: KnowledgeBase;
  let parsers: Parsers;
  let repo: RepoMethods;
  let model: EmbeddedClient;
  const signal = new AbortController().signal;

  before(async () => {
    parsers = await loadParsers(grammarsDir);
    kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'javashop'), parsers });
    await kb.index(undefined, new AbortController().signal);
    repo = new RepoMethods(kb);
    const lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(
      undefined,
      new AbortController().signal,
    );
    model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
  });
  after(() => {
    repo.dispose();
    kb.dispose();
  });

  void test("auto: an empty Java method gets a body through Rambo's steps, each timed; the trace names the elements and usages", async () => {
    // The gate off: what it does with a body is the next test's; here the steps and the written body are.
    const pipeline = createPipeline(
      resolveOptions({ gate: { mode: 'off' } }),
      { env: { repo: { retrievers: [], methods: repo }, model: model } },
      autoRouter({ parsers }),
    );
    const result = await pipeline.complete(emptied(OVERLOAD), signal);
    const trace = result.trace;
    assert.equal(trace.mode, 'body');
    assert.deepEqual(
      trace.stages.map((s) => s.stage),
      ['detect', 'signatures', 'sketch', 'elements', 'usages', 'prompt', 'generate', 'postprocess'],
    );
    assert.ok(trace.stages.every((s) => s.elapsedMs >= 0));
    assert.equal(trace.body?.target.name, 'create');
    assert.equal(trace.body?.target.detected, true);
    assert.ok((trace.body?.signatureSimilar.length ?? 0) > 0);
    assert.ok((trace.body?.usages.length ?? 0) > 0, 'usages found');
    assert.ok(
      trace.body!.usages.every((u) => u.path !== rel || !u.id.includes('#classFunction:Gateways.create')),
      'the target is never its own usage',
    );
    assert.ok(result.items.length === 1 && result.items[0]!.text.trim().length > 0, `a body (raw ${JSON.stringify(trace.model?.raw)})`);
    assert.ok(!result.items[0]!.text.includes('\n    }'), 'cut where the method ends');
    assert.ok(result.contexts.length > 0 && result.contexts.every((c) => c.origin), 'contexts in prompt order with their source');
    const md = formatTraceMarkdown(trace);
    assert.match(md, /## Body \(Rambo\)/);
    assert.match(md, /Usages:/);
  });

  void test("a body passes the show gate too: scored from its log-probabilities, kept back below the body's own threshold with its text", async () => {
    const run = (threshold: number, bodyThreshold: number) =>
      createPipeline(
        resolveOptions({ gate: { mode: 'on', threshold, bodyThreshold } }),
        { env: { repo: { retrievers: [], methods: repo }, model: model } },
        autoRouter({ parsers }),
      ).complete(emptied(OVERLOAD), signal);
    const shown = await run(1, 0);
    assert.equal(shown.trace.mode, 'body');
    const gate = shown.trace.gate!;
    assert.ok(gate && gate.logprobs && gate.features.body === 1 && gate.features.java === 1, JSON.stringify(gate));
    assert.equal(shown.items.length, 1, "a line's threshold of 1 does not hold a body back");
    const silent = await run(0, Math.min(1, gate.score + 0.01));
    assert.deepEqual(silent.items, [], "the body's threshold above its score keeps it back, whatever a line's is");
    assert.equal(silent.outcomes.gate?.shown, false);
    assert.equal(silent.outcomes.gate?.text, shown.items[0]!.text);
    assert.equal(silent.trace.gate?.threshold, Math.min(1, gate.score + 0.01), 'the trace names the threshold that decided');
  });

  void test('auto: a cursor in a method with code stays in line mode, with the line stages', async () => {
    const text = readFileSync(join(fixturesDir, 'javashop', rel), 'utf8');
    const cursor = text.indexOf('return factory.apply(apiKey);');
    const pipeline = createPipeline(
      resolveOptions({ generate: { maxNewTokens: 8 } }),
      { env: { repo: { retrievers: [], methods: repo }, model: model } },
      autoRouter({ parsers }),
    );
    const result = await pipeline.complete(
      { filePath: rel, lang: 'java', prefix: text.slice(0, cursor), suffix: text.slice(cursor) },
      signal,
    );
    assert.equal(result.trace.mode, 'line');
    assert.equal(result.trace.body, undefined);
    assert.deepEqual(
      result.trace.stages.map((s) => s.stage),
      ['query', 'retrieve', 'rerank', 'prompt', 'generate', 'postprocess'],
    );
  });

  void test("with retrieval paths, CodeRAG's knowledge items join the body's list by default (in turns with the definitions; a composer given orders them); body.knowledge false leaves them out", async () => {
    const paths = createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'] });
    try {
      const repoLent = { retrievers: [...paths.retrievers], methods: repo };
      const deps = { env: { repo: repoLent, model } };
      // Without a completion model the body mode stops after its lists: every one of them is a context.
      const lists = (body: BodyModeHooks) => ({ env: { repo: repoLent }, hooks: { body } });
      const joined = await createPipeline(
        resolveOptions({ body: { maxNewTokens: 8 } }),
        lists({ sketch: 'none' }),
        bodyMode({ parsers }),
      ).complete(emptied(), signal);
      assert.equal(joined.trace.stages.find((s) => s.stage === 'knowledge')?.status, 'ok', JSON.stringify(joined.trace.stages));
      assert.ok(
        joined.contexts.some((c) => c.origin?.kind === 'knowledge'),
        `CodeRAG items among the contexts: ${joined.contexts.map((c) => originLabel(c)).join(', ')}`,
      );
      // Step e's order is the composer given (here: CodeRAG's items first, then the product's turns).
      const knowledgeFirst: BodyComposer = (l) => mergeInTurns([[...l.knowledge, ...composeInTurns(l)]]);
      const first = await createPipeline(
        resolveOptions({ body: { maxNewTokens: 8 } }),
        lists({ sketch: 'none', compose: knowledgeFirst }),
        bodyMode({ parsers }),
      ).complete(emptied(), signal);
      assert.equal(
        first.contexts[0]?.origin?.kind,
        'knowledge',
        `a CodeRAG item leads: ${first.contexts.map((c) => originLabel(c)).join(', ')}`,
      );
      const alone = await createPipeline(
        resolveOptions({ body: { maxNewTokens: 8, knowledge: false } }),
        { ...deps, hooks: { body: { sketch: 'none' } } },
        bodyMode({ parsers }),
      ).complete(emptied(), signal);
      assert.equal(
        alone.trace.stages.some((s) => s.stage === 'knowledge'),
        false,
      );
      assert.ok(
        alone.contexts.every((c) => c.origin?.kind !== 'knowledge'),
        alone.contexts.map((c) => originLabel(c)).join(', '),
      );
    } finally {
      paths.dispose();
    }
  });

  void test("body.elements 'sketch+similar': the signature hits' elements join the sketch's, their definitions listed after the sketch's own", async () => {
    const run = async (elements: 'sketch' | 'sketch+similar') => {
      const { client } = recordingModel('PaymentGateway gateway = lookup(name);\n        return gateway;', 'stop');
      return createPipeline(
        resolveOptions({ body: { maxNewTokens: 8, knowledge: false, elements } }),
        { env: { repo: { retrievers: [], methods: repo } }, hooks: { body: { sketch: 'model', sketchModel: client } } },
        bodyMode({ parsers }),
      ).complete(emptied(), signal);
    };
    const sketchOnly = await run('sketch');
    const both = await run('sketch+similar');
    const names = (r: typeof both): string[] => (r.trace.body?.elements ?? []).map((e) => e.matched);
    assert.ok(names(sketchOnly).includes('PaymentGateway'), `the sketch's element: ${names(sketchOnly).join(', ')}`);
    assert.equal(sketchOnly.trace.body?.elementsFrom, undefined);
    assert.deepEqual(names(both).slice(0, names(sketchOnly).length), names(sketchOnly), "the sketch's elements lead");
    assert.ok(names(both).length > names(sketchOnly).length, `more elements from the signature hits: ${names(both).join(', ')}`);
    assert.match(both.trace.body?.elementsFrom ?? '', /signature-similar/);
    assert.match(formatTraceMarkdown(both.trace), /from the sketch, then the signature-similar methods/);
    const defs = (r: typeof both): string[] => r.contexts.filter((c) => c.origin?.kind === 'definition').map((c) => c.snippet.text);
    const own = defs(sketchOnly);
    assert.deepEqual(defs(both).slice(0, own.length), own, "the sketch's definitions first, in their order");
    assert.ok(defs(both).length > own.length, `definitions of the signature hits' elements follow: ${defs(both).length} vs ${own.length}`);
  });

  void test('a body the token limit stopped inside the method loses the line it cut, and the trace says so; a finished one keeps every line', async () => {
    const text = 'Function<String, PaymentGateway> factory = REGISTRY.get(name);\n        if (factory == null) thr';
    const { client: cutShort } = recordingModel(text, 'length');
    const cut = await createPipeline(
      resolveOptions({ body: { maxNewTokens: 16 } }),
      { env: { repo: { retrievers: [], methods: repo }, model: cutShort }, hooks: { body: { sketch: 'none' } } },
      bodyMode({ parsers }),
    ).complete(emptied(), signal);
    assert.equal(
      cut.items[0]?.text.trim(),
      'Function<String, PaymentGateway> factory = REGISTRY.get(name);',
      JSON.stringify(cut.items[0]?.text),
    );
    assert.match(
      cut.trace.stages.find((s) => s.stage === 'postprocess')?.message ?? '',
      /token limit ended the body mid-way.*if \(factory == null\) thr/,
    );
    const { client: stopped } = recordingModel(text, 'stop');
    const kept = await createPipeline(
      resolveOptions({ body: { maxNewTokens: 16 } }),
      { env: { repo: { retrievers: [], methods: repo }, model: stopped }, hooks: { body: { sketch: 'none' } } },
      bodyMode({ parsers }),
    ).complete(emptied(), signal);
    assert.match(kept.items[0]?.text ?? '', /thr$/, 'not stopped by the limit, nothing is dropped');
  });

  void test("a streaming model server's time to first token is in the body's trace, as in the line mode's", async () => {
    const { client } = recordingModel('return null;', 'stop');
    const streaming = {
      ...client,
      generate: (r: Parameters<typeof client.generate>[0], s: AbortSignal) =>
        client.generate(r, s).then((g) => ({ ...g, firstTokenMs: 42 })),
    };
    const result = await createPipeline(
      resolveOptions(),
      { env: { repo: { retrievers: [], methods: repo }, model: streaming }, hooks: { body: { sketch: 'none' } } },
      bodyMode({ parsers }),
    ).complete(emptied(), signal);
    assert.equal(result.trace.model?.firstTokenMs, 42, JSON.stringify(result.trace.model));
  });

  void test("a given sketch and the no-sketch variant make no sketch call; a given sketch's elements are mapped as the model's are", async () => {
    const given = {
      source: 'given',
      note: 'no model call: a given sketch',
      text: 'Function<String, PaymentGateway> factory = REGISTRY.get(name);',
    };
    for (const sketch of ['none', given] as const) {
      const pipeline = createPipeline(
        resolveOptions({ body: { maxNewTokens: 16 } }),
        { env: { repo: { retrievers: [], methods: repo }, model: model }, hooks: { body: { sketch } } },
        bodyMode({ parsers }),
      );
      const result = await pipeline.complete(emptied(), signal);
      const name = typeof sketch === 'string' ? sketch : sketch.source;
      assert.equal(result.trace.body?.sketchSource, name);
      assert.notEqual(result.trace.stages.find((s) => s.stage === 'sketch')?.status, 'ok', `${name}: no model sketch`);
      if (sketch === given) {
        assert.equal(result.trace.stages.find((s) => s.stage === 'sketch')?.message, given.note);
        assert.ok(
          result.trace.body?.elements.some((e) => e.matched === 'PaymentGateway'),
          JSON.stringify(result.trace.body?.elements),
        );
      }
    }
  });

  void test('a sketch model without a completion model: the sketch is drafted, no body is asked for, the lists are the contexts', async () => {
    const { client, seen } = recordingModel('PaymentGateway gateway = lookup(name);\n        return gateway;', 'stop');
    const result = await createPipeline(
      resolveOptions({ body: { maxNewTokens: 8, knowledge: false } }),
      { env: { repo: { retrievers: [], methods: repo } }, hooks: { body: { sketch: 'model', sketchModel: client } } },
      bodyMode({ parsers }),
    ).complete(emptied(), signal);
    assert.equal(seen.length, 1, 'the sketch call only');
    assert.equal(result.trace.stages.find((s) => s.stage === 'sketch')?.status, 'ok');
    assert.deepEqual(result.items, []);
    assert.ok(
      result.contexts.some((c) => c.origin?.kind === 'definition' && c.snippet.text.includes('PaymentGateway')),
      result.contexts.map((c) => originLabel(c)).join(', '),
    );
  });

  void test('the body prompt keeps body.contextShare of its budget for the code before the cursor, the fragments the rest', async () => {
    const budget = 300;
    const parts = async (contextShare: number): Promise<{ context: number; fragments: number; fragmentTokens: number; cut: boolean }> => {
      const { client, seen } = recordingModel('return null;\n    }', 'stop');
      const pipeline = createPipeline(
        resolveOptions({ prompt: { budgetTokens: budget }, body: { maxNewTokens: 16, contextShare } }),
        { env: { repo: { retrievers: [], methods: repo }, model: client }, hooks: { body: { sketch: 'none' } } },
        bodyMode({ parsers }),
      );
      const result = await pipeline.complete(emptied(), signal);
      const prompt = seen.at(-1)?.prompt ?? '';
      assert.ok(prompt.indexOf(RAMBO_INSTRUCTION) > 0, `fragments precede the code (${contextShare})`);
      assert.ok(prompt.endsWith(emptied().prefix.slice(-40)), 'the code ends at the cursor');
      const fragmentTokens = estimateTokens(prompt.slice(0, prompt.indexOf(RAMBO_INSTRUCTION)));
      return {
        context: codeTokens(prompt),
        fragments: result.trace.prompt?.snippets.length ?? 0,
        fragmentTokens,
        cut: result.trace.prompt?.prefixCut ?? false,
      };
    };
    const half = await parts(0.5);
    const most = await parts(0.8);
    // The code keeps at least its share; the fragments take at most the rest (room they leave goes to the code).
    assert.ok(half.cut && half.context >= budget * 0.5 - 8, `half: the code is cut, keeping at least half (${half.context} tokens)`);
    assert.ok(
      half.fragmentTokens <= budget * 0.5 + 8 && half.fragmentTokens > budget * 0.2,
      `half: the fragments take at most half (${half.fragmentTokens} tokens)`,
    );
    assert.ok(!most.cut && most.context > half.context, `0.8: the whole code fits (${most.context} tokens)`);
    assert.ok(half.fragments >= most.fragments && most.fragments >= 1, `fragments ${half.fragments} / ${most.fragments}`);
  });

  void test('at one place the sketch is drafted once, even when it came back empty; another method drafts its own', async () => {
    // An answer that closes the method at once: the sketch's cut leaves nothing of it.
    const { client, seen } = recordingModel('}', 'stop');
    const pipeline = createPipeline(
      resolveOptions({ body: { maxNewTokens: 16 } }),
      {
        env: { repo: { retrievers: [], methods: repo }, model: client },
        hooks: { body: { sketch: 'model' } },
        promptMemory: new PromptMemory(),
      },
      bodyMode({ parsers }),
    );
    const first = await pipeline.complete(emptied(), signal);
    assert.equal(first.trace.stages.find((s) => s.stage === 'sketch')?.status, 'ok');
    assert.equal(first.trace.body?.sketch, undefined, 'the sketch came back empty');
    const typed = emptied();
    const again = await pipeline.complete({ ...typed, prefix: `${typed.prefix}  ` }, signal);
    assert.equal(seen.length, 3, 'a sketch and a body, then the body alone');
    assert.match(again.trace.stages.find((s) => s.stage === 'sketch')?.message ?? '', /drafted at this place earlier/);
    await pipeline.complete(emptied(OVERLOAD), signal);
    assert.equal(seen.length, 5, 'another method: its own sketch and body');
  });

  void test("the sketch keeps the line prompt's share of code, the body its own", async () => {
    const { client, seen } = recordingModel('return null;\n    }', 'stop');
    const options = resolveOptions({ prompt: { budgetTokens: 300, contextShare: 0.5 }, body: { maxNewTokens: 16, contextShare: 0.8 } });
    await createPipeline(
      options,
      { env: { repo: { retrievers: [], methods: repo }, model: client }, hooks: { body: { sketch: 'model' } } },
      bodyMode({ parsers }),
    ).complete(emptied(), signal);
    assert.equal(seen.length, 2, 'a sketch call and a body call');
    const [sketch, body] = seen.map((r) => r.prompt);
    assert.ok(
      sketch!.includes(RAMBO_INSTRUCTION) && codeTokens(sketch!) <= 150 + 8,
      `the sketch's code is cut to half (${codeTokens(sketch!)} tokens)`,
    );
    assert.ok(codeTokens(body!) > codeTokens(sketch!), `the body keeps more code (${codeTokens(body!)} tokens)`);
  });

  void test('the body mode holds the model to the body: no end before it closes, no blank or closing first line', async () => {
    const { client: recording, seen } = recordingModel('return null;\n    }', 'stop');
    const pipeline = createPipeline(
      resolveOptions(),
      { env: { repo: { retrievers: [], methods: repo }, model: recording } },
      bodyMode({ parsers }),
    );
    const result = await pipeline.complete(emptied(), signal);
    assertHeldToBody(seen);
    assert.match(result.items[0]?.text ?? '', /return null;/);
  });

  void test("coderag.experimental.body.maxNewTokens is the body call's token limit (the sketch keeps its own); out-of-range values are not used (the default stays)", async () => {
    const limits: number[][] = [];
    for (const setting of [40, 5, 5000]) {
      const { client, seen } = recordingModel('return null;\n    }', 'stop');
      const options = resolveOptions(pipelineSettings(mergeConfig({ experimental: { body: { maxNewTokens: setting } } }).config));
      await createPipeline(
        options,
        { env: { repo: { retrievers: [], methods: repo }, model: client }, hooks: { body: { sketch: 'model' } } },
        bodyMode({ parsers }),
      ).complete(emptied(), signal);
      limits.push(seen.map((r) => r.maxNewTokens));
    }
    assert.deepEqual(limits, [
      [64, 40],
      [64, 128],
      [64, 128],
    ]);
    assert.equal(resolveOptions(pipelineSettings(mergeConfig({}).config)).body.maxNewTokens, 128);
  });
});

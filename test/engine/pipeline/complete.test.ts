// The orchestration point: every stage timed and traced, failures degrade, cancellation ends.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, grammarsDir, repoRoot } from '../../helpers/paths';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../../../src/engine/kb/parsers';
import { ModelRegistry, type CausalLM } from '../../../src/engine/models';
import { EmbeddedClient } from '../../../src/engine/generate/EmbeddedClient';
import { ModelClientError, type ModelClient } from '../../../src/engine/generate/types';
import { recordingModel } from '../../helpers/recordingModel';
import {
  complete,
  createPipeline,
  formatTraceMarkdown,
  LINE_MODE,
  resolveOptions,
  routerOf,
  type CompletionRequest,
  type RequestEnv,
  type ResearchHooks,
} from '../../../src/engine/pipeline';
import { createRepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { causalLMProber, embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';
import { snippetForPrompt } from '../../../src/engine/prompt/snippetForPrompt';
import { isCancellationError } from '../../../src/engine/util/errors';
import type { Retriever } from '../../../src/engine/retrieve/types';

const mainPy = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8');
const cursor = mainPy.indexOf('CheckoutService(cart') + 'CheckoutService('.length;
const request: CompletionRequest = {
  filePath: 'app/main.py',
  lang: 'python',
  prefix: mainPy.slice(0, cursor),
  suffix: mainPy.slice(cursor),
};
// Generous path budgets: the assertions are about the pipeline, not about a loaded test machine's speed.
// Every request here runs the line mode.
const LINE = routerOf(LINE_MODE);
const options = resolveOptions({
  query: { strategy: 'probe' },
  retrieval: { budgetsMs: { sparse: 5000, dataflow: 5000 } },
  generate: { maxNewTokens: 12, temperature: 0 },
});

void describe('pipeline.complete', () => {
  let kb: KnowledgeBase;
  let lm: CausalLM;
  let retrievers: Retriever[];
  let dispose: () => void;
  let env: RequestEnv;
  /** What a direct complete() is lent: `env`, no parts kept across requests, the research hooks given. */
  const scope = (lent: RequestEnv, hooks: ResearchHooks = {}) => ({ env: lent, parts: {}, hooks });
  const signal = new AbortController().signal;

  before(async () => {
    const parsers = await loadParsers(grammarsDir);
    kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'pyshop'), parsers });
    await kb.index(undefined, new AbortController().signal);
    ({ retrievers, dispose } = createRepositoryIndex(kb, parsers));
    lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
    // The loop guard off: the raw output below is the model's own greedy decoding.
    const model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)), loopGuard: false });
    const prober = causalLMProber(lm);
    env = { repo: { retrievers }, prober, model };
  });
  after(() => {
    dispose?.();
    kb?.dispose();
  });

  void test('runs query -> retrieve -> rerank -> prompt -> generate -> postprocess and traces each stage', async () => {
    const { items, trace } = await complete(request, options, scope(env), LINE, signal);
    assert.deepEqual(
      trace.stages.map((s) => s.stage),
      ['query', 'retrieve', 'rerank', 'prompt', 'generate', 'postprocess'],
    );
    assert.equal(trace.query?.strategy, 'probe');
    assert.ok((trace.query?.chunkScores?.length ?? 0) > 1, 'chunks probed with scores');
    assert.ok(
      trace.retrieval?.paths.some((p) => p.path === 'sparse' && p.status === 'ok'),
      JSON.stringify(trace.retrieval?.paths.map((p) => [p.path, p.status, p.message])),
    );
    assert.ok(trace.retrieval?.paths.some((p) => p.path === 'dataflow'));
    assert.ok(trace.retrieval?.candidates.some((c) => c.id === 'pyshop/services/checkout.py#classFunction:CheckoutService.__init__'));
    assert.match(trace.prompt?.text ?? '', /def __init__\(self, cart: Cart, gateway: PaymentGateway \| None = None\)/);
    assert.ok((trace.prompt?.tokens ?? Infinity) <= lm.maxPositions, 'the prompt fits the embedded model');
    assert.equal(trace.model?.backend, 'embedded');
    assert.ok(
      ['eos', 'length', 'stop'].includes(trace.model?.stoppedBy ?? ''),
      `the embedded model says why it stopped (${trace.model?.stoppedBy})`,
    );
    assert.equal(trace.completion, items[0]?.text ?? '');
    assert.equal(trace.model?.raw, await lm.generate(trace.prompt?.text ?? '', { maxNewTokens: 12, stop: [] }, signal));
    // Deterministic snippet order: the same request gives the same prompt (a server's prompt cache is reused).
    const again = await complete(request, options, scope(env), LINE, signal);
    assert.equal(again.trace.prompt?.text, trace.prompt?.text);
    const md = formatTraceMarkdown(trace);
    for (const heading of ['## Stages', '## Query', '## Retrieval', '## Rerank', '## Model', '## Prompt'])
      assert.ok(md.includes(heading), heading);
    // The embedded model's copy prior says what it did, step by step counted.
    const copy = trace.model?.copyPrior;
    assert.ok(copy && copy.steps > 0 && copy.voted <= copy.steps && copy.changed <= copy.voted, JSON.stringify(copy));
    assert.match(md, /Copy prior: /);
  });

  void test("on an empty line at column 0 the prompt and the suggestion carry the line's indentation", async () => {
    const at = mainPy.indexOf('    receipt = service.checkout()');
    const emptyLine: CompletionRequest = {
      filePath: 'app/main.py',
      lang: 'python',
      prefix: mainPy.slice(0, at),
      suffix: '\n' + mainPy.slice(mainPy.indexOf('\n', at) + 1),
    };
    const { items, trace } = await complete(emptyLine, options, scope(env), LINE, signal);
    assert.ok(trace.prompt?.text.endsWith('service = CheckoutService(cart, gateway)\n    '), JSON.stringify(trace.prompt?.text.slice(-60)));
    assert.equal(items.length, 1, `the model wrote a statement (${trace.empty ?? ''}; raw ${JSON.stringify(trace.model?.raw)})`);
    assert.match(items[0]!.text, /^ {4}\S/, "four spaces, then code: the indentation once, not the model's extra space too");
  });

  void test('a single line stops being generated once it has ended: the same suggestion, fewer tokens', async () => {
    const at = mainPy.indexOf('    receipt = service.checkout()');
    const emptyLine: CompletionRequest = {
      filePath: 'app/main.py',
      lang: 'python',
      prefix: mainPy.slice(0, at),
      suffix: '\n' + mainPy.slice(mainPy.indexOf('\n', at) + 1),
    };
    // The shipped limit (this suite's 12 tokens may end before the line does).
    const shipped = { ...options, generate: { ...options.generate, maxNewTokens: 48 } };
    const early = await complete(emptyLine, shipped, scope(env), LINE, signal);
    const full = await complete(emptyLine, shipped, scope(env), routerOf({ ...LINE_MODE, until: () => undefined }), signal);
    assert.equal(early.items[0]?.text, full.items[0]?.text);
    assert.ok(early.items.length === 1, JSON.stringify(early.trace.model?.raw));
    assert.equal(early.trace.model?.stoppedBy, 'stop');
    assert.ok(
      full.trace.model?.raw.startsWith(early.trace.model?.raw ?? '?'),
      `${JSON.stringify(early.trace.model?.raw)} begins ${JSON.stringify(full.trace.model?.raw)}`,
    );
    assert.ok((early.trace.model?.raw.length ?? 0) < (full.trace.model?.raw.length ?? 0), 'the full run wrote past the line');
  });

  void test('a failing query, retrieval or rerank stage degrades the answer and the trace says why', async () => {
    const unavailable = {
      get retrievers(): never {
        throw new Error('index unavailable');
      },
    };
    const failing = scope(
      { ...env, repo: unavailable, reranker: { name: 'broken', rerank: () => Promise.reject(new Error('reranker down')) } },
      { query: { build: () => Promise.reject(new Error('prober crashed')) } },
    );
    const { trace } = await complete(request, options, failing, LINE, signal);
    const byStage = Object.fromEntries(trace.stages.map((s) => [s.stage, s]));
    assert.equal(byStage.query?.status, 'degraded');
    assert.match(trace.query?.fallbackReason ?? '', /prober crashed/);
    assert.equal(byStage.retrieve?.status, 'degraded');
    assert.match(byStage.retrieve?.message ?? '', /index unavailable/);
    assert.equal(byStage.rerank?.status, 'skipped', 'nothing to rerank without candidates');
    assert.equal(byStage.generate?.status, 'ok');
    assert.ok(trace.model);

    const rerankFails = scope({ ...env, reranker: { name: 'broken', rerank: () => Promise.reject(new Error('reranker down')) } });
    const r = await complete(request, options, rerankFails, LINE, signal);
    const rerank = r.trace.stages.find((s) => s.stage === 'rerank');
    assert.equal(rerank?.status, 'degraded');
    assert.deepEqual(
      r.trace.rerank?.picked,
      r.trace.retrieval?.candidates.slice(0, options.rerank.topU).map((c) => c.id),
      'retrieval order kept',
    );
  });

  void test('a model error leaves no item and a typed error in the trace', async () => {
    const down: ModelClient = {
      backend: 'ollama',
      model: 'm',
      family: 'plain',
      endpoint: 'http://127.0.0.1:9',
      generate: () =>
        Promise.reject(new ModelClientError('unreachable', 'Ollama is not reachable at http://127.0.0.1:9', 'http://127.0.0.1:9', 'm')),
    };
    const { items, trace } = await complete(request, options, scope({ ...env, model: down }), LINE, signal);
    assert.deepEqual(items, []);
    assert.equal(trace.error?.stage, 'generate');
    assert.equal(trace.error?.kind, 'unreachable');
    assert.equal(trace.stages.find((s) => s.stage === 'generate')?.status, 'failed');
  });

  void test('no suggestion although the model answered: the trace says why', async () => {
    const answering = (text: string, stoppedBy: 'eos' | 'length'): ModelClient => ({
      backend: 'ollama',
      model: 'm',
      family: 'plain',
      endpoint: 'http://127.0.0.1:9',
      generate: () => Promise.resolve({ text, model: 'm', elapsedMs: 1, stoppedBy }),
    });
    const endsLine = await complete(request, options, scope({ ...env, model: answering('\n    receipt = 1', 'length') }), LINE, signal);
    assert.deepEqual(endsLine.items, []);
    // The cursor follows an open bracket: a line break first means arguments on the next lines, and these never close it.
    assert.equal(
      endsLine.trace.empty,
      'the lines it wrote after the open bracket did not close it within 12 lines (stopped by the token limit)',
    );
    const typed = { ...request, prefix: `${request.prefix}cart, engine)` };
    const endsTyped = await complete(typed, options, scope({ ...env, model: answering('\n    receipt = 1', 'length') }), LINE, signal);
    assert.equal(endsTyped.trace.empty, 'its first line was empty (the model ended the line at the cursor) (stopped by the token limit)');
    const nothing = await complete(request, options, scope({ ...env, model: answering('', 'eos') }), LINE, signal);
    assert.equal(nothing.trace.empty, 'the model wrote nothing (stopped by its end token)');
    assert.match(formatTraceMarkdown(nothing.trace), /no suggestion: the model wrote nothing \(stopped by its end token\)/);
  });

  void test('on an empty line the model is held to the line until it writes something; after typed text it is not', async () => {
    const { client: recording, seen } = recordingModel('x = 1', 'eos');
    const at = request.prefix.lastIndexOf('\n') + 1;
    const blank = { ...request, prefix: `${request.prefix.slice(0, at)}    `, suffix: '\n' };
    const typed = { ...request, prefix: `${request.prefix.slice(0, at)}    receipt = `, suffix: '\n' };
    await complete(blank, options, scope({ ...env, model: recording }), LINE, signal);
    await complete(typed, options, scope({ ...env, model: recording }), LINE, signal);
    const [onBlank, onTyped] = seen;
    assert.ok(onBlank?.holdLine, 'held on the empty line');
    assert.equal(onBlank.holdLine('  '), true);
    assert.equal(onBlank.holdLine('  x'), false);
    assert.equal(onTyped?.holdLine, undefined, 'not held after typed text');
  });

  void test('cancellation ends the request, whichever stage is running', async () => {
    // Abort at the start, early, and half-way through a request of this machine's speed.
    const { trace } = await complete(request, options, scope(env), LINE, signal);
    for (const delayMs of [0, 5, Math.max(1, Math.round(trace.totalMs / 2))]) {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), delayMs);
      await assert.rejects(
        complete(request, options, scope(env), LINE, controller.signal),
        (e: unknown) => isCancellationError(e),
        `abort after ${delayMs} ms`,
      );
    }
  });

  void test('createPipeline: the composed line pipeline gives the same prompt; without a model it only retrieves', async () => {
    const prober = causalLMProber(lm);
    const model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
    const direct = await complete(request, options, scope(env), LINE, signal);
    const composed = await createPipeline(options, { env }).complete(request, signal);
    assert.equal(composed.trace.mode, 'line');
    assert.equal(composed.trace.prompt?.text, direct.trace.prompt?.text);
    assert.deepEqual(
      composed.contexts.map((c) => c.snippet.path),
      composed.trace.prompt?.snippets,
    );
    const retrievalOnly = await createPipeline(options, { env: { ...env, model: undefined } }).complete(request, signal);
    assert.deepEqual(retrievalOnly.items, []);
    assert.equal(retrievalOnly.trace.prompt, undefined);
    assert.deepEqual(
      retrievalOnly.trace.stages.map((st) => st.stage),
      ['query', 'retrieve', 'rerank'],
    );
    assert.deepEqual(
      retrievalOnly.contexts.map((c) => c.snippet.id),
      retrievalOnly.trace.retrieval?.candidates.slice(0, options.rerank.topU).map((c) => c.id),
    );
  });

  void test('knowledge-base stubs lose their own path line in the prompt (the prompt heads each snippet)', () => {
    const item = kb.items().find((i) => i.qualifiedName === 'CheckoutService.__init__');
    assert.ok(item);
    const s = snippetForPrompt({
      snippet: {
        id: item.id,
        kind: item.kind,
        path: item.path,
        name: item.name,
        qualifiedName: item.qualifiedName,
        range: item.range,
        text: item.text,
      },
      paths: ['sparse'],
      scores: {},
      ranks: {},
    });
    assert.ok(!s.text.startsWith('#'), s.text);
    assert.match(s.text, /class CheckoutService/);
  });
});

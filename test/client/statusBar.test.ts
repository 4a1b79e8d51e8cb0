// What the status-bar item shows for each server status: the text names a model problem (not
// only the tooltip), the tooltip gives the reason and what to do, and the text returns to normal
// once the model answers again.
import test from 'node:test';
import assert from 'node:assert/strict';
import { modelFixes, modelProblemLabel, statusBarView } from '../../src/client/statusBar';
import type { ModelState, StatusParams } from '../../src/protocol/protocol';

function status(over: Partial<StatusParams> = {}): StatusParams {
  return {
    state: 'ready',
    message: 'Ready: 120 items indexed; ollama qwen2.5-coder:1.5b-base; reranker distilled',
    folders: [{ uri: 'file:///ws', state: 'ready', items: 120 }],
    model: { backend: 'ollama', model: 'qwen2.5-coder:1.5b-base', endpoint: 'http://127.0.0.1:11434', state: 'ok' },
    reranker: { current: 'distilled', available: ['distilled', 'none'] },
    completionsEnabled: true,
    stats: { requests: 0, cacheHits: 0, modelCalls: 0, maxModelInFlight: 0 },
    ...over,
  };
}

void test('ready: a check mark and the reranker in use, no warning colour', () => {
  const view = statusBarView(status(), true);
  assert.equal(view.text, '$(check) CodeRAG · distilled');
  assert.equal(view.warning, false);
  assert.match(view.tooltip, /Ready: 120 items indexed/);
  assert.match(view.tooltip, /click to switch/);
});

void test('model unreachable: the text says so; the tooltip gives the reason and what to do', () => {
  const view = statusBarView(
    status({
      state: 'modelProblem',
      message: 'generate: Ollama is not reachable at http://127.0.0.1:11434 (connection refused)',
      model: {
        backend: 'ollama',
        model: 'qwen2.5-coder:1.5b-base',
        endpoint: 'http://127.0.0.1:11434',
        state: 'unreachable',
        message: 'generate: Ollama is not reachable at http://127.0.0.1:11434 (connection refused)',
        action: 'Start Ollama (`ollama serve`) or point `coderag.ollama.host` at where it runs.',
      },
    }),
    true,
  );
  assert.equal(view.text, '$(warning) CodeRAG: model unreachable');
  assert.equal(view.warning, true);
  assert.match(view.tooltip, /connection refused/);
  assert.match(view.tooltip, /What to do:\*\* Start Ollama/);
});

void test('every model problem has its own words in the text', () => {
  const expected: Array<[ModelState, string, string]> = [
    ['unreachable', 'ollama', 'model unreachable'],
    ['timeout', 'ollama', 'model timed out'],
    ['httpStatus', 'openai', 'model server error'],
    ['malformed', 'openai', 'bad model answer'],
    ['modelMissing', 'ollama', 'model not pulled'],
    ['modelMissing', 'openai', 'model missing'],
    ['failed', 'embedded', 'model error'],
  ];
  for (const [state, backend, label] of expected) {
    assert.equal(modelProblemLabel(state, backend), label);
    const view = statusBarView(status({ state: 'modelProblem', message: 'x', model: { backend, model: 'm', endpoint: '', state } }), true);
    assert.equal(view.text, `$(warning) CodeRAG: ${label}`);
  }
});

void test('indexing shows progress; untrusted and disabled say so; before any status the item spins', () => {
  assert.equal(
    statusBarView(status({ state: 'indexing', indexing: { folder: 'ws', done: 3, total: 40 } }), true).text,
    '$(sync~spin) CodeRAG 3/40',
  );
  assert.equal(statusBarView(status({ state: 'disabled' }), true).text, '$(circle-slash) CodeRAG');
  assert.equal(statusBarView(status(), false).text, '$(shield) CodeRAG');
  assert.match(statusBarView(undefined, false).tooltip, /untrusted/);
  assert.equal(statusBarView(undefined, true).text, '$(loading~spin) CodeRAG');
});

void test('the tooltip lists where each local model runs and states a device error once', () => {
  const error = 'CUDA was asked for (device "cuda") but the CUDA execution provider is not installed; running on the CPU';
  const view = statusBarView(
    status({
      models: [
        { model: 'coderag-lm', device: 'cuda', provider: 'cpu', error },
        { model: 'coderag-encoder', device: 'cuda', provider: 'cpu', error },
      ],
    }),
    true,
  );
  assert.match(view.tooltip, /Local models run on: coderag-lm cpu, coderag-encoder cpu/);
  assert.equal(view.tooltip.split('**Device error:**').length - 1, 1);
  assert.ok(view.tooltip.includes(`**Device error:** ${error}`));
  assert.doesNotMatch(statusBarView(status(), true).tooltip, /Local models/);
});

void test('no model server answered under auto: the text says the shipped model stands in, and a click offers the fixes', () => {
  const fallback = status({
    model: {
      backend: 'embedded',
      model: 'coderag-lm',
      endpoint: 'embedded',
      state: 'ok',
      message: 'using the embedded model (Ollama is not reachable at http://127.0.0.1:11434)',
    },
  });
  const view = statusBarView(fallback, true);
  assert.equal(view.text, '$(info) CodeRAG · shipped model');
  assert.equal(view.command, 'coderag.fixModel');
  assert.match(view.tooltip, /No model server answered/);
  assert.match(view.tooltip, /Ollama is not reachable/);
  // The fixes lead with connecting a server; the shipped model is what runs already, so not offered again.
  assert.deepEqual(
    modelFixes(fallback).map((f) => f.action),
    ['walkthrough', 'download', 'settings', 'log'],
  );
  // Chosen on purpose (provider embedded: no note), the shipped model is a normal ready state.
  const chosen = statusBarView(status({ model: { backend: 'embedded', model: 'coderag-lm', endpoint: 'embedded', state: 'ok' } }), true);
  assert.equal(chosen.text, '$(check) CodeRAG · distilled');
  assert.equal(chosen.command, 'coderag.toggleReranker');
});

void test('a model problem: a click offers the fixes, a missing Ollama model first of all its pull', () => {
  const unreachable = status({
    state: 'modelProblem',
    message: 'Ollama is not reachable',
    model: { backend: 'ollama', model: 'qwen2.5-coder:1.5b-base', endpoint: 'http://127.0.0.1:11434', state: 'unreachable' },
  });
  const view = statusBarView(unreachable, true);
  assert.equal(view.command, 'coderag.fixModel');
  assert.match(view.tooltip, /Click\*\* for the ways to fix it/);
  assert.deepEqual(
    modelFixes(unreachable).map((f) => f.action),
    ['walkthrough', 'download', 'useEmbedded', 'settings', 'log'],
  );
  const missing = status({
    state: 'modelProblem',
    message: 'not pulled',
    model: { backend: 'ollama', model: 'qwen2.5-coder:1.5b-base', endpoint: 'http://127.0.0.1:11434', state: 'modelMissing' },
  });
  assert.equal(modelFixes(missing)[0]?.label, 'Pull qwen2.5-coder:1.5b-base in Ollama');
  assert.equal(statusBarView(status(), true).command, 'coderag.toggleReranker');
});

void test('the tooltip says whether dense retrieval and similar code are ready, building, off or failed, per folder when there are several', () => {
  const one = statusBarView(
    status({
      folders: [
        {
          uri: 'file:///ws',
          state: 'ready',
          items: 120,
          dense: { state: 'ready', items: 3200 },
          similar: { state: 'off', windows: 0, message: 'coderag.similar.mode is off' },
        },
      ],
    }),
    true,
  );
  assert.match(one.tooltip, /Dense retrieval: ready \(3,200 items\)/);
  assert.match(one.tooltip, /Similar code: off \(coderag\.similar\.mode is off\)/);
  const two = statusBarView(
    status({
      folders: [
        {
          uri: 'file:///a/pyshop',
          state: 'ready',
          items: 120,
          dense: { state: 'building', items: 0 },
          similar: { state: 'building', windows: 0 },
        },
        {
          uri: 'file:///a/java%20shop',
          state: 'ready',
          items: 80,
          dense: { state: 'failed', items: 0, message: 'disk full' },
          similar: { state: 'ready', windows: 45 },
        },
        { uri: 'file:///', state: 'failed', message: 'the file-system root is not indexed' },
      ],
    }),
    true,
  );
  assert.match(two.tooltip, /Dense retrieval: pyshop building; java shop failed: disk full/);
  assert.match(two.tooltip, /Similar code: pyshop building; java shop ready \(45 code windows\)/);
  // A status without the builds (no folder opened yet) has no such lines.
  assert.doesNotMatch(statusBarView(status(), true).tooltip, /Dense retrieval|Similar code/);
});

void test('the tooltip names the files a folder leaves out of the index and why (the first three, then how many more)', () => {
  const skipped = [
    {
      path: 'static/app.min.js.py',
      reason: 'longLines',
      detail: 'lines too long: a line of 200,000 characters (minified or generated code)',
    },
    { path: 'gen/defs.py', reason: 'tooManyTokens', detail: 'too much code: more than 1,000,000 tokens' },
    { path: 'gen/many.py', reason: 'tooManyItems', detail: 'too many items: more than 10,000 items' },
    { path: 'data/blob.py', reason: 'tooLarge', detail: 'over the size limit' },
  ];
  const view = statusBarView(
    status({ folders: [{ uri: 'file:///home/u/shop', state: 'ready', items: 120, skipped, skippedCount: 6 }] }),
    true,
  );
  assert.match(view.tooltip, /Not indexed in shop: 6 files: `static\/app\.min\.js\.py` \(lines too long: a line of 200,000 characters/);
  assert.match(view.tooltip, /`gen\/many\.py` \(too many items: more than 10,000 items\), and 3 more/);
  assert.doesNotMatch(view.tooltip, /blob\.py/);
  assert.doesNotMatch(statusBarView(status(), true).tooltip, /Not indexed/);
});

// The `coderag/status` payload a model problem produces, and what the client's status bar shows
// for it: the problem in the text, the reason and what to do in the tooltip, back to normal once
// a request gets an answer.
import test from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from 'vscode-languageserver/node';
import { StatusReporter, modelAction } from '../../src/server/StatusReporter';
import { statusBarView } from '../../src/client/statusBar';
import type { StatusParams } from '../../src/protocol/protocol';

function reporter(): { status: StatusReporter; sent: StatusParams[] } {
  const sent: StatusParams[] = [];
  const connection = {
    sendNotification: (_type: unknown, params: StatusParams) => (sent.push(params), Promise.resolve()),
  } as unknown as Connection;
  const status = new StatusReporter();
  status.attach(connection);
  status.update(
    { folders: [{ uri: 'file:///ws', state: 'ready', items: 42 }], reranker: { current: 'distilled', available: ['distilled', 'none'] } },
    true,
  );
  return { status, sent };
}

const base = { backend: 'ollama', model: 'qwen2.5-coder:1.5b-base', endpoint: 'http://127.0.0.1:11434' };

void test('model unreachable -> modelProblem with the reason and what to do; the status bar text says "model unreachable"', () => {
  const { status, sent } = reporter();
  status.update({ model: { ...base, state: 'ok' } }, true);
  assert.equal(statusBarView(sent.at(-1), true).text, '$(check) CodeRAG · distilled');
  const reason = 'generate: Ollama is not reachable at http://127.0.0.1:11434 (ECONNREFUSED)';
  status.update({ model: { ...base, state: 'unreachable', message: reason } }, true);
  const payload = sent.at(-1)!;
  assert.equal(payload.state, 'modelProblem');
  assert.equal(payload.message, reason);
  assert.equal(payload.model.state, 'unreachable');
  assert.match(payload.model.action ?? '', /ollama serve/);
  assert.match(payload.model.action ?? '', /coderag\.ollama\.host/);
  const view = statusBarView(payload, true);
  assert.equal(view.text, '$(warning) CodeRAG: model unreachable');
  assert.equal(view.warning, true);
  assert.match(view.tooltip, /ECONNREFUSED/);
  assert.match(view.tooltip, /ollama serve/);
  // A later request that gets an answer.
  status.update({ model: { ...base, state: 'ok' } }, true);
  const after = sent.at(-1)!;
  assert.equal(after.state, 'ready');
  assert.equal(after.model.action, undefined);
  assert.equal(statusBarView(after, true).text, '$(check) CodeRAG · distilled');
  status.dispose();
});

void test('each problem gets an action that fits the backend', () => {
  assert.match(modelAction({ ...base, state: 'modelMissing' }) ?? '', /Pull the Completion Model.*ollama pull qwen2\.5-coder:1\.5b-base/);
  assert.match(
    modelAction({ backend: 'openai', model: 'm', endpoint: 'http://gpu:8000', state: 'unreachable' }) ?? '',
    /http:\/\/gpu:8000.*coderag\.openai\.baseUrl/,
  );
  assert.match(modelAction({ ...base, state: 'timeout' }) ?? '', /coderag\.model\.timeoutMs/);
  assert.match(modelAction({ backend: 'openai', model: 'm', endpoint: 'http://gpu:8000', state: 'httpStatus' }) ?? '', /API key/);
  assert.match(modelAction({ ...base, state: 'malformed' }) ?? '', /Ollama/);
  assert.equal(modelAction({ ...base, state: 'ok' }), undefined);
  assert.equal(modelAction({ ...base, state: 'unknown' }), undefined);
});

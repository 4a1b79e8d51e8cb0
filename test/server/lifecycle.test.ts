// The lifecycle guard on its own: which messages reach the handlers in each phase (the LSP-level
// behaviour is in test/faults/lsp.test.ts).
import test from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from 'vscode-languageserver/node';
import { LifecycleGuard } from '../../src/server/lifecycle';

function passes(guard: LifecycleGuard, message: Message): Message | undefined {
  let out: Message | undefined;
  guard.handleMessage(message, (m) => (out = m));
  return out;
}

const request = (id: number, method: string): Message => ({ jsonrpc: '2.0', id, method, params: {} }) as Message;
const notification = (method: string): Message => ({ jsonrpc: '2.0', method, params: {} }) as Message;
/** The error code a request was turned into a refusal with (undefined: it reaches its handler). */
function refusedCode(m: Message | undefined): number | undefined {
  const r = m as { method?: string; params?: { code?: number } } | undefined;
  return r?.method === 'coderag/$refused' ? r.params?.code : undefined;
}

void test('each phase lets through what LSP allows; exit always; initialized once', () => {
  const guard = new LifecycleGuard();
  assert.equal(refusedCode(passes(guard, request(1, 'textDocument/inlineCompletion'))), -32002);
  assert.equal(passes(guard, notification('textDocument/didOpen')), undefined);
  assert.equal(refusedCode(passes(guard, request(2, 'initialize'))), undefined);
  assert.equal(guard.phase, 'running');
  assert.equal(refusedCode(passes(guard, request(3, 'initialize'))), -32600);
  assert.ok(passes(guard, notification('initialized')));
  assert.equal(passes(guard, notification('initialized')), undefined, 'a second initialized starts nothing');
  assert.ok(passes(guard, notification('textDocument/didSave')));
  assert.equal(refusedCode(passes(guard, request(4, 'shutdown'))), undefined);
  assert.equal(guard.phase, 'shutDown');
  assert.equal(refusedCode(passes(guard, request(5, 'coderag/rebuildIndex'))), -32600);
  assert.equal(refusedCode(passes(guard, request(6, 'shutdown'))), -32600);
  assert.equal(passes(guard, notification('textDocument/didSave')), undefined);
  assert.ok(passes(guard, notification('exit')));
  assert.deepEqual(
    passes(guard, { jsonrpc: '2.0', id: 7, result: null } as Message),
    { jsonrpc: '2.0', id: 7, result: null },
    'answers to the server pass',
  );
});

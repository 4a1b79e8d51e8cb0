// Fault: credentials in ordinary source files must not reach a model server. `coderag complete`
// with an Ollama-compatible server for both the completion model and the LLM reranker: every
// request body the server receives is free of the fixture's secrets, and the trace counts them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, tempDir } from '../helpers/paths';
import { runCli } from './cliRun';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce } from '../server/lspHarness';

const FIXTURE_SECRETS = [
  'AKIAQ7XK2M4N6P8R0T3V',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Tr2Lm9Q',
  'hunter2-Orchid-77',
  'ghp_Zx8Qv3LmN7pR2sT9wY4kB6cD1fG5hJ0aE3uI',
  'xoxb-2048-113355-QwErTyUiOpAsDfGh',
  'sk-proj-T4aB9cD2eF7gH1iJ6kL3mN8oP5qR0sTu',
  'Zq3#vL9!mX2@pR7$tW5^yB8&nC4*kD6%',
  'MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8pjmUq5lq4F0jT4mYgQnS7pHd',
  'Adm1n-Pa55-Quartz',
  'tok_8Fq2Lx9Wm4Rz7Tn3Vb6Yc1Hd',
];

void test('coderag complete sends no credential of the repository to the completion model or the LLM reranker; the trace counts the redactions', async () => {
  buildOnce();
  const server = await startOllamaTestServer(
    (prompt) => Promise.resolve({ text: prompt.includes('<answer>') || /\[A\]/.test(prompt) ? '<answer>[A]</answer>' : '"ok"' }),
    { models: ['qwen2.5-coder:1.5b-base', 'qwen3:8b'] },
  );
  const cache = tempDir();
  try {
    const r = await runCli(['complete', join(fixturesDir, 'secretshop'), 'shop/app.py:18', '--provider', 'ollama', '--ollama-host', server.url, '--reranker', 'llm', '--no-dense', '--index-dir', cache.path, '--json']);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    const result = JSON.parse(r.stdout) as { trace: { prompt?: { text: string; redactions: number }; rerank?: { redactions?: number; calls: unknown[] } } };
    const generate = server.requests.filter((q) => q.path === '/api/generate');
    const rerank = server.requests.filter((q) => q.path === '/api/chat');
    assert.equal(generate.length, 1, 'one completion request');
    assert.ok(rerank.length > 0, 'the LLM reranker was asked');
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    for (const secret of FIXTURE_SECRETS) assert.ok(!sent.includes(secret) && !sent.includes(JSON.stringify(secret).slice(1, -1)), `sent to the model: ${secret}`);
    assert.ok(sent.includes('<redacted>'));
    // Ordinary values still reach the model.
    assert.ok(sent.includes('TOKENIZER = \\"gpt2\\"'), 'ordinary code is kept');
    const prompt = result.trace.prompt;
    assert.ok(prompt && prompt.redactions >= 2, `prompt redactions: ${prompt?.redactions}`);
    assert.ok((result.trace.rerank?.redactions ?? 0) >= 1, `rerank redactions: ${result.trace.rerank?.redactions}`);
    assert.ok(!prompt.text.includes('hunter2-Orchid-77'), 'the trace shows the prompt as sent');
    const md = await runCli(['complete', join(fixturesDir, 'secretshop'), 'shop/app.py:18', '--provider', 'ollama', '--ollama-host', server.url, '--no-dense', '--index-dir', cache.path]);
    assert.match(md.stdout, /redactions: [1-9]\d*/);
  } finally {
    cache.cleanup();
    await server.close();
  }
});

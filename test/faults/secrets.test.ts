// Fault: credentials in ordinary source files must not reach a model server. `coderag complete`
// with an Ollama-compatible server for both the completion model and the LLM reranker: every
// request body the server receives is free of the fixture's secrets, and the trace counts them.
import test from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, tempDir } from '../helpers/paths';
import { runCli } from './cliRun';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { buildOnce, startLsp } from '../server/lspHarness';
import { writeTree, type IndexJson } from './helpers';

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

void test('secret-bearing files (.env*, *.pem, *.key, id_rsa*, *credentials*, *.p12) are never indexed and never reach the model', async () => {
  buildOnce();
  const dir = tempDir();
  const server = await startOllamaTestServer(() => Promise.resolve({ text: '"ok"' }), { models: ['qwen2.5-coder:1.5b-base'] });
  try {
    const repo = join(dir.path, 'repo');
    // Each secret file holds a marker, and the Python ones a function the completion would want.
    const secretFiles: Record<string, string> = {
      '.env': 'API_KEY=marker-env-0001\n',
      '.env.production': 'DB_URL=marker-env-0002\n',
      'certs/server.pem': '-----BEGIN CERTIFICATE-----\nmarker-pem-0003\n-----END CERTIFICATE-----\n',
      'certs/server.key': 'marker-key-0004\n',
      'id_rsa': 'marker-rsa-0005\n',
      'id_rsa.py': 'def load_rsa_marker():\n    return "marker-rsa-0006"\n',
      'conf/credentials.py': 'def load_credentials_marker():\n    return "marker-cred-0007"\n',
      'conf/aws_credentials.json': '{"key": "marker-cred-0008"}\n',
      'conf/store.p12': 'marker-p12-0009\n',
    };
    writeTree(repo, { ...secretFiles, 'app.py': 'from conf.credentials import load_credentials_marker\n\nvalue = load_credentials_marker(\n' });
    const cache = join(dir.path, 'cache');
    const indexed = await runCli(['index', repo, '--index-dir', cache, '--json']);
    assert.equal(indexed.code, 0, indexed.stderr);
    const report = JSON.parse(indexed.stdout) as IndexJson;
    assert.equal(report.files, 1, 'only app.py');
    const secret = report.skipped.filter((s) => s.reason === 'secret').map((s) => s.path).sort();
    assert.deepEqual(secret, Object.keys(secretFiles).sort());
    const r = await runCli(['complete', repo, 'app.py:3', '--provider', 'ollama', '--ollama-host', server.url, '--no-dense', '--index-dir', cache, '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(server.requests.filter((q) => q.path === '/api/generate').length, 1, 'the completion was asked for');
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(sent.includes('load_credentials_marker('), 'the code around the cursor is sent');
    assert.ok(!/marker-[a-z0-9]+-\d{4}/.test(sent), `a secret file reached the model: ${sent.match(/marker-[a-z0-9]+-\d{4}/)?.[0]}`);
    assert.ok(!sent.includes('def load_credentials_marker'), 'no snippet from conf/credentials.py');
  } finally {
    await server.close();
    dir.cleanup();
  }
});

void test('the language server sends no credential of the repository to the completion model; the trace counts the redactions', async () => {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'f"{channel}"' }), { models: ['coderag-lm:test'] });
  const repo = join(fixturesDir, 'secretshop');
  const lsp = await startLsp(repo, {
    debounceMs: 0,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000, maxNewTokens: 16 },
    ollama: { host: server.url, completionModel: 'coderag-lm:test', keepAlive: '5m' },
    rerank: { kind: 'none' },
    query: { strategy: 'last10' },
  });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const app = join(repo, 'shop', 'app.py');
    const uri = lsp.open(app, 'python');
    const lastLine = readFileSync(app, 'utf8').split('\n')[17] ?? '';
    await lsp.complete(uri, 17, lastLine.length);
    const explained = await lsp.explain();
    assert.equal(server.requests.filter((q) => q.path === '/api/generate').length, 1, 'one completion request');
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    for (const secret of FIXTURE_SECRETS) assert.ok(!sent.includes(secret) && !sent.includes(JSON.stringify(secret).slice(1, -1)), `sent to the model: ${secret}`);
    assert.ok(sent.includes('<redacted>'), 'settings.py snippets reached the prompt, redacted');
    assert.match(explained?.markdown ?? '', /redactions: [1-9]\d*/, 'Explain Last Completion counts the redactions');
  } finally {
    await lsp.close();
    await server.close();
  }
});

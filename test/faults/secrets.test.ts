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
import { loadSecretCorpusV2, scoreV2ThroughBoundary } from '../helpers/secretCorpus';
import { redactSecrets } from '../../src/engine/prompt/redact';

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

/** A completion request to the Ollama API; the warm-up of a new place asks for one token (ModelClient.warm). */
function isCompletionRequest(q: { path: string; body: unknown }): boolean {
  return q.path === '/api/generate' && (q.body as { options?: { num_predict?: number } }).options?.num_predict !== 1;
}

void test('coderag complete sends no credential of the repository to the completion model or the LLM reranker; the trace counts the redactions', async () => {
  buildOnce();
  const server = await startOllamaTestServer(
    (prompt) => Promise.resolve({ text: prompt.includes('<answer>') || /\[A\]/.test(prompt) ? '<answer>[A]</answer>' : '"ok"' }),
    { models: ['qwen2.5-coder:1.5b-base', 'qwen3:8b'] },
  );
  const cache = tempDir();
  try {
    const r = await runCli([
      'complete',
      join(fixturesDir, 'secretshop'),
      'shop/app.py:18',
      '--provider',
      'ollama',
      '--ollama-host',
      server.url,
      '--reranker',
      'llm',
      '--no-dense',
      '--index-dir',
      cache.path,
      '--json',
    ]);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    const result = JSON.parse(r.stdout) as {
      trace: { prompt?: { text: string; redactions: number }; rerank?: { redactions?: number; calls: unknown[] } };
    };
    const generate = server.requests.filter((q) => q.path === '/api/generate');
    const rerank = server.requests.filter((q) => q.path === '/api/chat');
    assert.equal(generate.length, 1, 'one completion request');
    assert.ok(rerank.length > 0, 'the LLM reranker was asked');
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    for (const secret of FIXTURE_SECRETS)
      assert.ok(!sent.includes(secret) && !sent.includes(JSON.stringify(secret).slice(1, -1)), `sent to the model: ${secret}`);
    assert.ok(sent.includes('<redacted>'));
    // Ordinary values still reach the model.
    assert.ok(sent.includes('TOKENIZER = \\"gpt2\\"'), 'ordinary code is kept');
    const prompt = result.trace.prompt;
    assert.ok(prompt && prompt.redactions >= 2, `prompt redactions: ${prompt?.redactions}`);
    assert.ok((result.trace.rerank?.redactions ?? 0) >= 1, `rerank redactions: ${result.trace.rerank?.redactions}`);
    assert.ok(!prompt.text.includes('hunter2-Orchid-77'), 'the trace shows the prompt as sent');
    const md = await runCli([
      'complete',
      join(fixturesDir, 'secretshop'),
      'shop/app.py:18',
      '--provider',
      'ollama',
      '--ollama-host',
      server.url,
      '--no-dense',
      '--index-dir',
      cache.path,
    ]);
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
      id_rsa: 'marker-rsa-0005\n',
      'id_rsa.py': 'def load_rsa_marker():\n    return "marker-rsa-0006"\n',
      'conf/credentials.py': 'def load_credentials_marker():\n    return "marker-cred-0007"\n',
      'conf/aws_credentials.json': '{"key": "marker-cred-0008"}\n',
      'conf/store.p12': 'marker-p12-0009\n',
    };
    writeTree(repo, {
      ...secretFiles,
      'app.py': 'from conf.credentials import load_credentials_marker\n\nvalue = load_credentials_marker(\n',
    });
    const cache = join(dir.path, 'cache');
    const indexed = await runCli(['index', repo, '--index-dir', cache, '--json']);
    assert.equal(indexed.code, 0, indexed.stderr);
    const report = JSON.parse(indexed.stdout) as IndexJson;
    assert.equal(report.files, 1, 'only app.py');
    const secret = report.skipped
      .filter((s) => s.reason === 'secret')
      .map((s) => s.path)
      .sort();
    assert.deepEqual(secret, Object.keys(secretFiles).sort());
    const r = await runCli([
      'complete',
      repo,
      'app.py:3',
      '--provider',
      'ollama',
      '--ollama-host',
      server.url,
      '--no-dense',
      '--index-dir',
      cache,
      '--json',
    ]);
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
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
    ollama: { host: server.url, completionModel: 'coderag-lm:test' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 16 }, ollama: { keepAlive: '5m' }, query: { strategy: 'last10' } },
  });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const app = join(repo, 'shop', 'app.py');
    const uri = lsp.open(app, 'python');
    const lastLine = readFileSync(app, 'utf8').split('\n')[17] ?? '';
    await lsp.complete(uri, 17, lastLine.length);
    const explained = await lsp.explain();
    assert.equal(server.requests.filter(isCompletionRequest).length, 1, 'one completion request (besides the warm-up of the new place)');
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    for (const secret of FIXTURE_SECRETS)
      assert.ok(!sent.includes(secret) && !sent.includes(JSON.stringify(secret).slice(1, -1)), `sent to the model: ${secret}`);
    assert.ok(sent.includes('<redacted>'), 'settings.py snippets reached the prompt, redacted');
    assert.match(explained?.markdown ?? '', /redactions: [1-9]\d*/, 'Explain Last Completion counts the redactions');
  } finally {
    await lsp.close();
    await server.close();
  }
});

// Each form below once reached the model server unredacted (only an f-string form was caught).
const ISSUE_FORMS: Array<[form: string, value: string]> = [
  ['annotated assignment', 'Vx7-qu1ck-Falcon'],
  ['value with spaces', 'correct horse battery staple'],
  ['value with backslashes', 'p\\\\ss-W0rd\\\\2024'],
  ['dict key', 'Kp9-Sable-Lantern'],
  ['environment variable', 'tk-3f9a1c77e2b84d10'],
  ['URL userinfo', 'S3cretPg-2291'],
  ['Authorization header', '8f2kLq0Zp4Rt7Wm1Xc9Vb3'],
  ['comment stating a password', 'Tr0ub4dor&3'],
  ['tuple passed to auth', 'Qw3rty-Basil-88'],
  ['Java Properties.put', 'Smtp-Relay-4471'],
  ['Java setProperty', 'Jd8-Heron-Quill'],
];
const LEAKYSHOP = join(fixturesDir, 'secrets', 'leakyshop');

/** The forms found anywhere in what the server received (as written, or JSON-escaped). */
function leaked(sent: string, forms: ReadonlyArray<[string, string]> = ISSUE_FORMS): string[] {
  // A value written with backslashes arrives JSON-escaped once more.
  return forms
    .filter(([, v]) => sent.includes(v) || sent.includes(JSON.stringify(v).slice(1, -1)) || sent.includes(v.replace(/\\\\/g, '\\')))
    .map(([form, v]) => `${form}: ${v}`);
}

void test('no credential form of the completed or a retrieved file reaches the model server (line mode with the LLM reranker, body mode with its sketch)', async () => {
  buildOnce();
  const server = await startOllamaTestServer(
    (prompt) => Promise.resolve({ text: prompt.includes('<answer>') || /\[A\]/.test(prompt) ? '<answer>[A]</answer>' : 'data' }),
    { models: ['qwen2.5-coder:1.5b-base', 'qwen3:8b'] },
  );
  const cache = tempDir();
  try {
    const line = await runCli([
      'complete',
      LEAKYSHOP,
      'shop/app.py:20',
      '--provider',
      'ollama',
      '--ollama-host',
      server.url,
      '--reranker',
      'llm',
      '--no-dense',
      '--index-dir',
      cache.path,
      '--json',
    ]);
    assert.ok(line.code === 0 || line.code === 1, line.stderr);
    assert.equal(server.requests.filter((q) => q.path === '/api/generate').length, 1, 'the completion was asked for');
    assert.ok(
      server.requests.some((q) => q.path === '/api/chat'),
      'the LLM reranker was asked',
    );
    const lineTrace = (JSON.parse(line.stdout) as { trace: { prompt?: { text: string } } }).trace;
    const body = await runCli([
      'complete',
      LEAKYSHOP,
      'src/Mailer.java:15',
      '--mode',
      'body',
      '--provider',
      'ollama',
      '--ollama-host',
      server.url,
      '--no-dense',
      '--index-dir',
      cache.path,
      '--json',
    ]);
    assert.ok(body.code === 0 || body.code === 1, body.stderr);
    const bodyTrace = (
      JSON.parse(body.stdout) as { trace: { mode: string; stages: Array<{ stage: string; status: string }>; prompt?: { text: string } } }
    ).trace;
    assert.equal(bodyTrace.mode, 'body');
    assert.ok(
      bodyTrace.stages.some((s) => s.stage === 'sketch' && s.status === 'ok'),
      'the sketch was asked for',
    );
    assert.ok(server.requests.filter((q) => q.path === '/api/generate').length >= 3, 'sketch and body requests');
    const sent = JSON.stringify(server.requests.map((q) => q.body));
    assert.ok(sent.includes('Mailer') && sent.includes('fetch_report'), 'both files reached the model');
    assert.deepEqual(leaked(sent), [], 'sent to the model');
    // The trace (Explain, --json) shows the prompt as sent.
    assert.deepEqual(leaked(JSON.stringify([lineTrace.prompt?.text, bodyTrace.prompt?.text])), [], 'in the trace');
  } finally {
    cache.cleanup();
    await server.close();
  }
});

void test('the language server sends none of the credential forms; Explain shows none', async () => {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'data' }), { models: ['coderag-lm:test'] });
  const lsp = await startLsp(LEAKYSHOP, {
    debounceMs: 0,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
    ollama: { host: server.url, completionModel: 'coderag-lm:test' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 16 }, ollama: { keepAlive: '5m' }, query: { strategy: 'last10' } },
  });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const app = join(LEAKYSHOP, 'shop', 'app.py');
    const uri = lsp.open(app, 'python');
    await lsp.complete(uri, 19, 11);
    const explained = await lsp.explain();
    assert.equal(server.requests.filter(isCompletionRequest).length, 1, 'one completion request (besides the warm-up of the new place)');
    assert.deepEqual(leaked(JSON.stringify(server.requests.map((q) => q.body))), [], 'sent to the model');
    assert.deepEqual(leaked(explained?.markdown ?? ''), [], 'in Explain Last Completion');
    assert.match(explained?.markdown ?? '', /redactions: [1-9]\d*/);
  } finally {
    await lsp.close();
    await server.close();
  }
});

void test('a model that writes the redaction placeholder shows no suggestion with it; the trace says why', async () => {
  buildOnce();
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'lineno="<redacted>")' }), {
    models: ['qwen2.5-coder:1.5b-base'],
  });
  const cache = tempDir();
  try {
    const repo = join(cache.path, 'repo');
    writeTree(repo, {
      'shop/service.py': 'class CheckoutService:\n    def __init__(self, cart, gateway):\n        self.cart = cart\n',
      'shop/main.py': 'from shop.service import CheckoutService\n\n\ndef main(cart):\n    service = CheckoutService(cart, \n',
    });
    const r = await runCli([
      'complete',
      repo,
      'shop/main.py:5',
      '--provider',
      'ollama',
      '--ollama-host',
      server.url,
      '--no-dense',
      '--index-dir',
      join(cache.path, 'index'),
      '--json',
    ]);
    assert.ok(r.code === 0 || r.code === 1, r.stderr);
    const result = JSON.parse(r.stdout) as {
      items: Array<{ text: string }>;
      trace: { stages: Array<{ stage: string; message?: string }>; empty?: string };
    };
    assert.ok(
      result.items.every((i) => !i.text.includes('<redacted>')),
      JSON.stringify(result.items),
    );
    assert.deepEqual(result.items, [], 'lineno= with its value cut leaves nothing to show');
    const post = result.trace.stages.find((s) => s.stage === 'postprocess');
    assert.match(`${post?.message ?? ''} ${result.trace.empty ?? ''}`, /redaction placeholder/);
  } finally {
    cache.cleanup();
    await server.close();
  }
});

void test('every credential of the v2 dev corpus in the file being completed is absent from every request the capturing server receives; canaries and look-alikes arrive', async () => {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: ['qwen2.5-coder:1.5b-base'] });
  try {
    const cases = loadSecretCorpusV2('dev');
    const score = await scoreV2ThroughBoundary(cases, redactSecrets, server, 'qwen2.5-coder:1.5b-base', new AbortController().signal);
    assert.equal(server.requests.length, cases.length, 'one request per case');
    assert.ok(score.secrets >= 60 && score.negatives >= 25, `${score.secrets} credentials, ${score.negatives} look-alikes`);
    assert.deepEqual(score.missed, [], 'credentials that reached the server');
    assert.deepEqual(score.overRedacted, [], 'canaries or look-alikes that did not arrive intact');
  } finally {
    await server.close();
  }
});

// The redaction boundary against the capturing test model server: every credential form of the
// corpus (test/fixtures/secrets/corpus.json) is redacted in what a completion client, the LLM
// reranker and a hypothetical-line model send, and its look-alikes arrive as written; the chosen
// rule set meets the bar (at least 95% of the credentials, at most 5% of the look-alikes).
import test from 'node:test';
import assert from 'node:assert/strict';
import { redactSecrets, REDACTED } from '../../../src/engine/prompt/redact';
import { redactingClient, redactingNextLine, redactPrompt } from '../../../src/engine/generate/redactBoundary';
import { OllamaClient } from '../../../src/engine/generate/OllamaClient';
import { ollamaReranker } from '../../../src/engine/rerank/LlmReranker';
import { startOllamaTestServer, type OllamaTestServer } from '../../helpers/ollamaServer';
import { arrived, corpusPrompt, loadSecretCorpus, scoreThroughBoundary } from '../../helpers/secretCorpus';

const corpus = loadSecretCorpus();
const never = new AbortController().signal;
const MODEL = 'qwen2.5-coder:1.5b-base';

void test('the corpus holds at least 40 credential forms (Python, Java, config text inside code) and 40 look-alikes', () => {
  const secrets = corpus.filter((c) => c.kind === 'secret');
  const lookalikes = corpus.filter((c) => c.kind === 'lookalike');
  assert.ok(secrets.length >= 40 && lookalikes.length >= 40, `${secrets.length} / ${lookalikes.length}`);
  assert.ok(
    secrets.some((c) => c.lang === 'java') &&
      secrets.some((c) => c.lang === 'python') &&
      secrets.some((c) => /inside a string|text block/.test(c.form)),
  );
  for (const c of corpus) assert.ok(c.code.includes(c.value), c.id);
});

// Each case of the corpus and of the held-out set (test/fixtures/secrets/heldout.json).
for (const c of [...corpus, ...loadSecretCorpus('heldout')]) {
  void test(`${c.kind === 'secret' ? 'redacted' : 'kept'}: ${c.form} (${c.lang}, ${c.id})`, async () => {
    const { text } = await redactSecrets(c.code);
    if (c.kind === 'secret') {
      assert.ok(!text.includes(c.value), `still present in ${JSON.stringify(text)}`);
      assert.ok(text.includes(REDACTED));
    } else {
      assert.ok(text.includes(c.value), `changed: ${JSON.stringify(text)}`);
    }
  });
}

async function withServer(run: (server: OllamaTestServer) => Promise<void>): Promise<void> {
  const server = await startOllamaTestServer(
    (prompt) => Promise.resolve({ text: /<answer>|\[A\]/.test(prompt) ? '<answer>[A]</answer>' : 'x' }),
    { models: [MODEL, 'qwen3:8b'] },
  );
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

void test('through the boundary to the capturing server, the chosen rule set redacts at least 95% of the credentials and at most 5% of the look-alikes', async () => {
  await withServer(async (server) => {
    const score = await scoreThroughBoundary(corpus, redactSecrets, server, MODEL, never);
    assert.ok(score.recall >= 0.95, `recall ${score.recall.toFixed(3)}; missed ${score.missed.join(', ')}`);
    assert.ok(score.falsePositiveRate <= 0.05, `false positives ${score.falsePositiveRate.toFixed(3)}: ${score.overRedacted.join(', ')}`);
  });
});

void test('the LLM reranker sends no credential of its query or windows; a hypothetical-line prompt is redacted the same way', async () => {
  const secrets = corpus.filter((c) => c.kind === 'secret');
  await withServer(async (server) => {
    const reranker = ollamaReranker({ host: server.url, model: 'qwen3:8b', timeoutMs: 10_000 });
    for (let i = 0; i + 1 < secrets.length; i += 2) {
      const [a, b] = [secrets[i]!, secrets[i + 1]!];
      await reranker.pick(
        { path: `app.${a.lang === 'python' ? 'py' : 'java'}`, text: a.code },
        [
          { id: 'a', text: corpusPrompt(a) },
          { id: 'b', text: b.code },
        ],
        never,
      );
    }
    const chats = server.requests.filter((q) => q.path === '/api/chat');
    assert.equal(chats.length, Math.floor(secrets.length / 2));
    const sent = JSON.stringify(chats.map((q) => q.body));
    const leaked = secrets
      .slice(0, 2 * chats.length)
      .filter((c) => arrived(sent, c.value))
      .map((c) => c.id);
    assert.ok(leaked.length <= Math.floor(0.05 * secrets.length), `sent to the reranker: ${leaked.join(', ')}`);

    // The hypothetical line (ProCC) asked of a model server through the same boundary.
    const client = new OllamaClient({ host: server.url, model: MODEL, family: 'plain', timeoutMs: 10_000 });
    const nextLine = redactingNextLine((prompt, maxNewTokens, signal) =>
      client.generate({ prompt, maxNewTokens, stop: ['\n'] }, signal).then((r) => r.text),
    );
    const before = server.requests.length;
    for (const c of secrets.slice(0, 11)) await nextLine(c.code, 8, never);
    const lineSent = JSON.stringify(server.requests.slice(before).map((q) => q.body));
    assert.deepEqual(
      secrets
        .slice(0, 11)
        .filter((c) => arrived(lineSent, c.value))
        .map((c) => c.id),
      [],
    );
  });
});

void test("the wrapped client keeps the model's name, family, token counting and context size; the same client is wrapped once", async () => {
  await withServer(async (server) => {
    const inner = new OllamaClient({ host: server.url, model: MODEL, timeoutMs: 10_000 });
    const wrapped = redactingClient(inner);
    assert.equal(redactingClient(inner), wrapped);
    assert.equal(wrapped.model, inner.model);
    assert.equal(wrapped.family, inner.family);
    assert.equal(wrapped.backend, 'ollama');
    assert.equal(wrapped.endpoint, inner.endpoint);
    const r = await wrapped.generate({ prompt: 'API_TOKEN = "tk-3f9a1c77e2b84d10"\nx = ', maxNewTokens: 2, stop: [] }, never);
    assert.equal(r.text, 'x');
    assert.ok(!JSON.stringify(server.requests.at(-1)?.body).includes('tk-3f9a1c77e2b84d10'));
  });
});

void test('a prompt the boundary redacted is sent without a second pass; a result it did not make is redacted again', async () => {
  const key = 'AKIAZ7Q3LK2M9XWV4B8N';
  const prompt = `aws_access_key_id = "${key}"\nx = `;
  let passes = 0;
  const counting = async (text: string) => {
    passes++;
    return redactSecrets(text);
  };
  const server = await startOllamaTestServer(() => Promise.resolve({ text: '1' }), { models: [MODEL] });
  try {
    const client = redactingClient(new OllamaClient({ host: server.url, model: MODEL, family: 'plain', timeoutMs: 5000 }), counting);
    const made = await redactPrompt(prompt, counting);
    assert.equal(passes, 1);
    assert.ok(!made.text.includes(key));
    await client.generate({ prompt: made.text, redacted: made, maxNewTokens: 4, stop: [] }, never);
    assert.equal(passes, 1, 'the boundary sent its own result as it was');
    const sent = (): string => JSON.stringify(server.requests.map((r) => r.body));
    assert.equal(server.requests.length, 1);
    assert.ok(!arrived(sent(), key));
    // A result that claims to be redacted but is not the boundary's own (or does not match the prompt) goes through the rules.
    await client.generate({ prompt, redacted: { text: prompt, count: 0 }, maxNewTokens: 4, stop: [] }, never);
    await client.generate({ prompt, redacted: made, maxNewTokens: 4, stop: [] }, never);
    assert.equal(passes, 3);
    assert.equal(server.requests.length, 3);
    assert.ok(!arrived(sent(), key), 'no forged result lets the key out');
  } finally {
    await server.close();
  }
});

// The chosen tokens' log-probabilities reach the show gate from every client: the embedded model
// reports its own, and the Ollama and OpenAI-compatible clients parse what the test model server
// (answered by the same embedded model) returns, through the redaction boundary.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { embeddedModelGenerate, startOllamaTestServer, type OllamaTestServer } from '../../helpers/ollamaServer';
import { repoRoot } from '../../helpers/paths';
import { ModelRegistry, type CausalLM } from '../../../src/engine/models';
import { OllamaClient } from '../../../src/engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../../../src/engine/generate/OpenAICompatibleClient';
import { EmbeddedClient } from '../../../src/engine/generate/EmbeddedClient';
import { redactingClient } from '../../../src/engine/generate/redactBoundary';
import { openAiTokenLogprobs, tokenLogprobsOf } from '../../../src/engine/generate/logprobs';
import { embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';

const MODEL = 'coderag-lm:test';
const PROMPT = 'import os\n\n\ndef read_config(path):\n    with open(path) as f:\n        return ';

function rawPrompt(prompt: string): string {
  return /^<\|im_start\|>user\n([\s\S]*)<\|im_end\|>\n<\|im_start\|>assistant\n$/.exec(prompt)?.[1] ?? prompt;
}

void describe('token log-probabilities', () => {
  let lm: CausalLM;
  let server: OllamaTestServer;
  const signal = new AbortController().signal;

  before(async () => {
    lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
    const generate = embeddedModelGenerate(lm);
    // The server renders /api/generate's prompt as a chat; the model sees the raw prompt.
    server = await startOllamaTestServer((prompt, opts, s) => generate(rawPrompt(prompt), opts, s), { models: [MODEL] });
  });
  after(async () => {
    await server?.close();
  });

  void test('the embedded client reports each generated token with its log-probability; the tokens spell the answer', async () => {
    const client = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)), loopGuard: false, copyPrior: false });
    const result = await client.generate({ prompt: PROMPT, maxNewTokens: 10, stop: [] }, signal);
    assert.ok(result.logprobs && result.logprobs.length > 0, 'log-probabilities reported');
    assert.ok(result.text.length > 0);
    assert.ok(
      result.logprobs
        .map((t) => t.token)
        .join('')
        .startsWith(result.text),
      'the tokens spell the answer',
    );
    for (const t of result.logprobs) assert.ok(t.logprob <= 0 && Number.isFinite(t.logprob), `${t.token}: ${t.logprob}`);
  });

  void test("the Ollama and OpenAI-compatible clients parse the server's log-probabilities, through the redaction boundary", async () => {
    const embedded = await new EmbeddedClient({
      load: () => Promise.resolve(embeddedLMOf(lm)),
      loopGuard: false,
      copyPrior: false,
    }).generate({ prompt: PROMPT, maxNewTokens: 8, stop: [] }, signal);
    for (const [name, client] of [
      ['ollama', new OllamaClient({ host: server.url, model: MODEL, timeoutMs: 30_000 })],
      ['openai', new OpenAICompatibleClient({ baseUrl: server.url, model: MODEL, timeoutMs: 30_000 })],
    ] as const) {
      const result = await redactingClient(client).generate({ prompt: PROMPT, maxNewTokens: 8, stop: [] }, signal);
      assert.equal(result.text, embedded.text, name);
      assert.ok(result.logprobs && result.logprobs.length > 0, `${name}: log-probabilities parsed`);
      assert.equal(result.logprobs.map((t) => t.token).join(''), result.text, `${name}: the tokens spell the answer`);
      // The same model scores the same tokens: the server's numbers match the embedded client's.
      for (const [i, t] of result.logprobs.entries())
        assert.ok(Math.abs(t.logprob - embedded.logprobs![i]!.logprob) < 1e-3, `${name} token ${i}`);
    }
    const ollamaRequest = server.requests.find((r) => r.path === '/api/generate');
    assert.equal((ollamaRequest?.body as { logprobs?: unknown }).logprobs, true, 'Ollama is asked for them');
    const openAiRequest = server.requests.find((r) => r.path === '/v1/completions');
    assert.equal((openAiRequest?.body as { logprobs?: unknown }).logprobs, 1, 'the OpenAI-compatible server is asked for them');
  });

  void test('what a server sends is checked: entries without a string token or a finite log-probability at most 0 are dropped', () => {
    assert.deepEqual(
      tokenLogprobsOf([
        { token: 'a', logprob: -0.5 },
        { token: 'b', logprob: 'x' },
        { token: 3, logprob: -1 },
        { token: 'c', logprob: 2 },
        null,
      ]),
      [{ token: 'a', logprob: -0.5 }],
    );
    assert.deepEqual(openAiTokenLogprobs({ tokens: ['x', 'y'], token_logprobs: [-1, null] }), [{ token: 'x', logprob: -1 }]);
    assert.equal(openAiTokenLogprobs(null), undefined);
    assert.equal(openAiTokenLogprobs({ tokens: 'x', token_logprobs: [] }), undefined);
  });
});

// The product's model clients against a real inference engine: llama.cpp (bench/engine, installed on
// first use) serving the shipped LM exported to GGUF, over the Ollama, OpenAI-compatible and
// llama.cpp APIs; its answers against the embedded onnxruntime path's for the same prompts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/paths';
import { ModelRegistry, type CausalLM } from '../../../src/engine/models';
import { OllamaClient } from '../../../src/engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../../../src/engine/generate/OpenAICompatibleClient';
import type { ModelClient } from '../../../src/engine/generate/types';
import { ensureEngine } from '../../../bench/engine/prepare';
import { startEngineServer, type EngineServer } from '../../../bench/engine/server';

const MODEL = 'coderag-lm:test';
const PROMPTS = [
  'import os\n\n\ndef read_config(path):\n    with open(path) as f:\n        return ',
  'public class Main {\n    public static void main(String[] args) {\n        System.out.',
  'class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.items.',
];

void describe('the real engine (llama.cpp) serving the shipped LM', () => {
  let lm: CausalLM;
  let engine: EngineServer;
  const signal = new AbortController().signal;

  before(async () => {
    // Installs bench/engine and exports the GGUF on a fresh clone; fails (never skips) when it cannot.
    const gguf = await ensureEngine();
    engine = await startEngineServer({ modelPath: gguf, threads: 1, contextSize: 512, modelNames: [MODEL] });
    lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 }).causalLM(undefined, signal);
  });
  after(async () => {
    await engine?.close();
    await lm?.dispose();
  });

  const clients = (): Array<[string, ModelClient]> => [
    ['ollama', new OllamaClient({ host: engine.url, model: MODEL, timeoutMs: 20_000 })],
    ['openai', new OpenAICompatibleClient({ baseUrl: engine.url, model: MODEL, timeoutMs: 20_000 })],
  ];

  void test("each client gets the embedded model's own greedy continuation, with its log-probabilities", async () => {
    for (const prompt of PROMPTS) {
      const logprobs: number[] = [];
      const expected = await lm.generate(prompt, { maxNewTokens: 12, onToken: (_t, lp) => logprobs.push(lp) }, signal);
      for (const [name, client] of clients()) {
        assert.equal((await client.check?.(signal))?.kind, undefined, `${name}: the start-up check finds the model`);
        const result = await client.generate({ prompt, maxNewTokens: 12, stop: [] }, signal);
        assert.equal(result.text, expected, `${name}: ${JSON.stringify(prompt.slice(-30))}`);
        assert.equal(result.tokens, 12, name);
        assert.equal(result.stoppedBy, 'length', name);
        assert.equal(result.logprobs?.length, logprobs.length, name);
        // bench/engine/README.md "Parity": llama.cpp's tanh GELU moves log-probabilities by a few hundredths at most.
        result.logprobs!.forEach((t, i) =>
          assert.ok(Math.abs(t.logprob - logprobs[i]!) < 0.05, `${name} token ${i}: ${t.logprob} vs ${logprobs[i]}`),
        );
      }
    }
  });

  void test('a stop sequence ends the answer before it, as on a real server', async () => {
    const prompt = 'def main():\n    x = 1\n    y = ';
    const expected = await lm.generate(prompt, { maxNewTokens: 24, stop: ['\n'] }, signal);
    assert.ok(!expected.includes('\n') && (await lm.generate(prompt, { maxNewTokens: 24 }, signal)).startsWith(`${expected}\n`));
    for (const [name, client] of clients()) {
      const result = await client.generate({ prompt, maxNewTokens: 24, stop: ['\n'] }, signal);
      assert.equal(result.text, expected, name);
      assert.equal(result.stoppedBy, 'stop', name);
    }
  });

  void test("the OpenAI-compatible client finds llama.cpp's grammar through /props and the answer finishes a member name", async () => {
    const prompt = 'import sys\n\n\ndef main():\n    sys.';
    const client = new OpenAICompatibleClient({ baseUrl: engine.url, model: MODEL, timeoutMs: 20_000 });
    const free = await client.generate({ prompt, maxNewTokens: 6, stop: [] }, signal);
    const names = ['setrecursionlimit', 'getsizeof'].filter((n) => !free.text.startsWith(n));
    const result = await client.generate({ prompt, maxNewTokens: 6, stop: [], memberChoice: { names, partial: '' } }, signal);
    assert.equal(result.serverConstraint, 'grammar');
    assert.ok(
      names.some((n) => result.text.startsWith(n) || n.startsWith(result.text)),
      `${JSON.stringify(result.text)} (unconstrained: ${JSON.stringify(free.text)})`,
    );
  });

  void test("a second request sharing the prompt's start evaluates only the new tokens, and answers as from scratch", async () => {
    const base =
      'import json\nimport os\n\n\ndef load(path):\n    """Read a JSON file."""\n    with open(path) as f:\n        data = json.load(f)\n';
    const client = new OllamaClient({ host: engine.url, model: MODEL, timeoutMs: 20_000 });
    await client.generate({ prompt: `${base}    return `, maxNewTokens: 4, stop: [] }, signal);
    const prompt = `${base}    if not data:\n        return `;
    const result = await client.generate({ prompt, maxNewTokens: 6, stop: [] }, signal);
    const stat = engine.stats().at(-1)!;
    assert.equal(stat.endpoint, '/api/generate');
    assert.equal(stat.promptTokens, engine.tokenize(prompt).length);
    assert.ok(stat.reusedTokens >= engine.tokenize(base).length - 1, `reused ${stat.reusedTokens} of ${stat.promptTokens}`);
    assert.equal(stat.evaluatedTokens, stat.promptTokens - stat.reusedTokens);
    assert.ok(stat.evaluatedTokens < stat.promptTokens);
    assert.equal(stat.generatedTokens, 6);
    assert.equal(result.text, await lm.generate(prompt, { maxNewTokens: 6 }, signal));
  });

  void test("Ollama's answer reports the evaluated prompt tokens and durations in nanoseconds", async () => {
    const prompt = `${PROMPTS[1]!}println(`;
    const post = async (): Promise<Record<string, number>> => {
      const res = await fetch(`${engine.url}/api/generate`, {
        method: 'POST',
        body: JSON.stringify({ model: MODEL, prompt, raw: true, stream: false, options: { num_predict: 3, temperature: 0 } }),
      });
      return (await res.json()) as Record<string, number>;
    };
    const first = await post();
    const second = await post();
    assert.equal(second.eval_count, 3);
    // The whole prompt is cached: only its last token is evaluated again (its logits start the answer).
    assert.equal(second.prompt_eval_count, 1);
    assert.ok(first.prompt_eval_count! >= second.prompt_eval_count);
    for (const key of ['total_duration', 'prompt_eval_duration', 'eval_duration'])
      assert.ok(second[key]! > 1000 && second[key]! < 60e9, `${key} ${second[key]} ns`);
  });

  void test("each client's warm-up measures how fast the server reads a prompt, from the server's own figures", async () => {
    // About 300 of the shipped LM's tokens, new to the engine's cache (a reading under 256 tokens is not counted).
    const prompt = Array.from({ length: 24 }, (_, i) => `def handler_${i}(request, item_${i}):\n    return item_${i}\n`).join('\n');
    assert.ok(engine.tokenize(prompt).length >= 256 && engine.tokenize(prompt).length < 500);
    const rateOf = (client: ModelClient): number | undefined => client.readRate;
    for (const [name, client] of clients()) {
      assert.equal(rateOf(client), undefined, `${name}: unknown before a warm-up`);
      // Each client's prompt differs at its start, so the engine reads it whole.
      await client.warm!(`# ${name}\n${prompt}`, signal);
      const stat = engine.stats().at(-1)!;
      assert.ok(stat.evaluatedTokens >= 256, `${name}: ${stat.evaluatedTokens} tokens read`);
      const rate = rateOf(client);
      assert.ok(rate !== undefined && Number.isFinite(rate), `${name}: measured`);
      // The server's reading time is within the request's, so its rate is at least the request's.
      assert.ok(rate >= (stat.evaluatedTokens * 1000) / stat.totalMs, `${name}: ${rate.toFixed(0)} tokens/s`);
      // A warm-up that reads almost nothing (all cached) leaves the figure as it was.
      await client.warm!(`# ${name}\n${prompt}`, signal);
      assert.equal(rateOf(client), rate, `${name}: a cached read is not a reading`);
    }
  });

  void test("llama.cpp's /completion with n_predict 0 evaluates and caches the prompt for the next request", async () => {
    const warm = 'package org.example;\n\nimport java.util.ArrayList;\nimport java.util.List;\n\npublic final class Registry {\n';
    const post = async (body: unknown): Promise<{ content: string; tokens_cached: number; timings: Record<string, number> }> => {
      const res = await fetch(`${engine.url}/completion`, { method: 'POST', body: JSON.stringify(body) });
      assert.equal(res.status, 200);
      return (await res.json()) as { content: string; tokens_cached: number; timings: Record<string, number> };
    };
    const n = engine.tokenize(warm).length;
    const filled = await post({ prompt: warm, n_predict: 0, cache_prompt: true });
    assert.equal(filled.content, '');
    assert.equal(filled.tokens_cached, n);
    assert.equal(filled.timings.predicted_n, 0);
    const prompt = `${warm}    private final List<String> names = new `;
    const answer = await post({ prompt, n_predict: 5, temperature: 0, cache_prompt: true });
    assert.equal(answer.timings.predicted_n, 5);
    assert.ok(answer.timings.prompt_n! <= engine.tokenize(prompt).length - n + 1, `evaluated ${answer.timings.prompt_n}`);
    assert.equal(answer.content, await lm.generate(prompt, { maxNewTokens: 5 }, signal));
    const stat = engine.stats().at(-1)!;
    assert.equal(stat.endpoint, '/completion');
    assert.ok(stat.reusedTokens >= n - 1);
  });

  void test('a client that hangs up stops its generation; the next request is served', async () => {
    const controller = new AbortController();
    const res = await fetch(`${engine.url}/api/generate`, {
      method: 'POST',
      body: JSON.stringify({ model: MODEL, prompt: PROMPTS[2], raw: true, options: { num_predict: 400, temperature: 0.9 } }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    const client = new OllamaClient({ host: engine.url, model: MODEL, timeoutMs: 20_000 });
    const result = await client.generate({ prompt: PROMPTS[0]!, maxNewTokens: 3, stop: [] }, signal);
    assert.equal(result.tokens, 3);
    const [cut] = engine.stats().slice(-2);
    assert.ok(cut!.generatedTokens < 400, `the abandoned request generated ${cut!.generatedTokens} tokens`);
  });
});

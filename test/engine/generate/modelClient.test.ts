// Model clients against an Ollama-compatible server on 127.0.0.1 answered by the embedded model:
// the answers, the request parameters, the start-up check, pull, and every typed failure.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startOllamaTestServer, type OllamaTestServer } from '../../helpers/ollamaServer';
import { repoRoot } from '../../helpers/paths';
import { ModelRegistry, type CausalLM } from '../../../src/engine/models';
import { OllamaClient } from '../../../src/engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../../../src/engine/generate/OpenAICompatibleClient';
import { EmbeddedClient, type EmbeddedLM } from '../../../src/engine/generate/EmbeddedClient';
import { loopContinuations } from '../../../src/engine/generate/loopGuard';
import { isModelClientError, type ModelClient, type ModelErrorKind } from '../../../src/engine/generate/types';
import { LatestWinsSlot } from '../../../src/engine/generate/modelSlot';
import { embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';
import { isCancellationError } from '../../../src/engine/util/errors';

const MODEL = 'coderag-lm:test';
const PROMPT = 'import os\n\n\ndef read_config(path):\n    with open(path) as f:\n        return ';
/** A prompt any small greedy model continues in a cycle. */
const LOOPING = `ZEROS = [${'0, '.repeat(30)}`;

function rawPrompt(prompt: string): string {
  return /^<\|im_start\|>user\n([\s\S]*)<\|im_end\|>\n<\|im_start\|>assistant\n$/.exec(prompt)?.[1] ?? prompt;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function expectKind(p: Promise<unknown>, kind: ModelErrorKind): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(isModelClientError(e), `a ModelClientError, got ${String(e)}`);
    assert.equal(e.kind, kind, e.message);
    return true;
  });
}

void describe('model clients', () => {
  let lm: CausalLM;
  let server: OllamaTestServer;
  const signal = new AbortController().signal;

  before(async () => {
    lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
    server = await startOllamaTestServer(
      async (prompt, opts, s) => ({ text: await lm.generate(rawPrompt(prompt), { maxNewTokens: opts.maxNewTokens, stop: opts.stop }, s) }),
      { models: [MODEL] },
    );
  });
  after(async () => {
    await server?.close();
  });

  const clients = (timeoutMs = 5000): Array<[string, ModelClient]> => [
    ['ollama', new OllamaClient({ host: server.url, model: MODEL, timeoutMs, keepAlive: '12m' })],
    ['openai', new OpenAICompatibleClient({ baseUrl: server.url, model: MODEL, timeoutMs })],
  ];

  void test("each client returns the embedded model's own greedy continuation, cut at a stop sequence", async () => {
    const expected = await lm.generate(PROMPT, { maxNewTokens: 16 }, new AbortController().signal);
    for (const [name, client] of clients()) {
      server.setFault(undefined);
      const result = await client.generate({ prompt: PROMPT, maxNewTokens: 16, stop: [] }, signal);
      assert.equal(result.text, expected, name);
      assert.equal(result.model, MODEL);
      const firstChar = expected.trim()[0];
      if (firstChar) {
        const cut = await client.generate({ prompt: PROMPT, maxNewTokens: 16, stop: [firstChar] }, signal);
        assert.equal(cut.text, expected.slice(0, expected.indexOf(firstChar)), `${name} with a stop sequence`);
      }
    }
  });

  void test('the Ollama client sends a raw streaming request with num_predict, stop, temperature 0 and keep_alive', async () => {
    const client = new OllamaClient({ host: server.url, model: MODEL, keepAlive: '12m' });
    const before = server.requests.length;
    await client.generate({ prompt: PROMPT, maxNewTokens: 7, stop: ['\n\n'] }, signal);
    const req = server.requests.slice(before).find((r) => r.path === '/api/generate');
    assert.ok(req);
    const body = req.body as {
      raw?: boolean;
      stream?: boolean;
      keep_alive?: string;
      prompt?: string;
      options?: { num_ctx?: number; num_predict?: number; stop?: string[]; temperature?: number };
    };
    assert.equal(body.raw, true);
    assert.equal(body.stream, true);
    assert.equal(body.keep_alive, '12m');
    assert.equal(body.prompt, PROMPT);
    assert.deepEqual(
      body.options,
      { num_ctx: 8192, num_predict: 7, temperature: 0, stop: ['\n\n'] },
      'a fixed context window, so Ollama neither drops the prompt head nor reloads the model',
    );
  });

  void test('the Ollama client closes the stream once the request says the answer is complete', async () => {
    // A long answer streams in many parts; a single line is complete after the first.
    const long = `a = 1\n${'b = 2\n'.repeat(3000)}`;
    const lines = await startOllamaTestServer(() => Promise.resolve({ text: long }), { models: [MODEL] });
    try {
      const client = new OllamaClient({ host: lines.url, model: MODEL, timeoutMs: 5000 });
      const whole = await client.generate({ prompt: PROMPT, maxNewTokens: 16, stop: [] }, signal);
      assert.equal(whole.text, long);
      const early = await client.generate({ prompt: PROMPT, maxNewTokens: 16, stop: [], until: (t) => t.includes('\n') }, signal);
      assert.equal(early.stoppedBy, 'stop');
      assert.ok(early.text.startsWith('a = 1\n') && early.text.length < long.length, `${early.text.length} of ${long.length} characters`);
    } finally {
      await lines.close();
    }
  });

  void test('start-up check: a pulled model passes, a missing one is reported, pull reports progress and fixes it', async () => {
    assert.equal(await new OllamaClient({ host: server.url, model: MODEL }).check(signal), undefined);
    const missing = new OllamaClient({ host: server.url, model: 'qwen2.5-coder:1.5b-base' });
    const problem = await missing.check(signal);
    assert.equal(problem?.kind, 'modelMissing');
    assert.match(problem?.message ?? '', /not pulled/);
    const progress: string[] = [];
    await missing.pull((p) => progress.push(p.status), signal);
    assert.ok(progress.includes('success'), progress.join(','));
    assert.equal(await missing.check(signal), undefined);
    server.models.delete('qwen2.5-coder:1.5b-base');
    assert.equal(await new OpenAICompatibleClient({ baseUrl: server.url, model: MODEL }).check(signal), undefined);
  });

  for (const [fault, kind] of [
    [{ kind: 'http500' }, 'httpStatus'],
    [{ kind: 'malformedJson' }, 'malformed'],
    [{ kind: 'notPulled' }, 'modelMissing'],
  ] as const) {
    void test(`a server fault ${fault.kind} becomes a ${kind} error`, async () => {
      server.setFault(fault);
      try {
        for (const [name, client] of clients()) {
          await expectKind(client.generate({ prompt: PROMPT, maxNewTokens: 4, stop: [] }, signal), kind).catch((e: unknown) =>
            assert.fail(`${name}: ${String(e)}`),
          );
        }
      } finally {
        server.setFault(undefined);
      }
    });
  }

  void test("a 30 s stall ends at the client's time limit as a timeout; cancellation is not an error", async () => {
    server.setFault({ kind: 'stall', seconds: 30 });
    try {
      for (const [, client] of clients(400)) {
        const t0 = performance.now();
        await expectKind(client.generate({ prompt: PROMPT, maxNewTokens: 4, stop: [] }, signal), 'timeout');
        assert.ok(performance.now() - t0 < 2000);
      }
      for (const [, client] of clients(10_000)) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 100);
        const t0 = performance.now();
        await assert.rejects(client.generate({ prompt: PROMPT, maxNewTokens: 4, stop: [] }, controller.signal), (e: unknown) =>
          isCancellationError(e),
        );
        assert.ok(performance.now() - t0 < 2000);
      }
    } finally {
      server.setFault(undefined);
    }
  });

  void test('connection refused is `unreachable`, for the check too', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    await expectKind(
      new OllamaClient({ host: url, model: MODEL }).generate({ prompt: PROMPT, maxNewTokens: 4, stop: [] }, signal),
      'unreachable',
    );
    await expectKind(
      new OpenAICompatibleClient({ baseUrl: url, model: MODEL }).generate({ prompt: PROMPT, maxNewTokens: 4, stop: [] }, signal),
      'unreachable',
    );
    assert.equal((await new OllamaClient({ host: url, model: MODEL }).check(signal))?.kind, 'unreachable');
  });

  void test("the embedded client generates in process and counts tokens with the model's tokenizer", async () => {
    // The loop guard and the copy prior off: the client's greedy decoding is the model's own (each has its own test).
    const client = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)), loopGuard: false, copyPrior: false });
    await client.prepare(new AbortController().signal);
    assert.equal(client.contextTokens, lm.maxPositions);
    const result = await client.generate({ prompt: PROMPT, maxNewTokens: 12, stop: [] }, signal);
    assert.equal(result.text, await lm.generate(PROMPT, { maxNewTokens: 12 }, new AbortController().signal));
    // Counted line by line (memoised): never under the exact count, so a prompt never overflows the context.
    const text = `${PROMPT}x = 1\n    y = read_config("a.toml")\n`.repeat(8);
    const exact = lm.encode(text).length;
    const counted = client.countTokens(text);
    assert.ok(counted >= exact && counted <= exact * 1.2 + 2, `${counted} vs ${exact}`);
    const broken = new EmbeddedClient({ load: () => Promise.reject(new Error('no model')) });
    await expectKind(broken.generate({ prompt: PROMPT, maxNewTokens: 4, stop: [] }, signal), 'modelMissing');
  });

  void test('the embedded client does not let the model end while holdEnd says the answer is unfinished', async () => {
    const client = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
    // The shipped model ends a finished script at once.
    const ended = 'if __name__ == "__main__":\n    main()\n';
    const free = await client.generate({ prompt: ended, maxNewTokens: 6, stop: [] }, signal);
    assert.deepEqual([free.text, free.stoppedBy], ['', 'eos']);
    const seen: string[] = [];
    const held = await client.generate({ prompt: ended, maxNewTokens: 6, stop: [], holdEnd: (g) => (seen.push(g), g.length < 4) }, signal);
    assert.ok(held.text.length >= 4, JSON.stringify(held));
    assert.equal(seen[0], '', 'asked before the first token');
  });

  void test('the embedded client does not let the model end, break or close a blank line while holdLine says it is blank', async () => {
    const client = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
    // At the start of a new line after a finished script, the shipped model ends at once.
    const ended = 'if __name__ == "__main__":\n    main()\n';
    const free = await client.generate({ prompt: ended, maxNewTokens: 8, stop: [] }, signal);
    assert.equal(free.text.trim(), '', JSON.stringify(free));
    const held = await client.generate({ prompt: ended, maxNewTokens: 8, stop: [], holdLine: (g) => g.trim() === '' }, signal);
    const firstLine = held.text.split('\n')[0] ?? '';
    assert.notEqual(firstLine.trim(), '', `the first line has the statement: ${JSON.stringify(held.text)}`);
    // Nor may it begin the line with a closing bracket (the line's postprocess would cut it to nothing).
    const javaEnd = 'public class Box {\n    private int size;\n\n    public int getSize() {\n        return size;\n    }\n';
    const closes = await client.generate({ prompt: javaEnd, maxNewTokens: 8, stop: [] }, signal);
    assert.match(closes.text, /^\s*\}/, `the model closes the class: ${JSON.stringify(closes.text)}`);
    const opened = await client.generate({ prompt: javaEnd, maxNewTokens: 8, stop: [], holdLine: (g) => g.trim() === '' }, signal);
    const javaLine = opened.text.split('\n')[0] ?? '';
    assert.ok(javaLine.trim() !== '' && !/^\s*[)\]}]/.test(javaLine), JSON.stringify(opened.text));
  });

  void test("the embedded client's loop guard keeps the model from writing the same cycle again and again", async () => {
    // The ids the model generated, as the filter last saw them plus the final pick (decoded back).
    const run = async (loopGuard: boolean): Promise<{ text: string; ids: number[] }> => {
      const inner = embeddedLMOf(lm);
      let ids: readonly number[] = [];
      const spied: EmbeddedLM = {
        ...inner,
        generate: (prompt, options, s) =>
          inner.generate(
            prompt,
            { ...options, logitsFilter: (g, logits, seen) => ((ids = seen), options.logitsFilter?.(g, logits, seen)) },
            s,
          ),
      };
      const client = new EmbeddedClient({
        load: () => Promise.resolve(spied),
        copyPrior: false,
        ...(loopGuard ? {} : { loopGuard: false as const }),
      });
      const result = await client.generate({ prompt: LOOPING, maxNewTokens: 40, stop: [] }, signal);
      return { text: result.text, ids: [...ids] };
    };
    const loops = (ids: number[]): number => ids.filter((id, k) => loopContinuations(ids.slice(0, k)).includes(id)).length;
    const off = await run(false);
    assert.ok(loops(off.ids) > 0, `without the guard the model cycles: ${JSON.stringify(off.text)}`);
    const on = await run(true);
    assert.equal(loops(on.ids), 0, `with the guard no pick extends a cycle: ${JSON.stringify(on.text)}`);
    assert.notEqual(on.text, off.text);
    assert.ok(on.text.trim().length > 0);
  });

  void test("the embedded client's copy prior lets the model write again what its prompt says after the same words", async () => {
    // A repository name the model never saw, used once above; the cursor after `registry = ` again.
    const prompt =
      'def load(path):\n    registry = build_frobnicated_widget_registry(path, strict=True)\n    return registry\n\n\ndef reload(path):\n    registry = ';
    const complete = async (copyPrior: boolean): Promise<string> => {
      const client = new EmbeddedClient({
        load: () => Promise.resolve(embeddedLMOf(lm)),
        ...(copyPrior ? {} : { copyPrior: false as const }),
      });
      const result = await client.generate({ prompt, maxNewTokens: 32, stop: ['\n'] }, signal);
      // The result says what the prior did: nothing when it is off; votes that changed the model's choice when on.
      if (!copyPrior) assert.equal(result.copyPrior, undefined);
      else
        assert.ok(result.copyPrior && result.copyPrior.changed > 0 && result.copyPrior.longestMatch >= 9, JSON.stringify(result.copyPrior));
      return result.text;
    };
    const without = await complete(false);
    assert.ok(!without.startsWith('build_frobnicated_widget_registry('), `the model alone: ${JSON.stringify(without)}`);
    const withPrior = await complete(true);
    assert.ok(withPrior.startsWith('build_frobnicated_widget_registry(path'), `with the copy prior: ${JSON.stringify(withPrior)}`);
    // The same line only in the file above the prompt's window (GenerateRequest.copyFrom).
    const client = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
    const [above, window] = [prompt.slice(0, prompt.indexOf('\n\n\n')), prompt.slice(prompt.indexOf('\n\n\n') + 3)];
    const fromAbove = await client.generate({ prompt: window, copyFrom: above, maxNewTokens: 32, stop: ['\n'] }, signal);
    assert.ok(
      fromAbove.text.startsWith('build_frobnicated_widget_registry(path'),
      `copied from above the window: ${JSON.stringify(fromAbove.text)}`,
    );
  });

  void test('the model slot keeps one model call in flight: the newest request aborts the running one, overtaken waiters never run', async () => {
    const slot = new LatestWinsSlot();
    const client = new OllamaClient({ host: server.url, model: MODEL, timeoutMs: 10_000 });
    const started: number[] = [];
    const runs = Array.from({ length: 6 }, (_, i) =>
      slot.run((s) => {
        started.push(i);
        return client.generate({ prompt: PROMPT + ' '.repeat(i), maxNewTokens: 24, stop: [] }, s);
      }, signal),
    );
    const settled = await Promise.allSettled(runs);
    assert.equal(slot.maxInFlight, 1);
    assert.equal(settled.at(-1)?.status, 'fulfilled');
    for (const s of settled.slice(0, -1)) if (s.status === 'rejected') assert.ok(isCancellationError(s.reason));
    assert.ok(started.length < 6, `calls started: ${started.join(',')}`);
  });

  void test('a warm-up in the model slot is neither aborted nor overtaken by newer requests: they wait for it, then the newest runs', async () => {
    const slot = new LatestWinsSlot();
    const client = new OllamaClient({ host: server.url, model: MODEL, timeoutMs: 10_000 });
    const order: string[] = [];
    // A call already running when the warm-up arrives, as a keystroke's request is.
    const running = slot.run(
      (s) => client.generate({ prompt: PROMPT, maxNewTokens: 24, stop: [] }, s).finally(() => order.push('running')),
      signal,
    );
    const warm = slot.runPinned((s) => client.warm(PROMPT, s).then(() => order.push('warm-up')), signal);
    const later = [1, 2, 3].map((i) =>
      slot.run(
        (s) =>
          client.generate({ prompt: PROMPT + ' '.repeat(i), maxNewTokens: 4, stop: [] }, s).then((r) => (order.push(`request ${i}`), r)),
        signal,
      ),
    );
    const [first, warmed, ...rest] = await Promise.allSettled([running, warm, ...later]);
    assert.equal(first?.status, 'rejected', 'the running call is aborted by the warm-up, as by any newer call');
    assert.equal(warmed?.status, 'fulfilled', 'the warm-up ran to its end');
    assert.equal(rest.at(-1)?.status, 'fulfilled', 'the newest request ran after it');
    for (const r of rest.slice(0, -1)) assert.equal(r.status, 'rejected', 'older waiters were overtaken');
    assert.deepEqual(
      order.filter((o) => o !== 'running'),
      ['warm-up', 'request 3'],
    );
    assert.equal(slot.maxInFlight, 1);
  });
});

// The in-process llama.cpp engine on the shipped LM exported to GGUF (bench/engine makes it): what a
// prompt reads against the sequence's cache and the saved places, and that the logits path (where
// checking masks tokens) chooses as llama.cpp's own greedy sampling does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { ensureEngine } from '../../../bench/engine/prepare';
import { LlamaEngine } from '../../../src/engine/models/LlamaEngine';
import { tempDir } from '../../helpers/paths';

const signal = new AbortController().signal;
const PLACE_A = 'import os\n\n\ndef read_config(path):\n    with open(path) as f:\n        return f.read()\n'.repeat(12);
const PLACE_B =
  'class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.items.append(item)\n'.repeat(
    10,
  );

void describe('LlamaEngine (node-llama-cpp, shipped LM as GGUF)', () => {
  let engine: LlamaEngine;
  let states: { path: string; cleanup: () => void };
  before(async () => {
    states = tempDir('coderag-llama-states-');
    engine = new LlamaEngine({ modelPath: await ensureEngine(), threads: 1, contextTokens: 512, gpu: false, stateDir: states.path });
  });
  after(async () => {
    await engine.unload();
    states.cleanup();
  });

  void test('a keystroke reads only what changed; a return to a place it left loads the saved place', async () => {
    const a = await engine.warm(PLACE_A, signal);
    assert.equal(a.cached, 0);
    const typed = await engine.warm(`${PLACE_A}    x = 1`, signal);
    assert.ok(typed.evaluated <= 6, `a keystroke read ${typed.evaluated} tokens`);
    const b = await engine.warm(PLACE_B, signal);
    assert.ok(b.evaluated > 200, 'another place is read');
    assert.equal(engine.placeStats().places, 1, 'the place it left was saved');
    const back = await engine.warm(`${PLACE_A}    x = 1`, signal);
    assert.equal(back.restored, true);
    assert.equal(back.evaluated, 0, 'nothing to read again');
    assert.ok(readdirSync(states.path).some((f) => f.endsWith('.state')));
  });

  void test('a return read ahead in short pieces loads the saved place at the first piece, not after reading it again', async () => {
    const block = 'import json\n\n\ndef load(path):\n    return json.loads(open(path).read())\n'.repeat(6);
    const here = `${block}${PLACE_A}`;
    await engine.warm(here, signal);
    await engine.warm(`${block}${PLACE_B}`, signal);
    // The head of the place left, up to a line a few tokens past the block: less than RESTORE_GAIN more than the sequence holds.
    const piece = here.slice(0, here.indexOf('\n', block.length + 40) + 1);
    const first = await engine.warm(piece, signal);
    assert.equal(first.restored, true, 'the saved place was loaded for the first piece');
    // The piece's last token may be one the whole text merges with what follows it.
    assert.ok(first.evaluated <= 2, `the first piece read ${first.evaluated} tokens`);
    const whole = await engine.warm(here, signal);
    assert.ok(whole.evaluated <= 2, `the rest of the place read ${whole.evaluated} tokens, which its saved state held`);
  });

  void test('the logits path picks what llama.cpp picks, and a mask changes the choice', async () => {
    const prompt = 'def add(a, b):\n    return';
    const fast = await engine.generate(prompt, { maxNewTokens: 6 }, signal);
    const viaLogits = await engine.generate(prompt, { maxNewTokens: 6, logitsFilter: () => undefined }, signal);
    assert.equal(viaLogits.text, fast.text);
    fast.logprobs.forEach((t, i) => assert.ok(Math.abs(t.logprob - viaLogits.logprobs[i]!.logprob) < 1e-3, `token ${i}`));
    // Masking the first choice's token makes the second most likely one come first.
    const texts = await engine.tokenTexts();
    const firstToken = fast.logprobs[0]!.token;
    const banned = new Set(texts.flatMap((t, id) => (t === firstToken ? [id] : [])));
    const masked = await engine.generate(
      prompt,
      { maxNewTokens: 1, logitsFilter: (generated, logits) => void (generated === '' && banned.forEach((id) => (logits[id] = -Infinity))) },
      signal,
    );
    assert.notEqual(masked.logprobs[0]?.token, firstToken);
  });

  void test('steps the filter calls inactive are chosen by llama.cpp, without the filter; the choice is the same', async () => {
    const prompt = 'def add(a, b):\n    return';
    const fast = await engine.generate(prompt, { maxNewTokens: 6 }, signal);
    const texts = await engine.tokenTexts();
    const firstToken = fast.logprobs[0]!.token;
    const banned = texts.flatMap((t, id) => (t === firstToken ? [id] : []));
    let calls = 0;
    const ban = (generated: string, logits: Float32Array): void => {
      calls++;
      if (generated === '') for (const id of banned) logits[id] = -Infinity;
    };
    const everyStep = await engine.generate(prompt, { maxNewTokens: 6, logitsFilter: ban }, signal);
    const stepsEvery = calls;
    calls = 0;
    const firstOnly = await engine.generate(prompt, { maxNewTokens: 6, logitsFilter: ban, filterActive: (g) => g === '' }, signal);
    assert.equal(firstOnly.text, everyStep.text);
    assert.notEqual(firstOnly.logprobs[0]?.token, firstToken);
    assert.equal(calls, 1, `the filter ran on ${calls} of ${stepsEvery} steps`);
  });

  void test('a space before ?, !, . and , stays in token texts and generated text', async () => {
    // llama.cpp's whole-sequence detokenizer deletes it for GPT-2 vocabularies ("clean up tokenization spaces").
    const code = ' != x ? y : z, w .';
    const ids = await engine.tokenize(code);
    const texts = await engine.tokenTexts();
    assert.equal(ids.map((id) => texts[id]).join(''), code);
    let step = 0;
    const forced = await engine.generate(
      'x = a',
      {
        maxNewTokens: ids.length,
        logitsFilter: (_generated, logits) => {
          const want = ids[step++]!;
          logits.fill(-Infinity);
          logits[want] = 0;
        },
      },
      signal,
    );
    assert.equal(forced.text, code);
  });

  void test('unload frees the model; the next call loads it again', async () => {
    await engine.generate('x = ', { maxNewTokens: 1 }, signal);
    assert.equal(engine.isLoaded(), true);
    await engine.unload();
    assert.equal(engine.isLoaded(), false);
    assert.equal(engine.placeStats().places, 0);
    const again = await engine.generate('x = ', { maxNewTokens: 1 }, signal);
    assert.equal(again.stoppedBy === 'length' || again.stoppedBy === 'eos', true);
  });
});

// The local engine in its own process: the same answers as in this one (the shipped LM exported to
// GGUF), checking's mask applied here at each step, an unload that ends the process, and a broken
// file named as in this one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureEngine } from '../../../bench/engine/prepare';
import { LlamaEngine, LlamaModelError } from '../../../src/engine/models/LlamaEngine';
import { LlamaWorkerEngine, llamaWorkerEntry } from '../../../src/engine/models/LlamaWorkerEngine';
import { tempDir } from '../../helpers/paths';

const signal = new AbortController().signal;
const PROMPT = 'class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.';

void describe('LlamaWorkerEngine (llama.cpp in a child process)', () => {
  let gguf: string;
  let here: LlamaEngine;
  let there: LlamaWorkerEngine;
  before(async () => {
    gguf = await ensureEngine();
    const entry = llamaWorkerEntry();
    assert.ok(entry, 'the worker script is found');
    here = new LlamaEngine({ modelPath: gguf, threads: 1, contextTokens: 512, gpu: false });
    there = new LlamaWorkerEngine({ modelPath: gguf, threads: 1, contextTokens: 512, gpu: false }, entry);
  });
  after(async () => {
    await here.unload();
    await there.unload();
  });

  void test('the same greedy answer as in this process, and a mask applied here changes the first token', async () => {
    const a = await here.generate(PROMPT, { maxNewTokens: 8 }, signal);
    const b = await there.generate(PROMPT, { maxNewTokens: 8 }, signal);
    assert.equal(b.text, a.text);
    assert.equal((await there.info()).architecture, 'gpt2');
    const texts = await there.tokenTexts();
    const first = a.logprobs[0]!.token;
    const banned = texts.flatMap((t, id) => (t === first ? [id] : []));
    let steps = 0;
    const masked = await there.generate(
      PROMPT,
      {
        maxNewTokens: 3,
        logitsFilter: (generated, logits) => {
          steps++;
          if (generated === '') for (const id of banned) logits[id] = -Infinity;
        },
        until: (text) => text.length >= 2,
      },
      signal,
    );
    assert.ok(steps >= 1, 'the filter ran on this thread');
    assert.notEqual(masked.logprobs[0]?.token, first);
  });

  void test('unload ends the process; the next call starts it again', async () => {
    await there.generate('x = ', { maxNewTokens: 1 }, signal);
    assert.equal(there.isLoaded(), true);
    await there.unload();
    assert.equal(there.isLoaded(), false);
    const again = await there.generate('x = ', { maxNewTokens: 1 }, signal);
    assert.ok(['length', 'eos', 'stop'].includes(again.stoppedBy));
  });

  void test('a crash of the engine process fails the request with a model error; the next request starts it again', async () => {
    await there.generate('x = ', { maxNewTokens: 1 }, signal);
    const children = readdirSync('/proc').filter((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        return /^PPid:\s+(\d+)/m.exec(status)?.[1] === String(process.pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('llamaWorker');
      } catch {
        return false;
      }
    });
    assert.equal(children.length, 1, 'one engine process');
    const pending = there.generate('def f(x):\n    return', { maxNewTokens: 200 }, signal);
    process.kill(Number(children[0]), 'SIGKILL');
    await assert.rejects(pending, (e: unknown) => e instanceof LlamaModelError && /llama\.cpp process ended \(SIGKILL\)/.test(e.message));
    assert.equal(there.isLoaded(), false);
    const again = await there.generate('x = ', { maxNewTokens: 1 }, signal);
    assert.ok(['length', 'eos', 'stop'].includes(again.stoppedBy));
  });

  void test('a file that is not a GGUF is named from the process as a model error', async () => {
    const dir = tempDir('coderag-worker-bad-');
    try {
      const path = join(dir.path, 'notes.gguf');
      writeFileSync(path, 'not weights\n');
      const bad = new LlamaWorkerEngine({ modelPath: path, threads: 1, contextTokens: 512, gpu: false }, llamaWorkerEntry()!);
      await assert.rejects(bad.info(), (e: unknown) => e instanceof LlamaModelError && /not a readable GGUF file/.test(e.message));
      await bad.unload();
    } finally {
      dir.cleanup();
    }
  });
});

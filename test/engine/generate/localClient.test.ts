// The local provider's client over the real in-process engine (the shipped LM exported to GGUF): the
// idle unload waits for the calls in flight, and counts its period from the last one's end.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureEngine } from '../../../bench/engine/prepare';
import { LlamaEngine, type LlamaRead } from '../../../src/engine/models/LlamaEngine';
import { LocalClient } from '../../../src/engine/generate/LocalClient';

const signal = new AbortController().signal;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The real engine, its reads started late (as a request waits behind a long warm-up), its unloads counted. */
class SlowEngine extends LlamaEngine {
  unloads = 0;
  override async warm(prompt: string, s: AbortSignal): Promise<LlamaRead> {
    await sleep(400);
    return super.warm(prompt, s);
  }
  override async unload(): Promise<void> {
    this.unloads++;
    await super.unload();
  }
}

void describe('LocalClient', () => {
  let engine: SlowEngine | undefined;
  after(async () => {
    await engine?.unload();
  });

  void test('the model is not unloaded while a call waits longer than the idle period; it is once the period passes after it', async () => {
    engine = new SlowEngine({ modelPath: await ensureEngine(), threads: 1, contextTokens: 512, gpu: false });
    const client = new LocalClient(engine, { idleUnloadMs: 100 });
    await client.prepare(signal);
    assert.equal(engine.isLoaded(), true);
    await client.warm('def read_config(path):\n    return path\n', signal);
    assert.equal(engine.unloads, 0, 'unloaded while the warm-up was in flight');
    assert.equal(engine.isLoaded(), true);
    await sleep(600);
    assert.equal(engine.unloads, 1, 'unloaded once the idle period passed');
    assert.equal(engine.isLoaded(), false);
  });
});

// The prompt budget follows the model server: 2,048 tokens until it has read a prompt, then its
// context window, or 2,048 tokens again where it reads slowly (a laptop CPU), since a new place's first
// suggestion waits for that read.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { startLsp } from './lspHarness';
import { OllamaClient } from '../../src/engine/generate/OllamaClient';
import { resolveOptions } from '../../src/engine/pipeline/resolveOptions';
import { promptBudget } from '../../src/engine/pipeline/stages/model';

const MODEL = 'qwen2.5-coder:1.5b-base';

/**
 * The prompt budgets of two suggestions asked at one place, the second after the server read the first's head, and of one at
 * another place (another file) after that.
 */
async function budgetsAt(readRate: number): Promise<{ first?: number; second?: number; elsewhere?: number; warmUps: number }> {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'cart)' }), { models: [MODEL], readRate });
  const repo = copyFixture('pyshop');
  const lsp = await startLsp(repo.path, {
    debounceMs: 0,
    model: { provider: 'ollama', timeoutMs: 20_000 },
    ollama: { host: server.url, completionModel: MODEL },
    experimental: { cache: { size: 0 } },
  });
  try {
    await lsp.waitForStatus((s) => s.state === 'ready' && s.folders.every((f) => f.state === 'ready'), 120_000);
    const mainPy = join(repo.path, 'app', 'main.py');
    const lines = readFileSync(mainPy, 'utf8').split('\n');
    const row = lines.findIndex((l) => l.includes('cart = Cart('));
    assert.ok(row >= 0, 'the fixture has the line');
    const uri = lsp.open(mainPy, 'python');
    const column = lines[row]!.indexOf('Cart(') + 'Cart('.length;
    const first = await lsp.complete(uri, row, column);
    // The warm-up that follows a new place is answered before the next suggestion is asked.
    const warmed = (): number => server.requests.filter((r) => JSON.stringify(r.body ?? {}).includes('"num_predict":1')).length;
    for (let waited = 0; warmed() === 0 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    const second = await lsp.complete(uri, row, column);
    const checkoutPy = join(repo.path, 'pyshop', 'services', 'checkout.py');
    const other = readFileSync(checkoutPy, 'utf8').split('\n');
    const at = other.findIndex((l) => l.includes('return receipt'));
    const elsewhere = await lsp.complete(lsp.open(checkoutPy, 'python'), at, other[at]!.indexOf('receipt'));
    const budgetOf = async (traceId?: string): Promise<number | undefined> => (await lsp.explain(traceId))?.trace.prompt?.budgetTokens;
    return {
      first: await budgetOf(first[0]?.traceId),
      second: await budgetOf(second[0]?.traceId),
      elsewhere: await budgetOf(elsewhere[0]?.traceId),
      warmUps: warmed(),
    };
  } finally {
    await lsp.close();
    await server.close();
    repo.cleanup();
  }
}

void describe('the prompt budget and the model server', () => {
  // Ollama's 8,192-token window less the answer's 48 tokens, a fifth kept spare where no tokenizer counts.
  const window = Math.floor((8192 - 48) * 0.8);

  void test(
    'a server gets 2,048 tokens until it has read a prompt; then a fast one gets its window from its next place on, one measured slow 2,048',
    { timeout: 300_000 },
    async () => {
      const fast = await budgetsAt(50_000);
      assert.ok(fast.warmUps >= 1, 'the place was read ahead');
      assert.deepEqual(
        [fast.first, fast.second, fast.elsewhere],
        [2048, 2048, window],
        'a server that reads 50,000 tokens a second: the floor at the first place (it keeps its budget), the window at the next',
      );
      const slow = await budgetsAt(100);
      assert.ok(slow.warmUps >= 1, 'the place was read ahead');
      assert.equal(slow.first, 2048, 'before the server has read a prompt, the floor');
      // A place keeps its budget, so that its prompts keep their layout (and the server its cache) while the user types there.
      assert.equal(slow.second, 2048, 'the same place keeps its budget');
      assert.equal(slow.elsewhere, 2048, 'a server that read 100 tokens a second: the floor at the next place');
    },
  );

  void test('a host that warms nothing (the CLI) never measures the server and keeps its window; the editor starts at 2,048', () => {
    const ollama = new OllamaClient({ host: 'http://127.0.0.1:9', model: MODEL });
    const options = resolveOptions({});
    assert.equal(promptBudget(options, ollama, 48, false), window);
    assert.equal(promptBudget(options, ollama, 48, true), 2048);
  });
});

// The prompt budget and the model server: a line prompt on the workspace's shared block gets the
// server's whole window at every speed (a new place reads only its local part); a prompt read whole at
// every place (the body's) keeps 2,048 tokens until the server has read one, and where it reads slowly.
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
async function budgetsAt(
  readRate: number,
): Promise<{ first?: number; second?: number; elsewhere?: number; warmUps: number; prompts: Array<string | undefined> }> {
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
    const traces = await Promise.all([first, second, elsewhere].map(async (items) => (await lsp.explain(items[0]?.traceId))?.trace.prompt));
    return {
      first: traces[0]?.budgetTokens,
      second: traces[1]?.budgetTokens,
      elsewhere: traces[2]?.budgetTokens,
      warmUps: warmed(),
      prompts: traces.map((t) => t?.text),
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

  /** The characters two prompts share from their start. */
  const shared = (a = '', b = ''): number => {
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    return i;
  };

  void test(
    'a line prompt gets the window at every server speed, and on a slow server a new place keeps the block the last one read as its prefix',
    { timeout: 300_000 },
    async () => {
      for (const readRate of [50_000, 100]) {
        const at = await budgetsAt(readRate);
        assert.ok(at.warmUps >= 1, 'the place was read ahead');
        assert.deepEqual(
          [at.first, at.second, at.elsewhere],
          [window, window, window],
          `${readRate} tokens a second: the window everywhere`,
        );
        const [first, , elsewhere] = at.prompts;
        const blockEnd = first?.indexOf('<|file_sep|>app/main.py') ?? -1;
        assert.ok(blockEnd > 0, 'the first prompt shows a repository block');
        // A slow server keeps the block it read; a fast one, measured after the first place, gets a block laid out anew once,
        // with CodeRAG's share of the budget for each place's code.
        if (readRate < 1000) assert.ok(shared(first, elsewhere) >= blockEnd, "the other file's prompt starts with the same block");
      }
    },
  );

  void test("a prompt read whole at every place (the CLI's, the body's) keeps the window where nothing warms; the editor starts at 2,048", () => {
    const ollama = new OllamaClient({ host: 'http://127.0.0.1:9', model: MODEL });
    const options = resolveOptions({});
    assert.equal(promptBudget(options, ollama, 48, false), window);
    assert.equal(promptBudget(options, ollama, 48, true), 2048);
    assert.equal(promptBudget(options, ollama, 48, true, true), window, 'on the shared block: the window');
  });
});

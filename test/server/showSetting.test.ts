// coderag.suggestions.show over LSP with the embedded model: the same cursor gets ghost text with
// `all` and none at a level whose threshold is above the suggestion's score; Explain says the gate
// stayed silent, and switching back shows it again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startLsp } from './lspHarness';
import { SHOW_LEVELS, SHOW_THRESHOLDS } from '../../src/engine/gate/levels';

void test('coderag.suggestions.show: ghost text with `all`, none at a level above its score, back with `all`', async () => {
  const repo = copyFixture('pyshop');
  const base = {
    model: { provider: 'embedded' },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 16 }, query: { strategy: 'last10' } },
  };
  const lsp = await startLsp(repo.path, { ...base, suggestions: { show: 'all' } });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const path = join(repo.path, 'app', 'main.py');
    const uri = lsp.open(path, 'python', readFileSync(path, 'utf8'));
    // The start of `cart = build_demo_cart(...)` in main() (line 18, 0-based 17) after its indentation: the model is unsure there.
    const shown = await lsp.complete(uri, 17, 4);
    assert.equal(shown.length, 1, 'shown with `all`');
    const gate = (await lsp.explain())?.trace.gate;
    assert.ok(gate && gate.logprobs, JSON.stringify(gate));
    const level = SHOW_LEVELS.find((l) => l !== 'all' && SHOW_THRESHOLDS[l] > gate.score);
    assert.ok(level, `a level hides a suggestion scored ${gate.score}`);
    lsp.configure({ ...base, suggestions: { show: level } });
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await lsp.complete(uri, 17, 4), [], `no ghost text at ${level}`);
    const explained = await lsp.explain();
    assert.equal(explained?.trace.gate?.shown, false);
    assert.match(explained?.markdown ?? '', /CodeRAG stayed silent/);
    lsp.configure({ ...base, suggestions: { show: 'all' } });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await lsp.complete(uri, 17, 4)).length, 1, 'shown again with `all`');
  } finally {
    await lsp.close();
    repo.cleanup();
  }
});

// Typing into the language server with a real inference engine behind Ollama's and the
// OpenAI-compatible API (llama.cpp serving the shipped LM, bench/engine): the server's prompts are laid out for its prefix cache.
// A new place of work gets one warm-up request that reads the prompt up to the cursor's line; the
// keystrokes after it make the engine evaluate only what changed, and the status says when it reads.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startLsp, type LspSession } from './lspHarness';
import { ensureEngine } from '../../bench/engine/prepare';
import { startEngineServer, type EngineServer } from '../../bench/engine/server';
import { OllamaClient } from '../../src/engine/generate/OllamaClient';
import { OpenAICompatibleClient } from '../../src/engine/generate/OpenAICompatibleClient';

const MODEL = 'coderag-lm:test';
const line = '    receipt = service.checkout()';

void describe('a real engine (llama.cpp) behind the model clients', () => {
  let engine: EngineServer;

  before(async () => {
    // Installs bench/engine and exports the shipped LM on a fresh clone; fails (never skips) when it cannot.
    engine = await startEngineServer({ modelPath: await ensureEngine(), threads: 1, contextSize: 512, modelNames: [MODEL] });
  });
  after(async () => {
    await engine?.close();
  });

  void test("each client bounds the prompt by the model's context the server reports (/api/show, /props)", async () => {
    const signal = new AbortController().signal;
    const ollama = new OllamaClient({ host: engine.url, model: MODEL, timeoutMs: 20_000 });
    assert.equal(ollama.contextTokens, 8192, 'a fixed window before the check');
    assert.equal(await ollama.check(signal), undefined);
    assert.equal(ollama.contextTokens, 512, "the shipped LM's own window after it");
    const openai = new OpenAICompatibleClient({ baseUrl: engine.url, model: MODEL, timeoutMs: 20_000 });
    assert.equal(openai.contextTokens, undefined, 'unknown before the check');
    assert.equal(await openai.check(signal), undefined);
    assert.equal(openai.contextTokens, 512, "llama.cpp's n_ctx after it");
  });

  for (const provider of ['ollama', 'openai'] as const) {
    void test(
      `${provider}: a new place is read ahead once; the keystrokes after it re-read only the end of the prompt`,
      { timeout: 300_000 },
      async () => {
        const repo = copyFixture('pyshop');
        const mainPy = join(repo.path, 'app', 'main.py');
        const original = readFileSync(mainPy, 'utf8');
        const at = original.indexOf(line);
        const lineNo = original.slice(0, at).split('\n').length - 1;
        // The document starts with the line still to type.
        writeFileSync(mainPy, original.slice(0, at) + original.slice(at + line.length));
        const lsp = await startLsp(repo.path, {
          debounceMs: 0,
          model: { provider, timeoutMs: 30_000 },
          ollama: { host: engine.url, completionModel: MODEL },
          openai: { baseUrl: `${engine.url}/v1`, model: MODEL },
          experimental: { ollama: { keepAlive: '5m' }, cache: { size: 0 } },
        });
        try {
          await lsp.waitForStatus((s) => s.state === 'ready' && s.folders.every((f) => f.state === 'ready'), 120_000);
          await lsp.waitForDense();
          const uri = lsp.open(mainPy, 'python');
          const shares: number[] = [];
          let warmUps = 0;
          let version = 2;
          for (let k = 4; k <= line.length; k++) {
            const text = original.slice(0, at) + line.slice(0, k) + original.slice(at + line.length);
            if (k > 4) lsp.change(uri, text, version++);
            const seen = engine.stats().length;
            await lsp.complete(uri, lineNo, k);
            // A request the client closed early (its line had ended) is logged when the engine has stopped it.
            for (let waited = 0; engine.stats().length === seen && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
            const fresh = engine.stats().slice(seen);
            // A warm-up asks for one token and comes before the suggestion's own request.
            warmUps += fresh.slice(0, -1).length;
            const asked = fresh.at(-1);
            assert.ok(asked, `keystroke ${k}: the model was asked`);
            if (k > 4) shares.push(asked.evaluatedTokens / asked.promptTokens);
          }
          const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
          process.stdout.write(
            `# ${provider}: ${shares.length} keystrokes at one place, ${warmUps} warm-up(s); evaluated share mean ${mean.toFixed(3)}, max ${Math.max(...shares).toFixed(3)}\n`,
          );
          assert.ok(warmUps >= 1 && warmUps <= 3, `one warm-up for the place, and one per change of its block at most (${warmUps})`);
          assert.ok(mean < 0.2, `the engine re-reads little of each prompt (${mean.toFixed(3)})`);
          assert.ok(
            lsp.statuses.some((st) => st.warming === true),
            'the status said the model server was reading the context',
          );
          assert.equal((await lsp.status()).warming, undefined, 'and says so no longer once it has');
        } finally {
          await lsp.close();
          repo.cleanup();
        }
      },
    );
  }

  void test(
    'body mode: the sketch is drafted once at a place; the keystrokes after it re-read only the end of the body prompt',
    { timeout: 300_000 },
    async () => {
      const repo = copyFixture('pyshop');
      const file = join(repo.path, 'pyshop', 'services', 'checkout.py');
      const original = readFileSync(file, 'utf8');
      // The method's docstring and body removed: the developer starts its body on the blank line under it.
      const header = '    def checkout(self) -> Receipt:\n';
      const start = original.indexOf(header) + header.length;
      const emptied = `${original.slice(0, start)}\n`;
      writeFileSync(file, emptied);
      const lineNo = emptied.slice(0, start).split('\n').length - 1;
      const lsp = await startLsp(repo.path, {
        debounceMs: 0,
        model: { provider: 'ollama', timeoutMs: 30_000 },
        ollama: { host: engine.url, completionModel: MODEL },
        experimental: { ollama: { keepAlive: '5m' }, cache: { size: 0 } },
      });
      try {
        await lsp.waitForStatus((s) => s.state === 'ready' && s.folders.every((f) => f.state === 'ready'), 120_000);
        const uri = lsp.open(file, 'python');
        const asks: number[] = [];
        const shares: number[] = [];
        let version = 2;
        // The indentation typed key by key: each keystroke asks for the body.
        for (let k = 0; k <= 8; k++) {
          if (k > 0) lsp.change(uri, `${emptied.slice(0, start)}${' '.repeat(k)}\n`, version++);
          const seen = engine.stats().length;
          await lsp.complete(uri, lineNo, k);
          for (let waited = 0; engine.stats().length === seen && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
          await new Promise((r) => setTimeout(r, 200));
          // A warm-up asks for one token; the sketch and the body for more.
          const generating = engine
            .stats()
            .slice(seen)
            .filter((st) => st.maxTokens > 1);
          asks.push(generating.length);
          const body = generating.at(-1);
          assert.ok(body, `keystroke ${k}: the model was asked for the body`);
          if (k > 0) shares.push(body.evaluatedTokens / body.promptTokens);
        }
        assert.equal((await lsp.explain())?.trace.mode, 'body', 'the requests were body requests');
        const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
        process.stdout.write(
          `# body: model requests per keystroke ${asks.join(',')}; evaluated share mean ${mean.toFixed(3)}, max ${Math.max(...shares).toFixed(3)}\n`,
        );
        assert.equal(asks[0], 2, 'the first keystroke drafts a sketch, then asks for the body');
        assert.deepEqual(
          asks.slice(1),
          asks.slice(1).map(() => 1),
          'later keystrokes at the place ask only for the body',
        );
        assert.ok(mean < 0.3, `the engine re-reads little of each body prompt (${mean.toFixed(3)})`);
      } finally {
        await lsp.close();
        repo.cleanup();
      }
    },
  );
});

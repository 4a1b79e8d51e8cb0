// The `local` provider through the language server: llama.cpp (node-llama-cpp, the extension's own
// dependency) runs a GGUF made here (the shipped LM exported by bench/engine) in the server's
// process. A suggestion after `cart.` comes from it, checked to Cart's members; the status says
// where it runs; `auto` picks a downloaded model when no server answers; a broken file is named in
// the status and the log while the server keeps answering; the model unloads when idle.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyFixture, tempDir } from '../helpers/paths';
import { ensureEngine } from '../../bench/engine/prepare';
import { startLsp, type LspSession } from './lspHarness';
import type { StatusParams } from '../../src/protocol/protocol';

const CART_MEMBERS = ['max_items', 'owner', 'currency', 'lines', '_discount', 'add', 'apply_discount', 'discount_applied', 'total', 'empty', 'for_guest', 'guest_carts', 'Line'];
/** A closed port: Ollama answers nowhere. */
const NO_OLLAMA = 'http://127.0.0.1:9';

let gguf: string;
before(async () => {
  gguf = await ensureEngine();
});

/** The suggestion at the end of `line`, put after `cart = build_demo_cart("ann")` (`version` > 1: the open file changes to it). */
async function cartCompletion(lsp: LspSession, repo: string, line = '    cart.', version = 1): Promise<string> {
  await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 120_000);
  const path = join(repo, 'app', 'main.py');
  const lines = readFileSync(path, 'utf8').split('\n');
  const text = [...lines.slice(0, 18), line, ...lines.slice(18)].join('\n');
  let uri = pathToFileURL(path).toString();
  if (version > 1) lsp.change(uri, text, 100 + version);
  else uri = lsp.open(path, 'python', text);
  const items = await lsp.complete(uri, 18, line.length);
  return typeof items[0]?.insertText === 'string' ? items[0].insertText : '';
}

const localOk = (s: StatusParams): boolean => s.model.backend === 'local' && s.model.state === 'ok';

void describe('the local provider (llama.cpp in the language server)', () => {
  let repo: { path: string; cleanup: () => void };
  before(() => {
    repo = copyFixture('pyshop');
  });
  after(() => repo.cleanup());

  void test('a suggestion after cart. comes from llama.cpp, checked to a member of Cart; the status says where it runs', async () => {
    const lsp = await startLsp(repo.path, {
      model: { provider: 'local' },
      local: { modelPath: gguf, threads: 1 },
      rerank: { kind: 'none' },
      experimental: { model: { maxNewTokens: 8 }, query: { strategy: 'last10' }, check: { mode: 'constrain' } },
    });
    try {
      const shown = await cartCompletion(lsp, repo.path);
      const first = /^\w*/.exec(shown)?.[0] ?? '';
      assert.ok(CART_MEMBERS.includes(first), `"${shown}" does not start with a member of Cart`);
      const status = await lsp.waitForStatus((s) => localOk(s) && /llama\.cpp in the language server \(CPU, 1 thread\)/.test(s.model.endpoint));
      assert.equal(status.model.model, 'coderag-lm.f32');
      // The shipped LM has no fill-in-the-middle tokens: the status says what that means.
      assert.match(status.model.message ?? '', /no fill-in-the-middle tokens/);
      await lsp.waitForLogs((logs) => logs.some((l) => /loaded coderag-lm\.f32\.gguf \(gpt2, 512-token context\)/.test(l)));
      // The show gate read the local engine's token probabilities.
      const explained = await lsp.explain();
      assert.equal(explained?.trace.gate?.logprobs, true);
    } finally {
      await lsp.close();
    }
  });

  void test('auto uses a downloaded model when no model server answers, and unloads it when idle', async () => {
    const cache = tempDir('coderag-local-cache-');
    const models = join(cache.path, 'models');
    mkdirSync(models, { recursive: true });
    copyFileSync(gguf, join(models, 'coderag-lm.gguf'));
    // What a verified download leaves beside the file (sha256sum's format).
    const digest = createHash('sha256').update(readFileSync(gguf)).digest('hex');
    writeFileSync(join(models, 'coderag-lm.gguf.sha256'), `${digest}  coderag-lm.gguf\n`);
    // A download still in progress is never used.
    writeFileSync(join(models, 'other.gguf.part'), 'partial');
    const lsp = await startLsp(
      repo.path,
      {
        model: { provider: 'auto' },
        ollama: { host: NO_OLLAMA },
        local: { threads: 1, idleUnloadMinutes: 0.02 },
        rerank: { kind: 'none' },
        experimental: { model: { maxNewTokens: 4 } },
      },
      { initializationOptions: { modelsDir: models } },
    );
    try {
      const status = await lsp.waitForStatus((s) => s.model.backend === 'local', 60_000);
      assert.equal(status.model.model, 'coderag-lm');
      assert.match(status.model.message ?? '', /using the local model coderag-lm/);
      await cartCompletion(lsp, repo.path);
      await lsp.waitForLogs((logs) => logs.some((l) => /loaded coderag-lm\.gguf/.test(l)));
      await lsp.waitForLogs((logs) => logs.some((l) => /unloaded coderag-lm after 1 s without a request/.test(l)), 30_000);
      // Loaded again by the next request (another line: the suggestion cache does not answer it).
      await cartCompletion(lsp, repo.path, '    total = cart.', 2);
      await lsp.waitForLogs((logs) => logs.filter((l) => /loaded coderag-lm\.gguf/.test(l)).length >= 2);
    } finally {
      await lsp.close();
      cache.cleanup();
    }
  });

  void test('a truncated, corrupt or foreign model file is named in the status and the log; the server keeps answering', async () => {
    const dir = tempDir('coderag-bad-gguf-');
    const bytes = readFileSync(gguf);
    const foreign = Buffer.from(bytes);
    // general.architecture's value `gpt2` becomes `zzz9`: a GGUF llama.cpp has no architecture for.
    const key = foreign.indexOf('general.architecture');
    const value = foreign.indexOf('gpt2', key);
    foreign.write('zzz9', value, 'latin1');
    const files: Array<[string, Buffer, RegExp]> = [
      ['truncated.gguf', bytes.subarray(0, Math.floor(bytes.length / 2)), /truncated|could not load/],
      ['corrupt.gguf', Buffer.concat([Buffer.from('GGUF'), Buffer.alloc(64, 0xff)]), /not a readable GGUF file/],
      ['notes.gguf', Buffer.from('these are not weights\n'), /not a readable GGUF file/],
      ['foreign.gguf', foreign, /could not load foreign\.gguf \(architecture zzz9\)/],
    ];
    try {
      for (const [name, content, expected] of files) {
        const path = join(dir.path, name);
        writeFileSync(path, content);
        const lsp = await startLsp(repo.path, {
          model: { provider: 'local' },
          local: { modelPath: path, threads: 1 },
          rerank: { kind: 'none' },
          experimental: { model: { maxNewTokens: 4 } },
        });
        try {
          const shown = await cartCompletion(lsp, repo.path);
          assert.equal(shown, '', `${name}: no suggestion from a model that did not load`);
          const status = await lsp.waitForStatus((s) => s.model.backend === 'local' && s.model.state === 'modelMissing');
          assert.match(status.model.message ?? '', expected, name);
          await lsp.waitForLogs((logs) => logs.some((l) => expected.test(l)));
          // Still answering: a status request and another completion.
          assert.ok((await lsp.status()).folders.length > 0);
          assert.equal(await cartCompletion(lsp, repo.path), '');
        } finally {
          await lsp.close();
        }
      }
    } finally {
      dir.cleanup();
    }
  });
});

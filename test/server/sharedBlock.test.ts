// The repository block a workspace's places share, through the language server and a model server
// that says it reads slowly: a new place reuses the block the last one read, what it misses joins
// in a pause, read by the server before the block takes it, and a return finds its items still there.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture } from '../helpers/paths';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { startLsp } from './lspHarness';
import { IDLE_MS } from '../../src/server/CompletionFeature';

const MODEL = 'qwen2.5-coder:1.5b-base';

/** The characters two prompts share from their start. */
function shared(a = '', b = ''): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The paths the prompt's block shows (Qwen's repository form: one `<|file_sep|>` section each, the current file last). */
function blockFiles(prompt = ''): string[] {
  return prompt
    .split('<|file_sep|>')
    .slice(1, -1)
    .map((s) => s.slice(0, s.indexOf('\n')));
}

void describe('the shared repository block through the language server', () => {
  void test(
    'places share one block: a new place keeps it as its prefix, and its own items join in a pause',
    { timeout: 300_000 },
    async () => {
      const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL], readRate: 100 });
      const repo = copyFixture('pyshop');
      const lsp = await startLsp(repo.path, {
        debounceMs: 0,
        model: { provider: 'ollama', timeoutMs: 20_000 },
        ollama: { host: server.url, completionModel: MODEL },
        experimental: { cache: { size: 0 } },
      });
      try {
        await lsp.waitForStatus((s) => s.state === 'ready' && s.folders.every((f) => f.state === 'ready'), 120_000);
        const at = (rel: string, needle: string): { uri: string; line: number; character: number } => {
          const file = join(repo.path, rel);
          const lines = readFileSync(file, 'utf8').split('\n');
          const line = lines.findIndex((l) => l.includes(needle));
          assert.ok(line >= 0, `${rel} has ${needle}`);
          return { uri: lsp.open(file, 'python'), line, character: lines[line]!.indexOf(needle) + needle.length };
        };
        const promptAt = async (p: { uri: string; line: number; character: number }): Promise<string> => {
          const items = await lsp.complete(p.uri, p.line, p.character);
          return (await lsp.explain(items[0]?.traceId))?.trace.prompt?.text ?? '';
        };
        const warmUps = (): string[] =>
          server.requests
            .filter((r) => JSON.stringify(r.body ?? {}).includes('"num_predict":1'))
            .map((r) => String((r.body as { prompt?: string }).prompt));
        const main = at('app/main.py', 'cart = Cart(');
        const first = await promptAt(main);
        const firstBlock = first.indexOf('<|file_sep|>app/main.py');
        assert.ok(firstBlock > 0 && blockFiles(first).length > 0, 'the first place fills the block');

        const checkout = at('pyshop/services/checkout.py', 'return receipt');
        const before = warmUps().length;
        const second = await promptAt(checkout);
        assert.ok(shared(first, second) >= firstBlock, "another file: the block the server read is the prompt's prefix");

        // A pause: the items this place's ranking wants and the block lacks are read, then taken.
        await new Promise((r) => setTimeout(r, IDLE_MS + 1500));
        const again = await promptAt(checkout);
        const added = blockFiles(again).length - blockFiles(second).length;
        const idleReads = warmUps()
          .slice(before)
          .filter((p) => !second.startsWith(p.slice(0, p.length - 1)));
        assert.ok(added > 0, 'the checkout code needs items the first place did not');
        assert.ok(idleReads.length > 0, 'the server read the new items before the block took them');
        assert.ok(
          again.startsWith(second.slice(0, second.indexOf('<|file_sep|>pyshop/services/checkout.py'))),
          "they joined at the block's end",
        );
        // Back in the first file: its items are still where they were, and what the other place added follows them.
        const back = await promptAt(main);
        assert.ok(
          shared(back, again) >= again.indexOf('<|file_sep|>pyshop/services/checkout.py'),
          'the grown block is the prefix at the first place too',
        );
        assert.ok(shared(back, first) >= firstBlock - '\n'.length * 2, "and holds the first place's items where they were");
        console.log(
          `# shared block: ${blockFiles(first).length} files at the first place, ${added} joined in a pause (${idleReads.length} idle reads)`,
        );
      } finally {
        await lsp.close();
        await server.close();
        repo.cleanup();
      }
    },
  );
});

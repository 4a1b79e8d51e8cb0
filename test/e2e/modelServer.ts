// The e2e model endpoint, in its own process (its forward passes must not stall the browser
// driver): the Ollama-compatible test server answered by the embedded model, behind a TCP front
// on a fixed port. Commands on stdin, one per line: `down` (connections refused), `up`, `close`.
// Replies on stdout are JSON lines: {"ready":true,"url":...} first, then {"ok":"down"} and so on.
import { createInterface } from 'node:readline';
import { startModelServer } from '../server/lspHarness';

// An empty list starts with no model pulled (the README step pulls them through /api/pull, as `ollama pull` does).
const models = (process.argv[2] ?? 'coderag-lm:test,qwen3:8b').split(',').filter((m) => m.length > 0);

async function main(): Promise<void> {
  const model = await startModelServer(models);
  const say = (message: unknown): void => void process.stdout.write(JSON.stringify(message) + '\n');
  say({ ready: true, url: model.url, models });
  for await (const line of createInterface({ input: process.stdin })) {
    const command = line.trim();
    try {
      if (command === 'down') await model.down();
      else if (command === 'up') await model.up();
      else if (command === 'stats') {
        say({ ok: 'stats', calls: model.generateCalls(), paths: model.server.requests.map((r) => r.path) });
        continue;
      } else if (command === 'close') {
        await model.close();
        say({ ok: 'close' });
        process.exit(0);
      } else if (command) throw new Error(`unknown command ${command}`);
      if (command) say({ ok: command });
    } catch (e) {
      say({ error: e instanceof Error ? e.message : String(e) });
    }
  }
  await model.close();
  process.exit(0);
}

main().catch((e: unknown) => {
  process.stderr.write(`model server failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

// Ctrl-C: a `coderag` command stops at its next check with exit code 130, a one-line message and
// no stack trace, and leaves no temporary or half-written file in its index folder.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath, fixturesDir, tempDir } from '../helpers/paths';

void test('Ctrl-C while `coderag complete` waits for a model server that never answers: exit 130, no stack, no temp files', async () => {
  // A model server that accepts connections and never answers.
  const sockets: Socket[] = [];
  let requests = 0;
  const server = createServer((s) => {
    sockets.push(s);
    s.once('data', () => requests++);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const dir = tempDir();
  try {
    const child = spawn(
      process.execPath,
      [
        cliPath,
        'complete',
        join(fixturesDir, 'pyshop'),
        'app/main.py:19:33',
        '--provider',
        'ollama',
        '--ollama-host',
        `http://127.0.0.1:${port}`,
        '--timeout-ms',
        '120000',
        '--no-dense',
        '--index-dir',
        dir.path,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // Interrupt once the command is waiting on the model server.
    for (let waited = 0; requests === 0 && waited < 60_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    assert.ok(requests > 0, `the command reached the model server: ${stderr}`);
    const sentAt = Date.now();
    child.kill('SIGINT');
    const code = await exited;
    assert.equal(code, 130, stderr);
    assert.ok(Date.now() - sentAt < 15_000, 'stopped promptly, not after the model timeout');
    assert.match(stderr, /coderag complete: interrupted/);
    assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
    const leftovers = readdirSync(dir.path, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.tmp'));
    assert.deepEqual(leftovers, []);
  } finally {
    for (const s of sockets) s.destroy();
    server.close();
    dir.cleanup();
  }
});

// `coderag complete` runs the whole pipeline on the embedded defaults and prints the completion
// with its trace (the README demo's main job).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { cliPath, fixturesDir, tempDir } from '../helpers/paths';
import { buildOnce } from '../server/lspHarness';

void test('coderag complete prints a completion with its trace, the prompt holding the cross-file definition', () => {
  buildOnce();
  const cache = tempDir();
  try {
    const r = spawnSync(
      process.execPath,
      [cliPath, 'complete', join(fixturesDir, 'pyshop'), 'app/main.py:19:31', '--index-dir', cache.path, '--max-new-tokens', '8'],
      { encoding: 'utf8' },
    );
    assert.ok(r.status === 0 || r.status === 1, r.stderr);
    assert.match(r.stdout, /^(Completion at app\/main\.py:19:31:|No completion at app\/main\.py:19)/);
    for (const heading of ['## Stages', '## Query', '## Retrieval', '### sparse', '### dataflow', '## Rerank', '## Model', '## Prompt'])
      assert.ok(r.stdout.includes(heading), heading);
    assert.match(r.stdout, /def __init__\(self, cart: Cart, gateway: PaymentGateway \| None = None\)/);
    assert.match(r.stdout, /embedded `/);
    const bad = spawnSync(process.execPath, [cliPath, 'complete', join(fixturesDir, 'pyshop'), 'app/main.py'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /<file>:<line>/);
  } finally {
    cache.cleanup();
  }
});

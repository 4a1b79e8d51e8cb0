// `coderag rerank` as a user runs it (the built bin/coderag.js), against the Ollama-compatible test server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath, fixturesDir, repoRoot, tempDir } from '../../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../../helpers/ollamaServer';
import { overlapModelTestDouble } from './overlapModelTestDouble';
import { writeTinyPairModel } from './tinyPairModel';

// The event loop must stay free to serve the reranker calls, so the CLI runs asynchronously.
function coderag(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let server: OllamaTestServer;
const cache = tempDir();
before(async () => {
  assert.ok(existsSync(join(repoRoot, 'dist', 'cli.js')), 'build first (npm run build)');
  server = await startOllamaTestServer(overlapModelTestDouble());
});
after(async () => {
  await server.close();
  cache.cleanup();
});

void test('coderag rerank prints candidates before and after, the calls and the time', async () => {
  const r = await coderag(['rerank', join(fixturesDir, 'pyshop'), 'app/main.py:20', '--ollama', server.url, '--index-dir', cache.path]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Candidates in retrieval order \(\d+\):/);
  assert.match(r.stdout, /After BestFit reranking with ollama qwen3:8b @ http:\/\/127\.0\.0\.1:\d+ \(top 10\):/);
  const calls = Number(/Reranker calls: (\d+) of (\d+) windows/.exec(r.stdout)?.[1]);
  assert.ok(calls > 0 && calls === server.requests.length);
  assert.match(r.stdout, /Timings: .*rerank [\d.]+ ms/);
  const json = await coderag([
    'rerank',
    join(fixturesDir, 'pyshop'),
    'app/main.py:20',
    '--openai',
    server.url,
    '--json',
    '--index-dir',
    cache.path,
  ]);
  assert.equal(json.code, 0, json.stderr);
  const parsed = JSON.parse(json.stdout) as { after: string[]; before: string[]; rerankerCalls: number; degraded?: string };
  assert.equal(parsed.after.length, Math.min(10, parsed.before.length));
  assert.ok(parsed.rerankerCalls > 0);
  assert.equal(parsed.degraded, undefined);
  // No reranker and no server named: the shipped distilled model, as in the editor.
  const local = await coderag(['rerank', join(fixturesDir, 'pyshop'), 'app/main.py:20', '--json', '--index-dir', cache.path]);
  assert.equal(local.code, 0, local.stderr);
  const byDefault = JSON.parse(local.stdout) as { reranker: string; degraded?: string };
  assert.match(byDefault.reranker, /^distilled /);
  assert.equal(byDefault.degraded, undefined);
});

void test('coderag rerank with a server that is down keeps retrieval order and says so', async () => {
  const down = await startOllamaTestServer(overlapModelTestDouble());
  const url = down.url;
  await down.close();
  const r = await coderag(['rerank', join(fixturesDir, 'pyshop'), 'app/main.py:20', '--ollama', url, '--json', '--index-dir', cache.path]);
  assert.equal(r.code, 0, r.stderr);
  const parsed = JSON.parse(r.stdout) as { after: string[]; before: string[]; degraded?: string };
  assert.deepEqual(parsed.after, parsed.before.slice(0, 10));
  assert.match(parsed.degraded ?? '', /unavailable/);
});

void test('coderag rerank --reranker distilled loads a model folder; bad arguments are usage errors', async () => {
  const dir = tempDir('coderag-reranker-');
  try {
    writeTinyPairModel(dir.path);
    const r = await coderag([
      'rerank',
      join(fixturesDir, 'pyshop'),
      'app/main.py:20',
      '--reranker',
      'distilled',
      '--reranker-model',
      dir.path,
      '--json',
      '--index-dir',
      cache.path,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const parsed = JSON.parse(r.stdout) as { reranker: string; after: string[] };
    assert.match(parsed.reranker, /^distilled /);
    assert.equal(parsed.after.length, 10);
  } finally {
    dir.cleanup();
  }
  const missing = await coderag([
    'rerank',
    join(fixturesDir, 'pyshop'),
    'app/main.py:20',
    '--reranker',
    'distilled',
    '--reranker-model',
    '/nonexistent/model',
    '--index-dir',
    cache.path,
  ]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /distilled reranker model not found/);
  const bad = await coderag(['rerank', join(fixturesDir, 'pyshop'), 'app/main.py:20', '--reranker', 'bogus']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--reranker must be one of llm, distilled, none/);
});

// Bounds by work, not only by bytes: a generated or minified module inside coderag.experimental.maxFileBytes
// (very long lines; short lines but hundreds of thousands of definitions; just past the item bound)
// is left out of the index with its reason in the language server's status, while the rest of the
// folder indexes, completes, and the server answers its status all along.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StatusParams } from '../../src/protocol/protocol';
import { MAX_INDEX_ITEMS } from '../../src/engine/kb/extract';
import { tempDir } from '../helpers/paths';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { startLsp, type LspSession } from '../server/lspHarness';
import { writeTree } from './helpers';

const MODEL = 'coderag-lm:test';

/** A minified Python module: `v0=0;v1=1;...` in lines of about `lineChars` characters, `bytes` in all. */
function minifiedPython(bytes: number, lineChars: number): string {
  const lines: string[] = [];
  let n = 0;
  let size = 0;
  while (size < bytes) {
    const parts: string[] = [];
    let len = 0;
    while (len < lineChars) {
      const s = `v${n}=${n}`;
      parts.push(s);
      len += s.length + 1;
      n++;
    }
    const line = parts.join(';');
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** A minified Java class: fields `int f0;int f1;...` on one line. */
function minifiedJava(bytes: number): string {
  const parts = ['package gen;public class Bundle{'];
  let size = parts[0]!.length;
  for (let n = 0; size < bytes; n++) {
    const s = `int f${n};`;
    parts.push(s);
    size += s.length;
  }
  parts.push('}');
  return parts.join('');
}

/** `count` short definitions, one per line. */
function manyDefinitions(count: number, prefix: string): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(`def ${prefix}${i}(): pass`);
  return `${lines.join('\n')}\n`;
}

const NORMAL = {
  'app/main.py': 'from app.lib import compute_total\n\n\ndef main():\n    return compute_total(\n',
  'app/lib.py': 'def compute_total(prices, tax_rate):\n    """Sum the prices with tax."""\n    return sum(prices) * (1 + tax_rate)\n',
};

/** Every status request's round trip while `until` is pending (a blocked event loop shows as a long one). */
async function statusRoundTrips(lsp: LspSession, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const trips: number[] = [];
  while (!done) {
    const t0 = performance.now();
    await lsp.status();
    trips.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 50));
  }
  return trips;
}

const ready = (s: StatusParams): boolean => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready') && !s.indexing;

void test('server: minified modules (lines of 200,000 characters, Python and Java) are skipped as "lines too long", the rest indexes and completes', async () => {
  const dir = tempDir();
  const model = await startOllamaTestServer(() => Promise.resolve({ text: 'prices, tax_rate)' }), { models: [MODEL] });
  const repo = join(dir.path, 'repo');
  writeTree(repo, {
    ...NORMAL,
    'vendor/bundle.py': minifiedPython(6_000_000, 200_000),
    'vendor/Bundle.java': minifiedJava(3_000_000),
  });
  const lsp = await startLsp(repo, {
    debounceMs: 0,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 10_000 },
    ollama: { host: model.url, completionModel: MODEL },
    rerank: { kind: 'none' },
    experimental: { maxFileBytes: 32_000_000, query: { strategy: 'last10' }, cache: { size: 0 } },
  });
  try {
    const trips = await statusRoundTrips(lsp, lsp.waitForStatus(ready, 120_000));
    const status = await lsp.status();
    const folder = status.folders[0];
    assert.equal(folder?.files, 2, 'app/main.py and app/lib.py are indexed');
    assert.ok((folder?.items ?? 0) < 10, `the modules' items are not in the index: ${folder?.items}`);
    const skipped = Object.fromEntries((folder?.skipped ?? []).map((s) => [s.path, s]));
    for (const path of ['vendor/bundle.py', 'vendor/Bundle.java']) {
      assert.equal(skipped[path]?.reason, 'longLines', `${path}: ${JSON.stringify(folder?.skipped)}`);
      assert.match(skipped[path]?.detail ?? '', /^lines too long: a line of [\d,]+ characters > 100,000 \(minified or generated code\)$/);
    }
    assert.equal(folder?.skippedCount, 2);
    assert.ok(Math.max(...trips) < 1500, `the status answered within 1.5 s all along: longest ${Math.max(...trips).toFixed(0)} ms`);
    // The rest of the folder completes, with its own items in the prompt and none of the module's.
    const uri = lsp.open(join(repo, 'app', 'main.py'), 'python');
    const items = await lsp.complete(uri, 4, '    return compute_total('.length);
    assert.equal(items[0]?.insertText, 'prices, tax_rate)');
    const prompt = String((model.requests.at(-1)?.body as { prompt?: unknown } | undefined)?.prompt ?? '');
    assert.match(prompt, /def compute_total\(prices, tax_rate\)/);
    assert.doesNotMatch(prompt, /v1234=|int f1234;/);
  } finally {
    await lsp.close();
    await model.close();
    dir.cleanup();
  }
});

void test('server: a module of short lines but a million definitions is skipped as "too much code" before it is parsed; one just past the item bound as "too many items"', async () => {
  const dir = tempDir();
  const repo = join(dir.path, 'repo');
  writeTree(repo, {
    ...NORMAL,
    // About 20 MB: 1.1 million definitions (6.6 million tokens), within the size setting below.
    'gen/huge.py': manyDefinitions(1_100_000, 'g'),
    // Few tokens, but more definitions than the item bound.
    'gen/dense.py': manyDefinitions(MAX_INDEX_ITEMS + 500, 'dense_'),
  });
  const lsp = await startLsp(repo, {
    model: { provider: 'ollama' },
    ollama: { host: 'http://127.0.0.1:9' },
    experimental: { maxFileBytes: 32_000_000 },
  });
  try {
    const trips = await statusRoundTrips(lsp, lsp.waitForStatus(ready, 120_000));
    const folder = (await lsp.status()).folders[0];
    assert.equal(folder?.files, 2);
    assert.ok((folder?.items ?? 0) < 10, `no generated item is indexed: ${folder?.items}`);
    const skipped = Object.fromEntries((folder?.skipped ?? []).map((s) => [s.path, s]));
    assert.equal(skipped['gen/huge.py']?.reason, 'tooManyTokens', JSON.stringify(folder?.skipped));
    assert.equal(skipped['gen/huge.py']?.detail, 'too much code: more than 1,000,000 tokens');
    assert.equal(skipped['gen/dense.py']?.reason, 'tooManyItems', JSON.stringify(folder?.skipped));
    assert.equal(skipped['gen/dense.py']?.detail, `too many items: more than ${MAX_INDEX_ITEMS.toLocaleString('en-US')} items`);
    assert.ok(Math.max(...trips) < 1500, `the status answered within 1.5 s all along: longest ${Math.max(...trips).toFixed(0)} ms`);
  } finally {
    await lsp.close();
    dir.cleanup();
  }
});

void test('server: a file that becomes minified leaves the index at its watched-file event, and the status says why', async () => {
  const dir = tempDir();
  const repo = join(dir.path, 'repo');
  writeTree(repo, NORMAL);
  const lsp = await startLsp(repo, {
    model: { provider: 'ollama' },
    ollama: { host: 'http://127.0.0.1:9' },
    experimental: { maxFileBytes: 32_000_000 },
  });
  try {
    await lsp.waitForStatus(ready, 60_000);
    assert.equal((await lsp.status()).folders[0]?.files, 2);
    const lib = join(repo, 'app', 'lib.py');
    writeFileSync(lib, minifiedPython(1_000_000, 500_000));
    lsp.fileEvent(lib, 2);
    const after = await lsp.waitForStatus((s) => s.folders[0]?.files === 1, 30_000);
    assert.deepEqual(
      after.folders[0]?.skipped?.map((s) => [s.path, s.reason]),
      [['app/lib.py', 'longLines']],
    );
  } finally {
    await lsp.close();
    dir.cleanup();
  }
});

// Fault matrix, the saved index (README.md rows 9 and 12, and the cases that already passed): a
// damaged index, an index with a valid checksum but a wrong shape, a full rebuild, an indexer
// killed mid-run and two indexers at once, as `coderag index` and the server's indexer show them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { indexFilePath, indexFolderFor, loadIndex, saveIndex, type StoredIndex } from '../../src/engine/kb/store';
import { cliPath, tempDir } from '../helpers/paths';
import { runCli } from './cliRun';
import { coderag, INDEX_CORRUPTIONS, writeManyFiles, writeTree, type IndexJson } from './helpers';
import { startIndexer } from './indexerHelpers';

const FILES = {
  'shop/cart.py': 'class Cart:\n    def add(self, item):\n        self.items.append(item)\n',
  'shop/price.py': 'def total(cart):\n    return sum(cart.items)\n',
  'app.py': 'from shop.cart import Cart\n\ncart = Cart()\n',
};

/** Rewrite a saved index with the store's own writer (so its checksum is valid) in a shape the code cannot read. */
async function breakShape(indexFolder: string): Promise<void> {
  const loaded = await loadIndex(indexFolder);
  assert.equal(loaded.status, 'ok');
  if (loaded.status !== 'ok') return;
  const files = { ...loaded.index.files } as Record<string, unknown>;
  files['shop/cart.py'] = { ...loaded.index.files['shop/cart.py'], extraction: null };
  await saveIndex(indexFolder, { ...loaded.index, files } as StoredIndex);
}

void test('coderag index: an index with a valid checksum whose file entry has extraction null is reported and rebuilt, on the first run and after', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, FILES);
    const cache = join(dir.path, 'cache');
    const first = coderag(['index', repo, '--index-dir', cache, '--json']);
    assert.equal(first.code, 0, first.stderr);
    await breakShape(indexFolderFor(cache, repo));
    const r = coderag(['index', repo, '--index-dir', cache, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as IndexJson;
    assert.match((report.savedIndex as { invalid: string }).invalid, /files\["shop\/cart\.py"\]\.extraction/);
    assert.equal(report.parsed, 3, 'every file parsed again');
    assert.equal(report.reused, 0);
    const text = coderag(['index', repo, '--index-dir', cache]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /reused 3 unchanged files/, 'the rebuilt index is good');
    await breakShape(indexFolderFor(cache, repo));
    assert.match(
      coderag(['index', repo, '--index-dir', cache]).stdout,
      /saved index was invalid \(malformed contents: .*extraction.*\); rebuilt/,
    );
  } finally {
    dir.cleanup();
  }
});

void test('server: a folder whose saved index has the wrong shape ends ready, not "Opening the repository index" forever', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, FILES);
    const cache = join(dir.path, 'cache');
    assert.equal(coderag(['index', repo, '--index-dir', cache]).code, 0);
    await breakShape(indexFolderFor(cache, repo));
    const s = await startIndexer(cache, {});
    try {
      const [summary] = await s.index([repo]);
      assert.equal(summary?.state, 'ready', JSON.stringify(summary));
      assert.equal(summary?.files, 3);
      assert.equal(s.status.snapshot().state !== 'starting', true, s.status.snapshot().message);
      const report = s.indexer.folderFor(pathToFileURL(join(repo, 'app.py')).toString())?.folder.report;
      assert.match(JSON.stringify(report?.savedIndex), /invalid/);
    } finally {
      await s.close();
    }
  } finally {
    dir.cleanup();
  }
});

void test('server: Rebuild Repository Index (full) discards the saved index and parses every file; a plain rebuild reuses it', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, FILES);
    const s = await startIndexer(join(dir.path, 'cache'), {});
    try {
      await s.index([repo]);
      const reportOf = () => s.indexer.folderFor(pathToFileURL(join(repo, 'app.py')).toString())?.folder.report;
      await s.indexer.rebuild(undefined, false, undefined, new AbortController().signal);
      assert.deepEqual([reportOf()?.parsed, reportOf()?.reused], [0, 3], 'a plain rebuild re-parses only changed files');
      const full = await s.indexer.rebuild(undefined, true, undefined, new AbortController().signal);
      assert.equal(full.folders[0]?.state, 'ready');
      assert.deepEqual(
        [reportOf()?.parsed, reportOf()?.reused, reportOf()?.savedIndex],
        [3, 0, 'discarded'],
        'every file parsed, none reused',
      );
    } finally {
      await s.close();
    }
  } finally {
    dir.cleanup();
  }
});

for (const { label, corrupt, reason } of INDEX_CORRUPTIONS) {
  void test(`coderag index: a ${label} index file is detected, reported and rebuilt; the next run reuses the rebuilt one`, () => {
    const dir = tempDir();
    try {
      const repo = join(dir.path, 'repo');
      writeTree(repo, FILES);
      const cache = join(dir.path, 'cache');
      assert.equal(coderag(['index', repo, '--index-dir', cache]).code, 0);
      corrupt(indexFilePath(indexFolderFor(cache, repo)));
      const r = coderag(['index', repo, '--index-dir', cache]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /saved index was invalid \(.+\); rebuilt/);
      assert.match(r.stdout, reason);
      const next = coderag(['index', repo, '--index-dir', cache, '--json']);
      assert.equal(next.code, 0, next.stderr);
      const report = JSON.parse(next.stdout) as IndexJson;
      assert.deepEqual([report.savedIndex, report.files, report.reused], ['loaded', 3, 3]);
    } finally {
      dir.cleanup();
    }
  });
}

const MANY = { packages: 40, perPackage: 100, files: 4000 };

/** `--json` report of a run that must succeed. */
async function indexRun(repo: string, cache: string): Promise<IndexJson> {
  const r = await runCli(['index', repo, '--index-dir', cache, '--json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as IndexJson;
}

void test('kill -9 mid-index: the next run exits 0 with every file indexed, and its index is valid and complete', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeManyFiles(repo, MANY.packages, MANY.perPackage);
    const cache = join(dir.path, 'cache');
    const child = spawn(process.execPath, [cliPath, 'index', repo, '--index-dir', cache], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    // The first progress line comes once the scan is done and parsing starts: kill it shortly after.
    const parsing = new Promise<void>((resolve) =>
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString('utf8');
        if (/indexing \d+\/4000/.test(stderr)) resolve();
      }),
    );
    await Promise.race([parsing, exited]);
    await new Promise((r) => setTimeout(r, 150));
    child.kill('SIGKILL');
    assert.equal(await exited, 'SIGKILL', 'killed while it still ran');
    const after = await indexRun(repo, cache);
    assert.equal(after.files, MANY.files);
    assert.equal(after.parsed + after.reused, MANY.files);
    assert.equal((after as unknown as { items: { function: number; classFunction: number } }).items.function, MANY.files);
    const loaded = await loadIndex(indexFolderFor(cache, repo));
    assert.equal(loaded.status, 'ok', JSON.stringify(loaded));
    if (loaded.status === 'ok') assert.equal(Object.keys(loaded.index.files).length, MANY.files);
    const again = await indexRun(repo, cache);
    assert.deepEqual([again.savedIndex, again.reused, again.parsed], ['loaded', MANY.files, 0]);
    assert.deepEqual(readdirSync(indexFolderFor(cache, repo)), ['kb.index'], 'no temp file left behind by the recovering run');
  } finally {
    dir.cleanup();
  }
});

void test('two `coderag index` runs on one repository and --index-dir at once: both exit 0 and the index afterwards is valid and complete', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeManyFiles(repo, 10, 100);
    const cache = join(dir.path, 'cache');
    const [a, b] = await Promise.all([indexRun(repo, cache), indexRun(repo, cache)]);
    assert.deepEqual([a.files, b.files], [1000, 1000]);
    const loaded = await loadIndex(indexFolderFor(cache, repo));
    assert.equal(loaded.status, 'ok', JSON.stringify(loaded));
    if (loaded.status === 'ok') assert.equal(Object.keys(loaded.index.files).length, 1000);
    const next = await indexRun(repo, cache);
    assert.deepEqual([next.savedIndex, next.reused, next.parsed], ['loaded', 1000, 0], 'the third run trusts what the two wrote');
    assert.deepEqual(readdirSync(indexFolderFor(cache, repo)), ['kb.index'], 'no temp file left behind');
  } finally {
    dir.cleanup();
  }
});

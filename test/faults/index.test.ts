// Fault matrix, the saved index (issue 20 items 9 and 12): an index with a valid checksum but a
// wrong shape, and a full rebuild, as `coderag index` and the server's indexer show them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { indexFolderFor, loadIndex, saveIndex, type StoredIndex } from '../../src/engine/kb/store';
import { tempDir } from '../helpers/paths';
import { coderag, writeTree, type IndexJson } from './helpers';
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
    assert.match(coderag(['index', repo, '--index-dir', cache]).stdout, /saved index was invalid \(malformed contents: .*extraction.*\); rebuilt/);
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
      assert.deepEqual([reportOf()?.parsed, reportOf()?.reused, reportOf()?.savedIndex], [3, 0, 'discarded'], 'every file parsed, none reused');
    } finally {
      await s.close();
    }
  } finally {
    dir.cleanup();
  }
});

// Fault matrix, the server's folders (README.md rows 10 and 12): the home folder and the root are
// refused with the reason in the status, a folder beyond coderag.maxFiles is stopped with the
// reason, and changed coderag.exclude / coderag.experimental.maxFileBytes / coderag.maxFiles apply to open folders.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../helpers/paths';
import { writeTree } from './helpers';
import { startIndexer } from './indexerHelpers';

void test('server: a workspace at the home folder or / is not indexed; the folder state says why', async () => {
  const dir = tempDir();
  const savedHome = process.env.HOME;
  try {
    const home = join(dir.path, 'home');
    writeTree(home, { 'a.py': 'a = 1\n' });
    process.env.HOME = home;
    const s = await startIndexer(join(dir.path, 'cache'), {});
    try {
      const summaries = await s.index([home, '/']);
      assert.deepEqual(
        summaries.map((f) => [f.state, f.files]),
        [
          ['failed', 0],
          ['failed', 0],
        ],
      );
      assert.match(summaries[0]?.message ?? '', /is your home folder: not indexed/);
      assert.match(summaries[1]?.message ?? '', /root of the file system/);
      const shown = s.status.snapshot().folders;
      assert.equal(
        shown.find((f) => f.uri === pathToFileURL(home).toString())?.message,
        summaries[0]?.message,
        'the status carries the reason',
      );
      assert.match(s.status.snapshot().message, /Not indexed: .*is your home folder/, 'and so does the headline the status bar shows');
      assert.equal(s.indexer.folderFor(pathToFileURL(join(home, 'a.py')).toString()), undefined, 'nothing opened');
    } finally {
      await s.close();
    }
  } finally {
    process.env.HOME = savedHome;
    dir.cleanup();
  }
});

void test('server: more files than coderag.maxFiles stop indexing with the reason; raising the setting indexes the folder', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, { 'a.py': 'a = 1\n', 'b.py': 'b = 1\n', 'c.py': 'c = 1\n' });
    const s = await startIndexer(join(dir.path, 'cache'), { maxFiles: 2 });
    try {
      const [summary] = await s.index([repo]);
      assert.equal(summary?.state, 'failed');
      assert.match(summary?.message ?? '', /more than 2 source files .*coderag\.maxFiles/);
      assert.match(s.status.snapshot().message, /Not indexed: more than 2 source files/);
      await s.configure({ maxFiles: 10 });
      assert.deepEqual(
        s.indexer.summaries().map((f) => [f.state, f.files, f.message]),
        [['ready', 3, undefined]],
      );
    } finally {
      await s.close();
    }
  } finally {
    dir.cleanup();
  }
});

void test('server: changing coderag.exclude or coderag.experimental.maxFileBytes re-scans open folders and drops the files they leave out', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, {
      'app.py': 'def app_main():\n    return 1\n',
      'vendor/lib.py': 'def vendored_helper():\n    return 1\n',
      'big.py': `def big_function():\n    return 1\n${'# padding\n'.repeat(300)}`,
    });
    const s = await startIndexer(join(dir.path, 'cache'), {});
    try {
      await s.index([repo]);
      const kb = () => s.indexer.folderFor(pathToFileURL(join(repo, 'app.py')).toString())?.folder.kb;
      assert.deepEqual(kb()?.paths(), ['app.py', 'big.py', 'vendor/lib.py']);
      await s.configure({ exclude: ['vendor/'] });
      assert.deepEqual(kb()?.paths(), ['app.py', 'big.py']);
      assert.equal(kb()?.itemsNamed('vendored_helper').length, 0, 'the excluded file left no items');
      await s.configure({ exclude: ['vendor/'], experimental: { maxFileBytes: 1000 } });
      assert.deepEqual(kb()?.paths(), ['app.py']);
      assert.equal(kb()?.itemsNamed('big_function').length, 0);
      await s.configure({});
      assert.deepEqual(kb()?.paths(), ['app.py', 'big.py', 'vendor/lib.py'], 'back to the defaults, back in the index');
      assert.deepEqual(
        s.indexer.summaries().map((f) => f.state),
        ['ready'],
      );
    } finally {
      await s.close();
    }
  } finally {
    dir.cleanup();
  }
});

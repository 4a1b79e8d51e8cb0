// Fault matrix, round 2 (README.md rows 2 and 5): names that begin with `..` under every ignore
// layer, and special files (a FIFO, a device) where a source file or the saved index should be, as
// `coderag index`, `coderag complete` and the language server show them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { indexFilePath, indexFolderFor } from '../../src/engine/kb/store';
import { tempDir } from '../helpers/paths';
import { startLsp } from '../server/lspHarness';
import { runCli } from './cliRun';
import { coderag, link, writeTree, type IndexJson } from './helpers';
import { startIndexer } from './indexerHelpers';

function hasItem(repo: string, cache: string, name: string): boolean {
  const r = coderag(['kb', repo, '--name', name, '--index-dir', cache]);
  assert.ok(r.code === 0 || /no knowledge-base item named/.test(r.stderr), r.stderr);
  return r.code === 0;
}

function mkfifo(path: string): void {
  assert.equal(spawnSync('mkfifo', [path]).status, 0, `mkfifo ${path}`);
}

/** A promise that fails after `ms` (a hang shows as a failure, not a test that never ends). */
function within<T>(ms: number, what: string, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}

const DOT_DOT_REPO = {
  '.gitignore': '..private/\n..hidden_settings.py\npkg/..cache/\n',
  '..private/keys.py': 'def private_function():\n    return "token"\n',
  '..hidden_settings.py': 'def hidden_setting():\n    return "password"\n',
  'pkg/..cache/cached.py': 'def cached_function():\n    return 1\n',
  'pkg/..generated/gen.py': 'def generated_function():\n    return 1\n',
  'pkg/ok.py': 'def ok_function():\n    return 1\n',
  '..visible.py': 'def visible_function():\n    return 1\n',
};

void test('names beginning with ".." listed in .gitignore (..private/, ..hidden_settings.py, pkg/..cache/) or --exclude are not indexed; an unlisted ..visible.py is', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, DOT_DOT_REPO);
    const cache = join(dir.path, 'cache');
    const r = coderag(['index', repo, '--json', '--index-dir', cache, '--exclude', 'pkg/..generated/']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as IndexJson).files, 2, 'pkg/ok.py and ..visible.py');
    for (const name of ['private_function', 'hidden_setting', 'cached_function'])
      assert.equal(hasItem(repo, cache, name), false, `${name}: ignored by .gitignore`);
    assert.equal(hasItem(repo, cache, 'ok_function'), true);
    assert.equal(hasItem(repo, cache, 'visible_function'), true, 'a name beginning with ".." is a file like any other');
  } finally {
    dir.cleanup();
  }
});

void test('server: a saved or created file under an ignored ..name does not enter the index; ..visible.py is a file of the folder', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, DOT_DOT_REPO);
    const s = await startIndexer(join(dir.path, 'cache'), { exclude: ['pkg/..generated/'] });
    try {
      await s.index([repo]);
      const hit = s.indexer.folderFor(pathToFileURL(join(repo, '..visible.py')).toString());
      assert.equal(hit?.relPath, '..visible.py', 'the document is found in its folder');
      const kb = hit?.folder.kb;
      assert.deepEqual(kb?.paths(), ['..visible.py', 'pkg/ok.py']);
      // didSave of ignored files (what an editor sends when one is edited).
      await s.indexer.onSaved(
        pathToFileURL(join(repo, '..hidden_settings.py')).toString(),
        'def hidden_setting():\n    return "new password"\n',
      );
      await s.indexer.onSaved(
        pathToFileURL(join(repo, '..private', 'keys.py')).toString(),
        'def private_function():\n    return "new token"\n',
      );
      await s.indexer.onSaved(
        pathToFileURL(join(repo, 'pkg', '..cache', 'cached.py')).toString(),
        'def cached_function():\n    return 2\n',
      );
      await s.indexer.onSaved(
        pathToFileURL(join(repo, 'pkg', '..generated', 'gen.py')).toString(),
        'def generated_function():\n    return 2\n',
      );
      assert.deepEqual(kb?.paths(), ['..visible.py', 'pkg/ok.py']);
      for (const name of ['private_function', 'hidden_setting', 'cached_function', 'generated_function'])
        assert.equal(kb?.itemsNamed(name).length, 0, name);
    } finally {
      await s.close();
    }
  } finally {
    dir.cleanup();
  }
});

void test('server: a watched-file "created" event for a FIFO named stream.py leaves the server answering, and the next created file is indexed', async () => {
  const dir = tempDir();
  const repo = join(dir.path, 'repo');
  writeTree(repo, { 'app.py': 'def app_main():\n    return 1\n' });
  const lsp = await startLsp(repo, { model: { provider: 'ollama' }, ollama: { host: 'http://127.0.0.1:9' } });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const fifo = join(repo, 'stream.py');
    mkfifo(fifo);
    lsp.fileEvent(fifo, 1);
    const after = join(repo, 'after.py');
    writeFileSync(after, 'def after_fifo():\n    return 2\n');
    lsp.fileEvent(after, 1);
    const status = await within(20_000, 'the status after the FIFO event', lsp.status());
    assert.equal(status.folders[0]?.state, 'ready');
    await within(
      20_000,
      'after.py indexed',
      lsp.waitForStatus((s) => (s.folders[0]?.files ?? 0) === 2, 20_000),
    );
    assert.equal((await lsp.status()).folders[0]?.files, 2, 'app.py and after.py; the FIFO is not a file of the index');
  } finally {
    // A server blocked opening the FIFO (before the fix) waits for a writer: one comes, for a second.
    spawnSync('timeout', ['1', 'sh', '-c', `: > '${join(repo, 'stream.py')}'`]);
    await lsp.close();
    // A server that hung in a read does not end on "exit": no process outlives the test.
    if (lsp.child.exitCode === null) lsp.child.kill('SIGKILL');
    dir.cleanup();
  }
});

void test('coderag complete on a FIFO named like a source file fails at once with the reason (no hang)', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, { 'app.py': 'def app_main():\n    return 1\n' });
    mkfifo(join(repo, 'pipe.py'));
    const r = await runCli(['complete', repo, 'pipe.py:1', '--index-dir', join(dir.path, 'cache'), '--no-dense'], {}, 30_000);
    assert.equal(r.code, 1, `exit 1, not killed after 30 s: ${r.stderr}`);
    assert.match(r.stderr, /pipe\.py: a named pipe \(FIFO\), not a regular file/);
    assert.equal(r.stdout, '');
  } finally {
    dir.cleanup();
  }
});

void test('a kb.index that is a FIFO, or a link to /dev/zero, is reported as not a regular file and replaced by a good index', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, { 'app.py': 'def app_main():\n    return 1\n', 'lib.py': 'def helper():\n    return 2\n' });
    const cache = join(dir.path, 'cache');
    const file = indexFilePath(indexFolderFor(cache, repo));
    for (const [label, plant, reason] of [
      ['FIFO', () => mkfifo(file), /named pipe \(FIFO\), not a regular file/],
      ['/dev/zero link', () => link('/dev/zero', file), /a device, not a regular file/],
    ] as const) {
      assert.equal((await runCli(['index', repo, '--index-dir', cache])).code, 0);
      rmSync(file);
      plant();
      const r = await runCli(['index', repo, '--index-dir', cache, '--json'], {}, 30_000);
      assert.equal(r.code, 0, `${label}: exit 0, not killed after 30 s: ${r.stderr}`);
      const report = JSON.parse(r.stdout) as IndexJson;
      assert.match((report.savedIndex as { invalid: string }).invalid, reason, label);
      assert.equal(report.files, 2);
      assert.ok(lstatSync(file).isFile(), `${label}: a regular index file took its place`);
      const next = JSON.parse((await runCli(['index', repo, '--index-dir', cache, '--json'])).stdout) as IndexJson;
      assert.deepEqual([next.savedIndex, next.reused], ['loaded', 2], label);
      assert.deepEqual(readdirSync(indexFolderFor(cache, repo)), ['kb.index'], 'no temp file left');
    }
  } finally {
    dir.cleanup();
  }
});

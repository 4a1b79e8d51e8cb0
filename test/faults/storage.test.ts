// Fault matrix, round 2 (README.md row 6): where the index is stored. A full disk, a read-only
// index folder and an empty XDG_CACHE_HOME, as `coderag index` shows them. The full and the
// read-only disk are real (a small tmpfs) where this process may mount one; the full disk is also
// simulated through the writer, so that the case is covered everywhere.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexFolderFor } from '../../src/engine/kb/store';
import { isStorageError, writeFileAtomic } from '../../src/engine/util/framedFile';
import { cliPath, tempDir } from '../helpers/paths';
import { buildOnce } from '../server/lspHarness';
import { coderag, writeManyFiles, writeTree, type IndexJson } from './helpers';

/** Mount a tmpfs of `size` at `path` (options such as `ro`); false where this process may not. */
function mountTmpfs(path: string, options: string): boolean {
  mkdirSync(path, { recursive: true });
  return spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', path]).status === 0;
}

function unmount(path: string): void {
  spawnSync('umount', [path]);
}

const isRoot = process.getuid?.() === 0;

void test('a save that hits a full disk removes its temp file and says "the disk is full (ENOSPC)" (simulated through the writer)', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'idx', 'kb.index');
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    await assert.rejects(
      writeFileAtomic(file, Buffer.alloc(4096), {
        writeFile: async (handle, data) => {
          await handle.write(Buffer.from(data).subarray(0, 1024));
          throw full;
        },
      }),
      (e: unknown) => isStorageError(e) && e.code === 'ENOSPC' && /cannot write .*kb\.index: the disk is full \(ENOSPC\)/.test(e.message),
    );
    assert.deepEqual(readdirSync(join(dir.path, 'idx')), [], 'no kb.index.*.tmp left behind');
  } finally {
    dir.cleanup();
  }
});

void test(
  'coderag index on a full disk (a 64 KB tmpfs): exit 1, "the disk is full (ENOSPC)", no temp file left; the space comes back',
  { skip: !isRoot && 'needs root to mount a tmpfs' },
  (t) => {
    const dir = tempDir();
    const disk = join(dir.path, 'disk');
    try {
      if (!mountTmpfs(disk, 'size=64k')) return t.skip('mount -t tmpfs is not allowed here');
      const repo = join(dir.path, 'repo');
      writeManyFiles(repo, 4, 100);
      for (let run = 0; run < 2; run++) {
        const r = coderag(['index', repo, '--index-dir', disk]);
        assert.equal(r.code, 1, `run ${run}: ${r.stdout}`);
        assert.match(r.stderr, /cannot write .*kb\.index: the disk is full \(ENOSPC\)/);
        assert.deepEqual(readdirSync(indexFolderFor(disk, repo)), [], `run ${run}: no kb.index.*.tmp left to keep the disk full`);
      }
      // The disk holds only the empty folder again: a small repository's index fits.
      const small = join(dir.path, 'small');
      writeTree(small, { 'a.py': 'def a():\n    return 1\n' });
      assert.equal(coderag(['index', small, '--index-dir', disk]).code, 0);
    } finally {
      unmount(disk);
      dir.cleanup();
    }
  },
);

void test('a read-only index folder is reported as such (EROFS or EACCES), not as ENOENT', (t) => {
  const dir = tempDir();
  const disk = join(dir.path, 'disk');
  let mounted = false;
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, { 'a.py': 'def a():\n    return 1\n' });
    let expected: RegExp;
    if (isRoot) {
      // Root writes through chmod: a read-only file system is the real thing.
      if (!mountTmpfs(disk, 'size=64k,ro')) return t.skip('mount -t tmpfs is not allowed here');
      mounted = true;
      expected = /the file system is read-only \(EROFS\)/;
    } else {
      mkdirSync(disk);
      chmodSync(disk, 0o555);
      expected = /permission denied \(EACCES\)/;
    }
    for (const indexDir of [disk, join(disk, 'deeper', 'still')]) {
      const r = coderag(['index', repo, '--index-dir', indexDir]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, expected, indexDir);
      assert.doesNotMatch(r.stderr, /ENOENT/);
    }
  } finally {
    if (mounted) unmount(disk);
    else if (existsSync(disk)) chmodSync(disk, 0o755);
    dir.cleanup();
  }
});

void test('an empty (or relative) XDG_CACHE_HOME counts as unset: the index goes to ~/.cache/coderag, not ./coderag in the current folder', () => {
  buildOnce();
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, { 'a.py': 'def a():\n    return 1\n' });
    const home = join(dir.path, 'home');
    const cwd = join(dir.path, 'cwd');
    mkdirSync(home);
    mkdirSync(cwd);
    writeFileSync(join(cwd, 'marker'), '');
    for (const xdg of ['', 'relative/cache']) {
      const r = spawnSync(process.execPath, [cliPath, 'index', repo, '--json'], {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, CODERAG_LOG: '', CODERAG_CACHE_DIR: '', HOME: home, XDG_CACHE_HOME: xdg },
      });
      assert.equal(r.status, 0, r.stderr);
      const report = JSON.parse(r.stdout) as IndexJson;
      assert.equal(
        report.indexPath,
        join(indexFolderFor(join(home, '.cache', 'coderag'), repo), 'kb.index'),
        `XDG_CACHE_HOME=${JSON.stringify(xdg)}`,
      );
      assert.deepEqual(readdirSync(cwd), ['marker'], 'nothing written in the current folder');
    }
  } finally {
    dir.cleanup();
  }
});

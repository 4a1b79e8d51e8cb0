import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  boundedExclude,
  checkPath,
  decodeSource,
  excludeMatcher,
  isTooManyFilesError,
  scanFolder,
  scanRepository,
  workspaceRootProblem,
} from '../../../src/engine/kb/scan';
import { tempDir } from '../../helpers/paths';

function makeRepo(root: string): void {
  const w = (p: string, data: string | Buffer): void => {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), data);
  };
  w('pkg/__init__.py', '');
  w('pkg/a.py', 'def f():\n    return 1\n');
  w('src/Main.java', 'class Main {}\n');
  w('README.md', '# not code\n');
  w('.gitignore', 'build/\n*.gen.py\n');
  w('build/out.py', 'x = 1\n');
  w('pkg/skip.gen.py', 'y = 2\n');
  w('pkg/sub/.gitignore', 'local_only.py\n');
  w('pkg/sub/local_only.py', 'z = 3\n');
  w('pkg/sub/kept.py', 'k = 4\n');
  w('.env', 'API_KEY=not-a-real-secret\n');
  w('.env.local', 'TOKEN=nothing\n');
  w('certs/server.pem', '-----BEGIN CERTIFICATE-----\n');
  w('keys/id_rsa', 'private\n');
  w('conf/aws_credentials.py', 'KEY = "x"\n');
  w('big.py', Buffer.alloc(1024 * 1024 + 10, 'a'));
  w('node_modules/dep/index.py', 'q = 1\n');
  mkdirSync(join(root, 'loop'), { recursive: true });
  symlinkSync('..', join(root, 'loop', 'up'));
  symlinkSync('self', join(root, 'self'));
}

test('scan keeps Python and Java sources and says why it skipped the rest', async () => {
  const dir = tempDir();
  try {
    makeRepo(dir.path);
    const result = await scanRepository(dir.path, {}, new AbortController().signal);
    assert.deepEqual(
      result.files.map((f) => [f.path, f.lang]),
      [
        ['pkg/__init__.py', 'python'],
        ['pkg/a.py', 'python'],
        ['pkg/sub/kept.py', 'python'],
        ['src/Main.java', 'java'],
      ],
    );
    const skipped = Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]));
    assert.equal(skipped['.env'], 'secret');
    assert.equal(skipped['.env.local'], 'secret');
    assert.equal(skipped['certs/server.pem'], 'secret');
    assert.equal(skipped['keys/id_rsa'], 'secret');
    assert.equal(skipped['conf/aws_credentials.py'], 'secret');
    assert.equal(skipped['big.py'], 'tooLarge');
    assert.equal(skipped['loop/up'], 'symlinkLoop');
    assert.equal(skipped['self'], 'symlinkLoop');
    // Ignored files are simply not there, neither indexed nor reported.
    for (const p of ['build/out.py', 'pkg/skip.gen.py', 'pkg/sub/local_only.py', 'node_modules/dep/index.py']) {
      assert.ok(!result.files.some((f) => f.path === p), `${p} must be ignored`);
    }
  } finally {
    dir.cleanup();
  }
});

test('scan honours a custom size cap and extra exclude globs', async () => {
  const dir = tempDir();
  try {
    makeRepo(dir.path);
    const result = await scanRepository(dir.path, { maxFileBytes: 10, exclude: ['src/'] }, new AbortController().signal);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['pkg/__init__.py', 'pkg/sub/kept.py'],
    );
    assert.equal(result.skipped.find((s) => s.path === 'pkg/a.py')?.reason, 'tooLarge');
  } finally {
    dir.cleanup();
  }
});

test('decodeSource refuses binary and non-UTF-8 content and strips a BOM', () => {
  assert.deepEqual(decodeSource(Buffer.from([0x78, 0x00, 0x01])).ok, false);
  const latin1 = decodeSource(Buffer.from('caf\xe9 = 1\n', 'latin1'));
  assert.equal(latin1.ok, false);
  assert.equal(!latin1.ok && latin1.reason, 'notUtf8');
  const bin = decodeSource(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00]));
  assert.equal(!bin.ok && bin.reason, 'binary');
  const bom = decodeSource(Buffer.from('\ufeffx = 1\n', 'utf8'));
  assert.equal(bom.ok && bom.text, 'x = 1\n');
});

test('checkPath agrees with the scan for single files', async () => {
  const dir = tempDir();
  try {
    makeRepo(dir.path);
    assert.deepEqual(await checkPath(dir.path, 'pkg/a.py'), { index: true, lang: 'python' });
    assert.deepEqual(await checkPath(dir.path, 'build/out.py'), { index: false, reason: 'ignored' });
    assert.deepEqual(await checkPath(dir.path, 'pkg/sub/local_only.py'), { index: false, reason: 'ignored' });
    assert.deepEqual(await checkPath(dir.path, '.env'), { index: false, reason: 'secret' });
    assert.deepEqual(await checkPath(dir.path, 'README.md'), { index: false, reason: 'notSource' });
  } finally {
    dir.cleanup();
  }
});

/** Make a file unreadable even for root (chmod 000 does not stop root): a link to a folder reads as EISDIR. */
function makeUnreadable(path: string): void {
  if (process.getuid?.() === 0) {
    rmSync(path);
    mkdirSync(`${path}.folder`);
    symlinkSync(`${path}.folder`, path);
  } else {
    chmodSync(path, 0o000);
  }
}

test('scan never follows a symlink out of the repository; links inside keep working', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    const outside = join(dir.path, 'outside');
    mkdirSync(join(repo, 'pkg'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(repo, 'pkg', 'a.py'), 'def f():\n    return 1\n');
    writeFileSync(join(outside, 'private.py'), 'TOKEN = "x"\n');
    symlinkSync(outside, join(repo, 'escape'));
    symlinkSync('..', join(repo, 'parent'));
    symlinkSync(join(outside, 'private.py'), join(repo, 'one.py'));
    symlinkSync('pkg/a.py', join(repo, 'alias.py'));
    const result = await scanRepository(repo, {}, new AbortController().signal);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['alias.py', 'pkg/a.py'],
    );
    const skipped = Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]));
    assert.deepEqual(skipped, { escape: 'symlinkOutside', 'one.py': 'symlinkOutside', parent: 'symlinkOutside' });
    assert.deepEqual(await checkPath(repo, 'escape/private.py'), { index: false, reason: 'symlinkOutside' });
    assert.deepEqual(await checkPath(repo, 'alias.py'), { index: true, lang: 'python' });
  } finally {
    dir.cleanup();
  }
});

test('an unreadable .gitignore hides the folder it governs; .git/info/exclude is honoured', async () => {
  const dir = tempDir();
  try {
    const w = (p: string, data: string): void => {
      mkdirSync(join(dir.path, p, '..'), { recursive: true });
      writeFileSync(join(dir.path, p), data);
    };
    w('pkg/a.py', 'a = 1\n');
    w('sub/.gitignore', 'hidden.py\n');
    w('sub/hidden.py', 'SECRET = "x"\n');
    w('sub/visible.py', 'v = 1\n');
    w('.git/info/exclude', 'local/\n');
    w('local/notes.py', 'n = 1\n');
    makeUnreadable(join(dir.path, 'sub', '.gitignore'));
    const result = await scanRepository(dir.path, {}, new AbortController().signal);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['pkg/a.py'],
    );
    assert.equal(result.skipped.find((s) => s.path === 'sub')?.reason, 'unreadableGitignore');
    assert.deepEqual(await checkPath(dir.path, 'sub/visible.py'), { index: false, reason: 'unreadableGitignore' });
    assert.deepEqual(await checkPath(dir.path, 'local/notes.py'), { index: false, reason: 'ignored' });
  } finally {
    dir.cleanup();
  }
});

test('names a prompt header cannot hold are skipped with their reason; a NUL anywhere means binary', async () => {
  const dir = tempDir();
  try {
    writeFileSync(join(dir.path, 'ok.py'), 'x = 1\n');
    writeFileSync(Buffer.concat([Buffer.from(`${dir.path}/caf`), Buffer.from([0xe9]), Buffer.from('.py')]), 'y = 1\n');
    writeFileSync(join(dir.path, 'evil\nname.py'), 'z = 1\n');
    const result = await scanRepository(dir.path, {}, new AbortController().signal);
    assert.deepEqual(
      result.files.map((f) => f.path),
      ['ok.py'],
    );
    assert.deepEqual(result.skipped.map((s) => s.reason).sort(), ['controlCharsInName', 'nameNotUtf8']);
    assert.ok(
      result.skipped.every((s) => !s.path.includes('\n')),
      'reported paths are escaped',
    );
  } finally {
    dir.cleanup();
  }
  const late = Buffer.concat([Buffer.from('x = 1\n'.repeat(2000)), Buffer.from([0]), Buffer.from('y = 2\n')]);
  assert.ok(late.indexOf(0) > 8192);
  const r = decodeSource(late);
  assert.equal(!r.ok && r.reason, 'binary');
});

test('more candidate files than maxFiles stop the scan; the root and the home folder are refused', async () => {
  const dir = tempDir();
  try {
    for (const n of ['a', 'b', 'c']) writeFileSync(join(dir.path, `${n}.py`), `${n} = 1\n`);
    await assert.rejects(
      scanRepository(dir.path, { maxFiles: 2 }, new AbortController().signal),
      (e: unknown) => isTooManyFilesError(e) && /more than 2 source files/.test(e.message),
    );
    assert.equal((await scanRepository(dir.path, { maxFiles: 3 }, new AbortController().signal)).files.length, 3);
    assert.match(workspaceRootProblem(dir.path, dir.path) ?? '', /home folder/);
    assert.match(workspaceRootProblem('/', dir.path) ?? '', /root of the file system/);
    assert.equal(workspaceRootProblem(dir.path, '/nonexistent-home'), undefined);
  } finally {
    dir.cleanup();
  }
});

test("a linked worktree honours its main repository's info/exclude, as git does", async () => {
  const dir = tempDir();
  try {
    const main = join(dir.path, 'main');
    const wt = join(dir.path, 'wt');
    mkdirSync(join(main, '.git', 'info'), { recursive: true });
    mkdirSync(join(main, '.git', 'worktrees', 'wt'), { recursive: true });
    writeFileSync(join(main, '.git', 'info', 'exclude'), 'scratch/\n');
    writeFileSync(join(main, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
    mkdirSync(join(wt, 'scratch'), { recursive: true });
    writeFileSync(join(wt, '.git'), `gitdir: ${join(main, '.git', 'worktrees', 'wt')}\n`);
    writeFileSync(join(wt, 'a.py'), 'a = 1\n');
    writeFileSync(join(wt, 'scratch', 'b.py'), 'b = 1\n');
    assert.deepEqual(
      (await scanRepository(wt, {}, new AbortController().signal)).files.map((f) => f.path),
      ['a.py'],
    );
    assert.deepEqual(await checkPath(wt, 'scratch/b.py'), { index: false, reason: 'ignored' });
  } finally {
    dir.cleanup();
  }
});

void test('an exclude list is compiled once; past 1,000 globs, or past 1,000 characters a glob, the rest are not used and the problems say so', () => {
  const globs = Array.from({ length: 1500 }, (_, i) => `gen${i}/**`);
  assert.equal(excludeMatcher(globs), excludeMatcher([...globs]), 'the same list is not compiled again');
  assert.equal(excludeMatcher(globs).ignores('gen999/a.py'), true);
  assert.equal(excludeMatcher(globs).ignores('gen1000/a.py'), false, 'the 1,001st glob is not used');
  const bounded = boundedExclude([...globs, 'x'.repeat(1001)]);
  assert.equal(bounded.globs.length, 1000);
  assert.deepEqual(bounded.problems, [
    '1 excluded glob(s) longer than 1000 characters are not used',
    '1500 excluded globs: only the first 1000 are used',
  ]);
});

/** Run `work` with the environment variables `vars` set (undefined: unset), restoring them after. */
async function withEnv<T>(vars: Record<string, string | undefined>, work: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const put = (values: Record<string, string | undefined>): void => {
    for (const [k, v] of Object.entries(values)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
  put(vars);
  try {
    return await work();
  } finally {
    put(saved);
  }
}

void test('a saved or watched file (checkPath) and a rescanned folder (scanFolder) leave out what the global excludes file ignores, with git and without', async () => {
  const dir = tempDir();
  try {
    const home = join(dir.path, 'home');
    mkdirSync(join(home, '.config', 'git'), { recursive: true });
    writeFileSync(join(home, '.config', 'git', 'ignore'), 'private_*.py\nscratch/\n');
    const repo = join(dir.path, 'repo');
    mkdirSync(join(repo, 'pkg', 'scratch'), { recursive: true });
    writeFileSync(join(repo, 'pkg', 'a.py'), 'a = 1\n');
    writeFileSync(join(repo, 'pkg', 'private_notes.py'), 'n = 1\n');
    writeFileSync(join(repo, 'pkg', 'scratch', 'b.py'), 'b = 1\n');
    const noGit = join(dir.path, 'no-git-bin');
    mkdirSync(noGit);
    const env = { HOME: home, XDG_CONFIG_HOME: undefined, GIT_CONFIG_GLOBAL: undefined, GIT_CONFIG_NOSYSTEM: '1' };
    assert.equal(spawnSync('git', ['init', '-q', repo], { env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' } }).status, 0);
    for (const [label, path] of [
      ['git', process.env.PATH],
      ['no git', noGit],
    ] as const) {
      await withEnv({ ...env, PATH: path }, async () => {
        assert.deepEqual(await checkPath(repo, 'pkg/a.py'), { index: true, lang: 'python' });
        assert.deepEqual(await checkPath(repo, 'pkg/private_notes.py'), { index: false, reason: 'ignored' }, label);
        assert.deepEqual(await checkPath(repo, 'pkg/scratch/b.py'), { index: false, reason: 'ignored' }, label);
        const folder = await scanFolder(repo, 'pkg', {}, new AbortController().signal);
        assert.deepEqual(
          folder.files.map((f) => f.path),
          ['pkg/a.py'],
          label,
        );
        assert.deepEqual((await scanFolder(repo, 'pkg/scratch', {}, new AbortController().signal)).files, [], label);
      });
    }
  } finally {
    dir.cleanup();
  }
});

// Fault matrix, files (README.md rows 4, 8, 10, 11): what `coderag index` does with hostile
// repository contents, as a user sees it — the knowledge base's contents (`coderag kb`) and the
// report of skipped files.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/paths';
import { coderag, link, makeUnreadable, writeTree, type IndexJson } from './helpers';

function indexJson(repo: string, cache: string, extra: string[] = []): IndexJson {
  const r = coderag(['index', repo, '--json', '--index-dir', cache, ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as IndexJson;
}

function hasItem(repo: string, cache: string, name: string, extra: string[] = []): boolean {
  const r = coderag(['kb', repo, '--name', name, '--index-dir', cache, ...extra]);
  assert.ok(r.code === 0 || /no knowledge-base item named/.test(r.stderr), r.stderr);
  return r.code === 0;
}

void test('symlinks out of the repository (a folder, the parent, a file) are not followed and are reported as "symlink outside"; links inside still work', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    const outside = join(dir.path, 'outside');
    writeTree(repo, { 'pkg/a.py': 'def inside_function():\n    return 1\n' });
    writeTree(outside, { 'private.py': 'def leaked_function():\n    return "home folder"\n' });
    link(outside, join(repo, 'escape'));
    link('..', join(repo, 'parent'));
    link(join(outside, 'private.py'), join(repo, 'one.py'));
    link('pkg/a.py', join(repo, 'alias.py'));
    const cache = join(dir.path, 'cache');
    const report = indexJson(repo, cache);
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]));
    assert.equal(reasons.escape, 'symlinkOutside');
    assert.equal(reasons.parent, 'symlinkOutside');
    assert.equal(reasons['one.py'], 'symlinkOutside');
    assert.equal(report.files, 2, 'pkg/a.py and the link inside, alias.py');
    assert.equal(hasItem(repo, cache, 'leaked_function'), false, 'nothing from outside is in the knowledge base');
    assert.equal(hasItem(repo, cache, 'inside_function'), true);
    const text = coderag(['index', repo, '--index-dir', cache]);
    assert.match(text.stdout, /symlink outside +escape \(points to /);
  } finally {
    dir.cleanup();
  }
});

void test('an unreadable .gitignore hides the folder it governs (reported "unreadable .gitignore"); .git/info/exclude is honoured', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, {
      'pkg/a.py': 'def kept_function():\n    return 1\n',
      'conf/.gitignore': 'prod_settings.py\n',
      'conf/prod_settings.py': 'def hidden_by_gitignore():\n    return "password"\n',
      '.git/info/exclude': 'scratch/\n',
      'scratch/notes.py': 'def hidden_by_exclude():\n    return 1\n',
    });
    makeUnreadable(join(repo, 'conf', '.gitignore'));
    const cache = join(dir.path, 'cache');
    const report = indexJson(repo, cache);
    assert.equal(report.skipped.find((s) => s.path === 'conf')?.reason, 'unreadableGitignore');
    assert.equal(hasItem(repo, cache, 'hidden_by_gitignore'), false, 'fail closed: the folder is not indexed');
    assert.equal(hasItem(repo, cache, 'hidden_by_exclude'), false, '.git/info/exclude is honoured');
    assert.equal(hasItem(repo, cache, 'kept_function'), true);
    assert.match(coderag(['index', repo, '--index-dir', cache]).stdout, /unreadable \.gitignore +conf \(conf\/\.gitignore: /);
  } finally {
    dir.cleanup();
  }
});

void test('a non-UTF-8 file name is reported as "file name not UTF-8" (not ENOENT); a newline in a name is skipped; a NUL after 8 KiB is binary', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    mkdirSync(repo);
    writeFileSync(join(repo, 'ok.py'), 'def ok_function():\n    return 1\n');
    writeFileSync(
      Buffer.concat([Buffer.from(`${repo}/caf`), Buffer.from([0xe9]), Buffer.from('.py')]),
      'def latin1_named():\n    return 1\n',
    );
    writeFileSync(join(repo, 'two\nlines.py'), 'def newline_named():\n    return 1\n');
    writeFileSync(
      join(repo, 'late_nul.py'),
      Buffer.concat([Buffer.from('x = 1\n'.repeat(2000)), Buffer.from([0]), Buffer.from('def after_nul():\n    return 1\n')]),
    );
    const cache = join(dir.path, 'cache');
    const report = indexJson(repo, cache);
    const reasons = report.skipped.map((s) => s.reason).sort();
    assert.deepEqual(reasons, ['binary', 'controlCharsInName', 'nameNotUtf8']);
    assert.ok(!report.skipped.some((s) => /ENOENT/.test(s.detail ?? '')));
    assert.equal(report.files, 1);
    assert.equal(hasItem(repo, cache, 'newline_named'), false, 'no prompt header can carry the newline');
    assert.equal(hasItem(repo, cache, 'after_nul'), false);
    const text = coderag(['index', repo, '--index-dir', cache]).stdout;
    assert.match(text, /file name not UTF-8/);
    assert.match(text, /control characters in the name +two\\nlines\.py/);
  } finally {
    dir.cleanup();
  }
});

void test('the home folder and / are refused with exit 1 unless --force; more files than --max-files stop with exit 1', () => {
  const dir = tempDir();
  try {
    const home = join(dir.path, 'home');
    writeTree(home, { 'a.py': 'a = 1\n', 'b.py': 'b = 1\n', 'c.py': 'c = 1\n' });
    const cache = join(dir.path, 'cache');
    const refused = coderag(['index', home, '--index-dir', cache], { HOME: home });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is your home folder: not indexed; .*--force/);
    assert.equal(refused.stderr.trim().split('\n').length, 1, 'one clear line');
    const root = coderag(['index', '/', '--index-dir', cache], { HOME: home });
    assert.equal(root.code, 1);
    assert.match(root.stderr, /root of the file system/);
    const forced = coderag(['index', home, '--index-dir', cache, '--force', '--json'], { HOME: home });
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal((JSON.parse(forced.stdout) as IndexJson).files, 3);
    const tooMany = coderag(['index', home, '--index-dir', cache, '--force', '--max-files', '2']);
    assert.equal(tooMany.code, 1);
    assert.match(tooMany.stderr, /more than 2 source files under .*--max-files/);
    assert.equal(coderag(['index', home, '--index-dir', cache, '--force', '--max-files', 'many']).code, 2);
  } finally {
    dir.cleanup();
  }
});

// The cases the hostile probe found already handled (README.md "The 23 that already passed"), kept here so the matrix stays complete.

void test('binary, huge, non-UTF-8 and named-pipe files are skipped with their reason; a BOM and an empty file are indexed; the run ends with exit 0', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, {
      'ok.py': 'def ok_function():\n    return 1\n',
      'bom.py': '\ufeffdef bom_function():\n    return 1\n',
      'empty.py': '',
      'blob.py': Buffer.concat([Buffer.from('def in_binary():\n'), Buffer.from([0, 1, 2, 0xff]), Buffer.from('    return 1\n')]),
      'big.py': `def in_huge_file():\n    return 1\n${'x = 1\n'.repeat(200_000)}`,
      'latin1.py': Buffer.from('def latin1_body():\n    return "caf\xe9"\n', 'latin1'),
    });
    // A FIFO named like a source file: reading it would block the indexer forever.
    assert.equal(spawnSync('mkfifo', [join(repo, 'pipe.py')]).status, 0);
    const cache = join(dir.path, 'cache');
    const report = indexJson(repo, cache);
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]));
    assert.deepEqual(reasons, { 'blob.py': 'binary', 'big.py': 'tooLarge', 'latin1.py': 'notUtf8' });
    assert.equal(report.files, 3, 'ok.py, bom.py and empty.py');
    assert.equal(hasItem(repo, cache, 'bom_function'), true, 'a BOM does not hide the file');
    for (const name of ['in_binary', 'in_huge_file', 'latin1_body']) assert.equal(hasItem(repo, cache, name), false, name);
    assert.match(coderag(['index', repo, '--index-dir', cache]).stdout, /too large +big\.py/);
    const raised = indexJson(repo, cache, ['--max-file-bytes', '3000000']);
    assert.equal(raised.files, 4, 'a higher --max-file-bytes takes the huge file in');
    assert.equal(hasItem(repo, cache, 'in_huge_file', ['--max-file-bytes', '3000000']), true);
  } finally {
    dir.cleanup();
  }
});

void test('symlink loops (two links to each other, a link to itself, a folder link to an ancestor) and a dangling link end the scan; each file is indexed once', () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, { 'pkg/real.py': 'def real_function():\n    return 1\n' });
    link('b.py', join(repo, 'a.py'));
    link('a.py', join(repo, 'b.py'));
    link('self.py', join(repo, 'self.py'));
    link('..', join(repo, 'pkg', 'up'));
    link('missing.py', join(repo, 'dangling.py'));
    const cache = join(dir.path, 'cache');
    const report = indexJson(repo, cache);
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]));
    assert.deepEqual(reasons, { 'a.py': 'symlinkLoop', 'b.py': 'symlinkLoop', 'self.py': 'symlinkLoop', 'pkg/up': 'symlinkLoop' });
    assert.equal(report.files, 1, 'pkg/real.py once, not again through pkg/up');
    assert.equal(hasItem(repo, cache, 'real_function'), true);
  } finally {
    dir.cleanup();
  }
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import {
  fetchPackages,
  FETCH_MARKER,
  isBinaryPackage,
  parsePackageList,
  pickTarball,
  sourceListFrom,
  spawnCommand,
  type CommandRunner,
} from '../../src/bench/fetch';
import { tempDir } from '../helpers/paths';

void test('package lists: one name a line, # comments, duplicates once, bad names refused', () => {
  assert.deepEqual(parsePackageList('# dev repos\njinja2\n\n  toolz  # fast\njinja2\nlibcommons-lang3-java\n'), [
    'jinja2',
    'toolz',
    'libcommons-lang3-java',
  ]);
  assert.throws(() => parsePackageList('ok\nrm -rf /\n'), /not a Debian package name/);
});

void test('deb sources become deb-src; the upstream tarball is picked over the Debian one', () => {
  assert.equal(sourceListFrom('Types: deb\nURIs: http://x\n', true), 'Types: deb-src\nURIs: http://x\n');
  assert.equal(sourceListFrom('deb http://x bookworm main\n', false), 'deb-src http://x bookworm main\n');
  assert.equal(pickTarball(['p_1.0-1.debian.tar.xz', 'p_1.0-1.dsc', 'p_1.0.orig.tar.gz']), 'p_1.0.orig.tar.gz');
  assert.equal(pickTarball(['n_2.dsc', 'n_2.tar.xz']), 'n_2.tar.xz');
  assert.equal(pickTarball(['p_1.0-1.debian.tar.xz']), undefined);
});

/** A fake apt-get: `update` succeeds, `source` writes a real upstream tarball for known packages. */
function fakeApt(work: string, calls: string[][]): CommandRunner {
  return async (command, args, cwd, signal) => {
    if (command !== 'apt-get') return spawnCommand(command, args, cwd, signal);
    calls.push([...args]);
    const verb = args.includes('update') ? 'update' : 'source';
    if (verb === 'update') return { code: 0, stdout: '', stderr: '' };
    const pkg = args[args.length - 1]!;
    if (pkg === 'missing-pkg')
      return { code: 100, stdout: '', stderr: 'Reading package lists...\nE: Unable to find a source package for missing-pkg' };
    const src = join(work, `${pkg}-1.0`);
    mkdirSync(join(src, 'lib'), { recursive: true });
    writeFileSync(join(src, 'lib', 'mod.py'), 'def f():\n    return 1\n');
    execFileSync('tar', ['-czf', join(cwd, `${pkg}_1.0.orig.tar.gz`), '-C', work, `${pkg}-1.0`]);
    writeFileSync(join(cwd, `${pkg}_1.0-1.debian.tar.xz`), 'not used');
    return { code: 0, stdout: '', stderr: '' };
  };
}

void test('fetch unpacks the upstream tarball without its top folder, writes a marker, reports failures, and is idempotent', async () => {
  const dir = tempDir();
  try {
    const dest = join(dir.path, 'dest');
    const sources = join(dir.path, 'debian.sources');
    writeFileSync(sources, 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n');
    const calls: string[][] = [];
    const run = fakeApt(dir.path, calls);
    const first = await fetchPackages({ packages: ['alpha', 'missing-pkg'], dest, aptSources: sources, run });
    assert.deepEqual(
      first.map((r) => [r.package, r.status]),
      [
        ['alpha', 'ok'],
        ['missing-pkg', 'failed'],
      ],
    );
    assert.match(first[1]!.reason ?? '', /Unable to find a source package/);
    assert.equal(readFileSync(join(dest, 'alpha', 'lib', 'mod.py'), 'utf8'), 'def f():\n    return 1\n');
    assert.ok(existsSync(join(dest, 'alpha', FETCH_MARKER)));
    assert.ok(readFileSync(join(dest, '.apt', 'src.sources'), 'utf8').startsWith('Types: deb-src'));
    assert.equal(calls.filter((c) => c.includes('update')).length, 1);
    assert.ok(
      calls.every((c) => c.includes(`Dir::State::Lists=${join(dest, '.apt', 'lists')}`)),
      'apt runs on the private state',
    );

    calls.length = 0;
    const second = await fetchPackages({ packages: ['alpha', 'missing-pkg'], dest, aptSources: sources, run });
    assert.deepEqual(
      second.map((r) => [r.package, r.status]),
      [
        ['alpha', 'cached'],
        ['missing-pkg', 'failed'],
      ],
    );
    assert.equal(calls.filter((c) => c.includes('update')).length, 0, 'apt-get update is cached');
    assert.equal(calls.length, 1, 'only the failed package is tried again');
  } finally {
    dir.cleanup();
  }
});

void test('a destination whose packages are all unpacked runs no command at all', async () => {
  const dir = tempDir();
  try {
    mkdirSync(join(dir.path, 'alpha'));
    writeFileSync(join(dir.path, 'alpha', FETCH_MARKER), '{}');
    const run: CommandRunner = () => Promise.reject(new Error('no command may run'));
    const results = await fetchPackages({ packages: ['alpha'], dest: dir.path, run });
    assert.deepEqual(results, [{ package: 'alpha', status: 'cached', folder: join(dir.path, 'alpha') }]);
    assert.ok(!existsSync(join(dir.path, '.apt')));
  } finally {
    dir.cleanup();
  }
});

/** A fake apt-get whose `download` builds a real binary package (a python3-* library) with dpkg-deb. */
function fakeAptBinary(work: string, calls: string[][]): CommandRunner {
  return async (command, args, cwd, signal) => {
    if (command !== 'apt-get') return spawnCommand(command, args, cwd, signal);
    calls.push([...args]);
    if (args.includes('update')) return { code: 0, stdout: '', stderr: '' };
    if (args.includes('source')) return { code: 100, stdout: '', stderr: 'E: Unable to find a source package' };
    const pkg = args[args.length - 1]!;
    const tree = join(work, `tree-${pkg}`);
    mkdirSync(join(tree, 'DEBIAN'), { recursive: true });
    writeFileSync(
      join(tree, 'DEBIAN', 'control'),
      `Package: ${pkg}\nVersion: 1.0-1\nArchitecture: all\nMaintainer: x <x@example.org>\nDescription: test\n`,
    );
    mkdirSync(join(tree, 'usr', 'lib', 'python3', 'dist-packages', 'click'), { recursive: true });
    writeFileSync(join(tree, 'usr', 'lib', 'python3', 'dist-packages', 'click', 'core.py'), 'class Command:\n    pass\n');
    mkdirSync(join(tree, 'usr', 'share', 'doc', pkg), { recursive: true });
    writeFileSync(join(tree, 'usr', 'share', 'doc', pkg, 'copyright'), 'BSD\n');
    execFileSync('dpkg-deb', ['--build', tree, join(cwd, `${pkg}_1.0-1_all.deb`)], { stdio: 'ignore' });
    return { code: 0, stdout: '', stderr: '' };
  };
}

void test('a python3-* name is a binary package: downloaded, unpacked with dpkg-deb, its dist-packages folder kept', async () => {
  const dir = tempDir();
  try {
    const dest = join(dir.path, 'dest');
    const sources = join(dir.path, 'debian.sources');
    writeFileSync(sources, 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n');
    const calls: string[][] = [];
    const results = await fetchPackages({ packages: ['python3-click'], dest, aptSources: sources, run: fakeAptBinary(dir.path, calls) });
    assert.deepEqual(
      results.map((r) => [r.package, r.status]),
      [['python3-click', 'ok']],
      results[0]?.reason,
    );
    assert.equal(readFileSync(join(dest, 'python3-click', 'click', 'core.py'), 'utf8'), 'class Command:\n    pass\n');
    assert.ok(!existsSync(join(dest, 'python3-click', 'usr')), 'only the modules are kept');
    assert.ok(existsSync(join(dest, 'python3-click', FETCH_MARKER)));
    assert.ok(calls.some((c) => c.includes('download')) && !calls.some((c) => c.includes('source')), 'apt-get download, never source');
    assert.match(readFileSync(join(dest, '.apt', 'src.sources'), 'utf8'), /^Types: deb deb-src$/m, 'the binary lists are read too');
  } finally {
    dir.cleanup();
  }
});

void test('one-line source lists keep their binary entries when a binary package is asked for', () => {
  assert.equal(sourceListFrom('deb http://x bookworm main\n', false, true), 'deb http://x bookworm main\ndeb-src http://x bookworm main\n');
  assert.equal(isBinaryPackage('python3-click'), true);
  assert.equal(isBinaryPackage('python-h11'), false);
});

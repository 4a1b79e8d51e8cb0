import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkPath, decodeSource, scanRepository } from '../../../src/engine/kb/scan';
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
    const result = await scanRepository(dir.path);
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
    const result = await scanRepository(dir.path, { maxFileBytes: 10, exclude: ['src/'] });
    assert.deepEqual(result.files.map((f) => f.path), ['pkg/__init__.py', 'pkg/sub/kept.py']);
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

// The `coderag` CLI as a user runs it: the built bin/coderag.js in a child process.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath, copyFixture, fixturesDir, tempDir } from '../helpers/paths';

function coderag(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface ExpectedFixture {
  files: Record<string, { items: { kind: string }[]; classes: unknown[] }>;
}

function expectedCounts(fixture: string): Record<string, number> {
  const expected = JSON.parse(readFileSync(join(fixturesDir, `${fixture}.expected.json`), 'utf8')) as ExpectedFixture;
  const counts: Record<string, number> = { function: 0, classFunction: 0, classVariable: 0, globalVariable: 0, class: 0 };
  for (const file of Object.values(expected.files)) {
    for (const item of file.items) counts[item.kind] = (counts[item.kind] ?? 0) + 1;
    counts.class = (counts.class ?? 0) + file.classes.length;
  }
  return counts;
}

for (const fixture of ['pyshop', 'javashop']) {
  test(`coderag index ${fixture} prints the counts per kind that the fixture's expectations give`, () => {
    const cache = tempDir();
    try {
      const r = coderag(['index', join(fixturesDir, fixture), '--index-dir', cache.path]);
      assert.equal(r.code, 0, r.stderr);
      const counts = expectedCounts(fixture);
      for (const [kind, n] of Object.entries(counts)) {
        assert.match(r.stdout, new RegExp(`^  ${kind} +${n.toLocaleString('en-US')}$`, 'm'), `${kind} ${n}`);
      }
      assert.match(r.stdout, /lines\/s/);
      const json = coderag(['index', join(fixturesDir, fixture), '--index-dir', cache.path, '--json']);
      assert.equal(json.code, 0, json.stderr);
      const report = JSON.parse(json.stdout) as {
        items: Record<string, number>;
        classes: number;
        parsed: number;
        reused: number;
        files: number;
      };
      assert.equal(report.parsed, 0, 'second run loads from disk');
      assert.equal(report.reused, report.files);
      for (const [kind, n] of Object.entries(counts)) assert.equal(kind === 'class' ? report.classes : report.items[kind], n, kind);
    } finally {
      cache.cleanup();
    }
  });
}

test('coderag index reports the skipped files with their reasons', () => {
  const repo = copyFixture('pyshop');
  try {
    const r = coderag(['index', repo.path, '--json'], { CODERAG_CACHE_DIR: join(repo.path, '..', 'cache') });
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { skipped: { path: string; reason: string }[]; indexPath: string };
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.path, s.reason]));
    assert.equal(reasons['.env'], 'secret');
    assert.equal(reasons['secrets.pem'], 'secret');
    assert.equal(reasons['pyshop/legacy_latin1.py'], 'notUtf8');
    assert.ok(report.indexPath.startsWith(join(repo.path, '..', 'cache')), 'CODERAG_CACHE_DIR is honoured');
  } finally {
    repo.cleanup();
  }
});

test('coderag kb prints the stub of a named item', () => {
  const cache = tempDir();
  try {
    const r = coderag(['kb', join(fixturesDir, 'javashop'), '--name', 'Cart', '--index-dir', cache.path]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\/\/ src\/main\/java\/com\/example\/shop\/model\/Cart\.java/);
    const missing = coderag(['kb', join(fixturesDir, 'javashop'), '--name', 'NoSuchThing', '--index-dir', cache.path]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no knowledge-base item named "NoSuchThing"/);
  } finally {
    cache.cleanup();
  }
});

test('bad arguments exit 2, a missing repository exits 1 with a one-line reason', () => {
  assert.equal(coderag([]).code, 2);
  assert.equal(coderag(['index']).code, 2);
  assert.equal(coderag(['index', 'a', 'b']).code, 2);
  assert.equal(coderag(['index', '.', '--bogus']).code, 2);
  assert.equal(coderag(['frobnicate']).code, 2);
  assert.equal(coderag(['index', '.', '--max-file-bytes', 'lots']).code, 2);
  const r = coderag(['index', '/definitely/not/here']);
  assert.equal(r.code, 1);
  assert.equal(r.stderr.trim().split('\n').length, 1);
  assert.match(r.stderr, /repository folder not found/);
});

import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FETCH_MARKER } from '../../src/bench/fetch';
import { cliPath, fixturesDir, tempDir } from '../helpers/paths';

function cli(args: string[], env: Record<string, string> = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

void test('bench: a missing or unknown subcommand is a usage error (exit 2)', () => {
  assert.equal(cli(['bench']).code, 2);
  const r = cli(['bench', 'nope']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown subcommand "nope"/);
});

void test('bench fetch: argument handling', () => {
  const dir = tempDir();
  try {
    assert.equal(cli(['bench', 'fetch']).code, 2);
    assert.equal(cli(['bench', 'fetch', 'only-one']).code, 2);
    const missing = cli(['bench', 'fetch', join(dir.path, 'nope.txt'), join(dir.path, 'dest')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /package list not found/);
    const list = join(dir.path, 'list.txt');
    writeFileSync(list, '# nothing\n');
    assert.match(cli(['bench', 'fetch', list, join(dir.path, 'dest')]).stderr, /names no packages/);
    writeFileSync(list, 'Bad Name\n');
    assert.match(cli(['bench', 'fetch', list, join(dir.path, 'dest')]).stderr, /not a Debian package name/);
  } finally {
    dir.cleanup();
  }
});

void test('bench fetch: a destination already unpacked is left alone and reported cached (no network)', () => {
  const dir = tempDir();
  try {
    const list = join(dir.path, 'list.txt');
    writeFileSync(list, '# dev\njinja2\ntoolz # fast\n');
    const dest = join(dir.path, 'dest');
    for (const p of ['jinja2', 'toolz']) {
      mkdirSync(join(dest, p), { recursive: true });
      writeFileSync(join(dest, p, FETCH_MARKER), '{}');
      writeFileSync(join(dest, p, 'keep.py'), 'x = 1\n');
    }
    for (let i = 0; i < 2; i++) {
      const r = cli(['bench', 'fetch', list, dest]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /cached\s+jinja2/);
      assert.match(r.stdout, /cached\s+toolz/);
      assert.match(r.stdout, /2\/2 packages ready/);
    }
    assert.equal(readFileSync(join(dest, 'toolz', 'keep.py'), 'utf8'), 'x = 1\n');
    assert.ok(!existsSync(join(dest, '.apt')), 'apt was never run');
    const json = cli(['bench', 'fetch', list, dest, '--json']);
    assert.deepEqual(
      (JSON.parse(json.stdout) as { results: { status: string }[] }).results.map((x) => x.status),
      ['cached', 'cached'],
    );
  } finally {
    dir.cleanup();
  }
});

void test('bench build: argument errors', () => {
  assert.match(cli(['bench', 'build', '--lang', 'python']).stderr, /--repos is required/);
  assert.match(
    cli(['bench', 'build', '--repos', '.', '--out', 'x', '--lang', 'go', '--per-repo', '1']).stderr,
    /--lang must be python or java/,
  );
  assert.match(
    cli(['bench', 'build', '--repos', '.', '--out', 'x', '--lang', 'java', '--per-repo', '0']).stderr,
    /--per-repo must be a positive integer/,
  );
  assert.match(
    cli(['bench', 'build', '--repos', '.', '--out', 'x', '--lang', 'java', '--per-repo', '1', '--task', 'file']).stderr,
    /--task must be line, body or dot/,
  );
  const r = cli(['bench', 'build', '--repos', '/nonexistent-dir', '--out', 'x', '--lang', 'java', '--per-repo', '1']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /repositories folder not found/);
});

void test('bench build: mines every repository folder into CCEval lines, deterministically', () => {
  const dir = tempDir();
  try {
    const repos = join(dir.path, 'repos');
    mkdirSync(repos);
    cpSync(join(fixturesDir, 'pyshop'), join(repos, 'pyshop'), { recursive: true });
    cpSync(join(fixturesDir, 'benchrepos', 'minipy'), join(repos, 'minipy'), { recursive: true });
    cpSync(join(fixturesDir, 'javashop'), join(repos, 'javashop'), { recursive: true });
    const run = (out: string): string => {
      const r = cli([
        'bench',
        'build',
        '--repos',
        repos,
        '--lang',
        'python',
        '--task',
        'line',
        '--per-repo',
        '3',
        '--seed',
        '7',
        '--out',
        out,
        '--index-dir',
        join(dir.path, 'index'),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /wrote 6 line cases from 3 repositories/);
      assert.match(r.stderr, /javashop: 0 python files/);
      return readFileSync(out, 'utf8');
    };
    const a = run(join(dir.path, 'a.jsonl'));
    const b = run(join(dir.path, 'b.jsonl'));
    assert.equal(a, b);
    const cases = a
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            prompt: string;
            groundtruth: string;
            right_context: string;
            metadata: { task_id: string; repository: string; file: string };
          },
      );
    assert.deepEqual(
      cases.map((c) => c.metadata.task_id),
      ['minipy/0', 'minipy/1', 'minipy/2', 'pyshop/0', 'pyshop/1', 'pyshop/2'],
    );
    for (const c of cases) {
      const text = readFileSync(join(repos, c.metadata.repository, c.metadata.file), 'utf8').replace(/\r\n/g, '\n');
      assert.equal(c.prompt + c.groundtruth + '\n' + c.right_context, text);
    }
    // bench midline: the same cases with the cursor inside the first cross-file name of the line.
    const mid = cli(['bench', 'midline', '--cases', join(dir.path, 'a.jsonl'), '--out', join(dir.path, 'mid.jsonl')]);
    assert.equal(mid.code, 0, mid.stderr);
    const midCases = readFileSync(join(dir.path, 'mid.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: string; groundtruth: string; metadata: { task_id: string } });
    assert.match(mid.stdout, new RegExp(`wrote ${midCases.length} mid-line cases \\(of 6;`));
    assert.ok(midCases.length > 0);
    for (const m of midCases) {
      const original = cases.find((c) => `${c.metadata.task_id}/mid` === m.metadata.task_id);
      assert.ok(original, m.metadata.task_id);
      assert.equal(m.prompt + m.groundtruth, original.prompt + original.groundtruth);
      assert.ok(m.prompt.length > original.prompt.length && !m.prompt.endsWith('\n'), 'the cursor is inside the line');
    }
    assert.equal(cli(['bench', 'midline', '--cases', join(dir.path, 'a.jsonl')]).code, 2);
  } finally {
    dir.cleanup();
  }
});

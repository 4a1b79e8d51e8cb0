// Citations of the benchmarks pages by section (`docs/BENCHMARKS.md "Prompt recall"`) name a heading
// the page has: scripts/checkDocCitations.mjs over this repository's tracked files, and over a small
// repository whose citations are broken in the ways a split page breaks them.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../helpers/paths';

const script = join(repoRoot, 'scripts', 'checkDocCitations.mjs');

function check(root?: string): { status: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [script, ...(root ? ['--root', root] : [])], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

function gitRepo(files: Record<string, string>): { path: string; cleanup: () => void } {
  const dir = tempDir('coderag-citations-');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(dir.path, file, '..'), { recursive: true });
    writeFileSync(join(dir.path, file), text);
  }
  for (const args of [
    ['init', '-q'],
    ['add', '.'],
  ]) {
    const r = spawnSync('git', args, { cwd: dir.path, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  }
  return dir;
}

const PAGES = {
  'docs/BENCHMARKS.md': [
    '# Benchmarks',
    '## Prompt recall',
    '### Typing replay (0.5B)',
    '```',
    '# Commands in a fence are no heading',
    '```',
    '',
  ].join('\n'),
  'docs/BENCHMARKS-history.md': ['# History', '#### Moving session (2026-12-07)', ''].join('\n'),
};

void test("every citation of a benchmarks page's section in this repository names a heading of that page", () => {
  const { status, out, err } = check();
  assert.equal(status, 0, err);
  const count = Number(/^(\d+) citations/.exec(out)?.[1]);
  // The repository cites the pages from docs, code and tests well over fifty times; far fewer
  // found means the check stopped seeing them.
  assert.ok(count >= 50, out);
});

void test('citations that wrap over comment lines, list several names or name the history page resolve', () => {
  const repo = gitRepo({
    ...PAGES,
    'src/a.ts': [
      '// the window (docs/BENCHMARKS.md "Typing',
      '// replay"), and (docs/BENCHMARKS.md "Prompt recall", "Typing replay"),',
      ' * and docs/BENCHMARKS-history.md',
      ' * "Moving session".',
      '',
    ].join('\n'),
    'README.md': 'See docs/BENCHMARKS.md ("Prompt recall").\n',
  });
  try {
    const { status, out, err } = check(repo.path);
    assert.equal(status, 0, err);
    assert.match(out, /^5 citations of 3 sections in 2 files resolve/);
  } finally {
    repo.cleanup();
  }
});

void test('a citation of a section its page lacks fails the check and is listed with its file and line', () => {
  const repo = gitRepo({
    ...PAGES,
    'src/a.ts': '// fine (docs/BENCHMARKS.md "Prompt recall")\n',
    'src/b.ts': [
      '// only in a code fence (docs/BENCHMARKS.md "Commands in a fence")',
      '// only on the other page (docs/BENCHMARKS-history.md "Prompt recall")',
      '// a page not written (docs/BENCHMARKS.md "Moving session")',
      '',
    ].join('\n'),
  });
  try {
    const { status, err } = check(repo.path);
    assert.equal(status, 1);
    const listed = err.split('\n').filter((l) => l.startsWith('  '));
    assert.deepEqual(listed, [
      '  src/b.ts:1: docs/BENCHMARKS.md "Commands in a fence"',
      '  src/b.ts:2: docs/BENCHMARKS-history.md "Prompt recall"',
      '  src/b.ts:3: docs/BENCHMARKS.md "Moving session"',
    ]);
  } finally {
    repo.cleanup();
  }
});

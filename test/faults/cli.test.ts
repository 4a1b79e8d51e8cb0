// Fault matrix, CLI arguments (README.md row 11): every enum option's bad value is a usage error
// (exit 2, the usage line, no internal error), and a cursor past the end of the file is an error.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, tempDir } from '../helpers/paths';
import { coderag } from './helpers';

const repo = join(fixturesDir, 'pyshop');

void test('a bad value of any enum option exits 2 with a usage message, never an internal error', () => {
  const cache = tempDir();
  try {
    const missing = join(cache.path, 'missing');
    const eval_ = ['--cases', join(missing, 'cases.jsonl'), '--repos', missing, '--out', join(cache.path, 'out')];
    const cases: string[][] = [
      ['retrieve', repo, 'app/main.py:5', '--query', 'bogus'],
      ['retrieve', repo, 'app/main.py:5', '--paths', 'zz'],
      ['rerank', repo, 'app/main.py:5', '--query', 'bogus'],
      ['rerank', repo, 'app/main.py:5', '--reranker', 'bogus'],
      ['rerank', repo, 'app/main.py:5', '--paths', 'zz'],
      ['complete', repo, 'app/main.py:5:1', '--query', 'bogus'],
      ['complete', repo, 'app/main.py:5:1', '--provider', 'bogus'],
      ['complete', repo, 'app/main.py:5:1', '--reranker', 'bogus'],
      ['eval', '--method', 'bogus', ...eval_],
      ['eval', '--method', 's', '--query', 'bogus', ...eval_],
      ['eval', '--method', 's', '--generator', 'bogus', ...eval_],
      ['eval', '--method', 'df+s+lr', '--reranker-llm', 'bogus', ...eval_],
      ['eval', 'compare', '--methods', 's,bogus', ...eval_],
      ['eval', 'distill', '--method', 'bogus', ...eval_],
      ['bench', 'build', '--repos', missing, '--lang', 'cobol', '--task', 'line', '--out', join(cache.path, 'o')],
      ['bench', 'build', '--repos', missing, '--lang', 'python', '--task', 'bogus', '--out', join(cache.path, 'o')],
      ['index', repo, '--max-files', '0'],
    ];
    for (const args of cases) {
      const r = coderag([...args, ...(args[0] === 'eval' || args[0] === 'bench' ? [] : ['--index-dir', cache.path])]);
      const shown = args.join(' ');
      assert.equal(r.code, 2, `${shown}: ${r.stderr}`);
      assert.match(r.stderr, /\nusage: /, shown);
      assert.doesNotMatch(r.stderr, /TypeError|ReferenceError|at .*\.js:\d+/, shown);
    }
  } finally {
    cache.cleanup();
  }
});

void test('retrieve, rerank and complete at a line past the end of the file fail with a clear error instead of using the end', () => {
  const cache = tempDir();
  try {
    const runs: string[][] = [
      ['retrieve', repo, 'app/main.py:5000', '--paths', 's', '--query', 'last3'],
      ['rerank', repo, 'app/main.py:5000', '--reranker', 'none'],
      ['complete', repo, 'app/main.py:5000:1', '--provider', 'embedded', '--reranker', 'none'],
    ];
    for (const args of runs) {
      const r = coderag([...args, '--index-dir', cache.path]);
      assert.equal(r.code, 1, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /line 5000 is past the end of .*\(\d+ lines\)/, args[0]);
      assert.equal(r.stdout, '', `${args[0]} prints no result`);
    }
    const column = coderag(['retrieve', repo, 'app/main.py:5:400', '--paths', 's', '--query', 'last3', '--index-dir', cache.path]);
    assert.equal(column.code, 1);
    assert.match(column.stderr, /column 400 is past the end of line 5/);
  } finally {
    cache.cleanup();
  }
});

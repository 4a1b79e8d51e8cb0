import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Lang } from '../../src/engine/kb/types';
import { decodeSource } from '../../src/engine/kb/scan';
import type { BenchCase } from '../../src/bench/cases';
import { caseText, cutCase, isTestPath, type MineTask } from '../../src/bench/mine';
import { sampleIndices, seededRandom } from '../../src/bench/random';
import { normalizedLines } from '../../src/bench/metrics';
import { fixturesDir } from '../helpers/paths';
import { mineFixture, summarize, type CaseSummary } from './mineHelpers';

const fixtures: { name: string; dir: string; lang: Lang; expected: string }[] = [
  { name: 'pyshop', dir: join(fixturesDir, 'pyshop'), lang: 'python', expected: join(fixturesDir, 'pyshop.cases.expected.json') },
  { name: 'javashop', dir: join(fixturesDir, 'javashop'), lang: 'java', expected: join(fixturesDir, 'javashop.cases.expected.json') },
  {
    name: 'minipy',
    dir: join(fixturesDir, 'benchrepos', 'minipy'),
    lang: 'python',
    expected: join(fixturesDir, 'benchrepos', 'minipy.cases.expected.json'),
  },
];

function assertReassembles(repoRoot: string, c: BenchCase): void {
  const decoded = decodeSource(readFileSync(join(repoRoot, c.metadata.file)));
  assert.ok(decoded.ok);
  const text = caseText(decoded.text);
  assert.equal(c.prompt + c.groundtruth + '\n' + (c.right_context ?? ''), text, `${c.metadata.task_id} reassembles ${c.metadata.file}`);
  const row = c.metadata.groundtruth_start_lineno ?? -1;
  assert.equal(c.prompt.split('\n').length - 1, row, `${c.metadata.task_id}: the prompt ends where row ${row} starts`);
}

for (const f of fixtures) {
  for (const task of ['line', 'body'] as MineTask[]) {
    void test(`${f.name}: ${task} mining gives exactly the expected cases, and each reassembles its file`, async () => {
      const result = await mineFixture(f.dir, f.name, f.lang, task);
      if (process.env.CODERAG_UPDATE_EXPECTED === '1') {
        // Rewrites the expected list; review the diff by hand before committing it.
        const all = JSON.parse(readFileSync(f.expected, 'utf8')) as Record<string, unknown>;
        all[task] = result.cases.map((c) => summarize(c, task));
        writeFileSync(f.expected, JSON.stringify(all, null, 2) + '\n');
      }
      const expected = (JSON.parse(readFileSync(f.expected, 'utf8')) as Record<MineTask, CaseSummary[]>)[task];
      assert.deepEqual(
        result.cases.map((c) => summarize(c, task)),
        expected,
      );
      assert.equal(result.candidates, expected.length);
      for (const c of result.cases) {
        assertReassembles(f.dir, c);
        assert.equal(c.metadata.lang, f.lang);
        assert.equal(c.metadata.repository, f.name);
        assert.ok(!isTestPath(c.metadata.file));
        assert.ok(c.metadata.crossfile_defs!.length > 0);
        assert.ok(
          c.metadata.crossfile_defs!.every((d) => d.file !== c.metadata.file),
          'definitions come from other files',
        );
        if (task === 'line') assert.ok(!c.groundtruth.includes('\n'));
        else {
          const n = normalizedLines(c.groundtruth, f.lang).length;
          assert.ok(n >= 3 && n <= 40, `${c.metadata.task_id}: ${n} body lines`);
          assert.ok(c.metadata.function_name);
        }
      }
    });
  }
}

void test('minipy: CRLF files are cut on normalised text and a last line without a newline is never a target', async () => {
  const result = await mineFixture(join(fixturesDir, 'benchrepos', 'minipy'), 'minipy', 'python', 'line');
  assert.ok(result.cases.every((c) => !c.prompt.includes('\r') && !c.groundtruth.includes('\r')));
  // app.py's last line `x = pkg.core.helper(1)` has no newline: not a case.
  assert.ok(!result.cases.some((c) => c.groundtruth.includes('helper(1)')));
});

void test('sampling is deterministic for a seed, differs across seeds, and draws from all candidates', async () => {
  const dir = join(fixturesDir, 'javashop');
  const a = await mineFixture(dir, 'javashop', 'java', 'line', 5, 42);
  const b = await mineFixture(dir, 'javashop', 'java', 'line', 5, 42);
  const c = await mineFixture(dir, 'javashop', 'java', 'line', 5, 43);
  assert.equal(a.cases.length, 5);
  assert.deepEqual(a.cases, b.cases);
  assert.notDeepEqual(
    a.cases.map((x) => x.metadata.groundtruth_start_lineno + x.metadata.file),
    c.cases.map((x) => x.metadata.groundtruth_start_lineno + x.metadata.file),
  );
  assert.deepEqual(
    a.cases.map((x) => x.metadata.task_id),
    ['javashop/0', 'javashop/1', 'javashop/2', 'javashop/3', 'javashop/4'],
  );
  for (const x of a.cases) assertReassembles(dir, x);
});

void test('sampleIndices draws n distinct sorted indices, uniformly', () => {
  const r = seededRandom('s');
  const picked = sampleIndices(10, 4, r);
  assert.equal(new Set(picked).size, 4);
  assert.deepEqual(
    picked,
    [...picked].sort((x, y) => x - y),
  );
  assert.deepEqual(sampleIndices(3, 10, r), [0, 1, 2]);
  const counts = new Array<number>(10).fill(0);
  const rr = seededRandom(1);
  for (let i = 0; i < 20000; i++) for (const j of sampleIndices(10, 3, rr)) counts[j]!++;
  for (const n of counts) assert.ok(Math.abs(n - 6000) < 400, `count ${n} far from 6000`);
});

void test('cutCase defines prompt / groundtruth / right_context by rows', () => {
  const text = 'a\nb\nc\nd';
  const starts = [0, 2, 4, 6];
  assert.deepEqual(cutCase(text, starts, 1, 1), { prompt: 'a\n', groundtruth: 'b', rightContext: 'c\nd' });
  assert.deepEqual(cutCase(text, starts, 0, 2), { prompt: '', groundtruth: 'a\nb\nc', rightContext: 'd' });
  assert.equal(cutCase(text, starts, 3, 3), undefined);
  assert.deepEqual(cutCase('x\n', [0, 2], 0, 0), { prompt: '', groundtruth: 'x', rightContext: '' });
});

void test('test files and folders are never targets', () => {
  for (const p of [
    'tests/a.py',
    'src/test/java/A.java',
    'pkg/testing/util.py',
    'test_x.py',
    'pkg/x_test.py',
    'conftest.py',
    'src/FooTest.java',
    'src/FooTests.java',
    'unittests/linuxtests.py',
    'test cases/common/1 trivial/a.py',
    'run_unittests.py',
    'run_tests.py',
  ])
    assert.ok(isTestPath(p), p);
  for (const p of ['pkg/contest.py', 'src/main/java/Testable.java', 'latest/x.py', 'attest.py', 'src/jinja2/tests.py'])
    assert.ok(!isTestPath(p), p);
});

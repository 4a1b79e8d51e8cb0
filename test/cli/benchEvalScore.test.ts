import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath, tempDir } from '../helpers/paths';

function cli(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const cases = [
  {
    prompt: 'import m\n',
    groundtruth: 'x = m.f(1)',
    right_context: '',
    metadata: {
      task_id: 'r1/0',
      repository: 'r1',
      file: 'a.py',
      lang: 'python',
      crossfile_defs: [{ name: 'f', kind: 'function', file: 'm.py', line: 0 }],
    },
  },
  {
    prompt: 'class A {\n',
    groundtruth: '    // sum\n    return B.add(a, b);',
    metadata: {
      task_id: 'r2/0',
      repository: 'r2',
      file: 'A.java',
      crossfile_defs: [
        { name: 'add', kind: 'classFunction', file: 'B.java', line: 3 },
        { name: 'B', kind: 'class', file: 'B.java', line: 1 },
      ],
    },
  },
  { prompt: '', groundtruth: 'y = 2', metadata: { task_id: 'r1/1', repository: 'r1', file: 'b.py' } },
];
const preds = [
  {
    task_id: 'r1/0',
    prediction: 'x = m.f(1)\nmore()',
    contexts: [{ path: 'm.py', text: 'def f(a): ...', source: 'sparse' }],
    timings_ms: { sparse: 2, generate: 10, total: 14 },
  },
  {
    task_id: 'r2/0',
    prediction: 'return B.sub(a, b);',
    contexts: [{ path: 'C.java', text: 'B.add(1, 2)', source: 'dense' }],
    timings_ms: { sparse: 4, generate: 30, total: 40 },
  },
];

void test('eval score: end to end on a hand-written cases + predictions pair (one prediction missing)', () => {
  const dir = tempDir();
  try {
    const casesFile = join(dir.path, 'cases.jsonl');
    const predsFile = join(dir.path, 'preds.jsonl');
    const out = join(dir.path, 'score.json');
    writeFileSync(casesFile, cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
    writeFileSync(predsFile, preds.map((p) => JSON.stringify(p)).join('\n') + '\n');
    const r = cli(['eval', 'score', '--cases', casesFile, '--preds', predsFile, '--json', out]);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      overall: Record<string, number | null>;
      by_repo: Record<string, Record<string, number | null>>;
      timings_ms: Record<string, { median: number; p95: number }>;
    };
    // r1/0 exact; r2/0: "return B.sub(a, b);" vs "return B.add(a, b);" -> Lev 3 of 19; r1/1 missing.
    assert.equal(report.overall.n, 3);
    assert.ok(Math.abs(report.overall.em! - 100 / 3) < 1e-9);
    assert.ok(Math.abs(report.overall.es! - (100 + 100 * (1 - 3 / 19) + 0) / 3) < 1e-9);
    // identifiers: r1/0 equal; r2/0 {B, sub, a, b} vs {B, add, a, b}: F1 0.75; r1/1: 0.
    assert.ok(Math.abs(report.overall.id_em! - 100 / 3) < 1e-9);
    assert.ok(Math.abs(report.overall.id_f1! - (100 + 75 + 0) / 3) < 1e-9);
    // recall over the two cases with crossfile_defs: 1 and 0 (C.java is not B.java); coverage 1 and 1.
    assert.equal(report.overall.recall, 0.5);
    assert.equal(report.overall.coverage, 1);
    assert.equal(report.overall.full_recall, 0.5);
    assert.equal(report.by_repo.r1!.n, 2);
    assert.equal(report.by_repo.r1!.recall, 1);
    assert.equal(report.by_repo.r2!.em, 0);
    assert.deepEqual(report.timings_ms.generate, { median: 20, p95: 30 });
    assert.match(r.stdout, /r1\s+2\s+50\.00/);
    assert.match(r.stdout, /overall\s+3\s+33\.33/);
    assert.match(r.stdout, /generate\s+20\.0\s+30\.0/);
  } finally {
    dir.cleanup();
  }
});

void test('eval score: usage errors and a malformed predictions line', () => {
  const dir = tempDir();
  try {
    assert.equal(cli(['eval']).code, 2);
    assert.equal(cli(['eval', 'score', '--cases', 'x']).code, 2);
    const casesFile = join(dir.path, 'cases.jsonl');
    const predsFile = join(dir.path, 'preds.jsonl');
    writeFileSync(casesFile, JSON.stringify(cases[0]) + '\n');
    writeFileSync(predsFile, JSON.stringify(preds[0]) + '\nnot json\n');
    const r = cli(['eval', 'score', '--cases', casesFile, '--preds', predsFile]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /preds\.jsonl:2: malformed JSON/);
  } finally {
    dir.cleanup();
  }
});

void test('eval: the body options take only their values (exit 2 with the list otherwise)', () => {
  const dir = tempDir();
  try {
    const casesFile = join(dir.path, 'cases.jsonl');
    writeFileSync(casesFile, JSON.stringify(cases[0]) + '\n');
    const compose = cli([
      'eval',
      '--method',
      'rambo',
      '--cases',
      casesFile,
      '--repos',
      dir.path,
      '--body-compose',
      'shuffle',
      '--out',
      join(dir.path, 'p.jsonl'),
    ]);
    assert.equal(compose.code, 2);
    assert.match(compose.stderr, /--body-compose must be one of turns, knowledge-first, definitions-first, rrf/);
    const signatures = cli([
      'eval',
      '--method',
      'rambo',
      '--cases',
      casesFile,
      '--repos',
      dir.path,
      '--body-signatures',
      'cosine',
      '--out',
      join(dir.path, 'p.jsonl'),
    ]);
    assert.equal(signatures.code, 2);
    assert.match(signatures.stderr, /--body-signatures must be one of jaccard, encoder/);
  } finally {
    dir.cleanup();
  }
});

// `coderag eval` and `eval compare` as a user runs them: cases mined from a fixture repository,
// two methods with the embedded generator, the predictions file scored by `eval score`; the
// comparison table and chart; methods that need something absent fail fast.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cliPath, copyFixture, tempDir } from '../helpers/paths';

function cli(args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const repo = copyFixture('pyshop');
const reposDir = dirname(repo.path);
const work = tempDir();
const casesFile = join(work.path, 'cases.jsonl');
const index = join(work.path, 'index');
test.after(() => {
  repo.cleanup();
  work.cleanup();
});

void test('eval runs rg1 and df+s with the embedded generator; predictions are well-formed and eval score reads them', () => {
  const mined = cli([
    'bench',
    'build',
    '--repos',
    reposDir,
    '--lang',
    'python',
    '--task',
    'line',
    '--per-repo',
    '3',
    '--seed',
    '1',
    '--out',
    casesFile,
    '--index-dir',
    index,
  ]);
  assert.equal(mined.code, 0, mined.stderr);
  const cases = readFileSync(casesFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prompt: string; right_context: string; metadata: { task_id: string; file: string } });
  assert.equal(cases.length, 3);
  for (const method of ['rg1', 'df+s']) {
    const out = join(work.path, `${method}.jsonl`);
    const r = cli([
      'eval',
      '--cases',
      casesFile,
      '--repos',
      reposDir,
      '--method',
      method,
      '--generator',
      'embedded',
      '--query',
      'probe',
      '--index-dir',
      index,
      '--out',
      out,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /overall +3 /);
    const preds = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            task_id: string;
            prediction: string;
            contexts: Array<{ path: string; text: string; source: string }>;
            timings_ms: Record<string, number>;
          },
      );
    assert.deepEqual(
      preds.map((p) => p.task_id),
      cases.map((c) => c.metadata.task_id),
    );
    for (const [i, p] of preds.entries()) {
      assert.equal(typeof p.prediction, 'string');
      assert.ok(p.contexts.length > 0 && p.contexts.length <= 10, method);
      for (const c of p.contexts) {
        assert.equal(typeof c.text, 'string');
        assert.match(c.source, method === 'rg1' ? /^rg1$/ : /^(dataflow|sparse)(\+sparse)?$/);
        // The target file is never a context.
        assert.notEqual(c.path, cases[i]!.metadata.file);
      }
      for (const stage of ['query', 'generate', 'total']) assert.equal(typeof p.timings_ms[stage], 'number', `${method} ${stage}`);
      assert.equal(typeof p.timings_ms[method === 'rg1' ? 'rg1' : 'sparse'], 'number');
    }
    const scored = cli(['eval', 'score', '--cases', casesFile, '--preds', out, '--json', join(work.path, `${method}.score.json`)]);
    assert.equal(scored.code, 0, scored.stderr);
    const report = JSON.parse(readFileSync(join(work.path, `${method}.score.json`), 'utf8')) as {
      overall: { n: number; missing: number; recall: number | null };
    };
    assert.equal(report.overall.n, 3);
    assert.equal(report.overall.missing, 0);
    assert.equal(typeof report.overall.recall, 'number');
  }
});

void test('eval compare --no-generate writes the table, the chart and one predictions file per method', () => {
  if (!existsSync(casesFile))
    assert.equal(
      cli([
        'bench',
        'build',
        '--repos',
        reposDir,
        '--lang',
        'python',
        '--task',
        'line',
        '--per-repo',
        '3',
        '--seed',
        '1',
        '--out',
        casesFile,
        '--index-dir',
        index,
      ]).code,
      0,
    );
  const out = join(work.path, 'compare');
  const r = cli([
    'eval',
    'compare',
    '--cases',
    casesFile,
    '--repos',
    reposDir,
    '--methods',
    'zero-shot,rg1,s,df+s',
    '--no-generate',
    '--query',
    'last3',
    '--index-dir',
    index,
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /\| method \| recall@10 \| recall@20 \| full@10 \| coverage@10 \| EM \| ES \| ID-EM \| ID-F1 \| REL \| empty \|/);
  for (const m of ['zero-shot', 'rg1', 's', 'df+s']) {
    assert.match(md, new RegExp(`^\\| ${m.replace('+', '\\+')} \\| `, 'm'));
    assert.ok(existsSync(join(out, `${m}.jsonl`)));
  }
  assert.match(md, /Per-stage time, median \/ p95 ms/);
  const svg = readFileSync(join(out, 'chart.svg'), 'utf8');
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.match(svg, /recall@k/);
  // Retrieval only: empty predictions, zero-shot has no contexts.
  const zero = readFileSync(join(out, 'zero-shot.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { prediction: string; contexts: unknown[] });
  assert.ok(zero.every((p) => p.prediction === '' && p.contexts.length === 0));
});

void test('eval fails fast: an LLM reranker with no server (exit 1), an unknown method or generator (exit 2)', () => {
  const base = ['eval', '--cases', casesFile, '--repos', reposDir, '--out', join(work.path, 'x.jsonl'), '--no-generate'];
  const lr = cli([...base, '--method', 'df+s+d+lr']);
  assert.equal(lr.code, 1);
  assert.match(lr.stderr, /need an LLM reranker server: pass --reranker-llm/);
  const down = cli([...base, '--method', 'df+s+d+lr', '--reranker-llm', 'ollama:qwen3:8b', '--ollama-host', 'http://127.0.0.1:9']);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /LLM reranker not reachable/);
  // A bad option value is a usage error (exit 2), like every other enum option.
  const unknown = cli([...base, '--method', 'magic']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown method "magic"/);
  const gen = cli([
    'eval',
    '--cases',
    casesFile,
    '--repos',
    reposDir,
    '--out',
    join(work.path, 'x.jsonl'),
    '--method',
    'rg1',
    '--generator',
    'gpt9',
  ]);
  assert.equal(gen.code, 2);
  assert.match(gen.stderr, /unknown generator "gpt9"/);
  assert.equal(cli(['eval', '--cases', casesFile, '--repos', reposDir, '--method', 'rg1']).code, 2);
});

void test('the shipped distilled reranker reorders the same candidates (+dr), and eval distill writes Alg. 2 data with the oracle teacher', () => {
  if (!existsSync(casesFile))
    assert.equal(
      cli([
        'bench',
        'build',
        '--repos',
        reposDir,
        '--lang',
        'python',
        '--task',
        'line',
        '--per-repo',
        '3',
        '--seed',
        '1',
        '--out',
        casesFile,
        '--index-dir',
        index,
      ]).code,
      0,
    );
  const out = join(work.path, 'compare-dr');
  const r = cli([
    'eval',
    'compare',
    '--cases',
    casesFile,
    '--repos',
    reposDir,
    '--methods',
    'df+s,df+s+dr',
    '--no-generate',
    '--query',
    'last3',
    '--k',
    '40',
    '--index-dir',
    index,
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  type Pred = { task_id: string; contexts: Array<{ path: string; text: string }>; timings_ms: Record<string, number> };
  const read = (f: string): Pred[] =>
    readFileSync(join(out, f), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Pred);
  const plain = read('df+s.jsonl');
  const reranked = read('df+s+dr.jsonl');
  for (const [i, p] of plain.entries()) {
    const d = reranked[i]!;
    assert.equal(d.task_id, p.task_id);
    // Top-k with k above the list size: the same candidates, possibly in another order.
    assert.deepEqual(d.contexts.map((c) => c.text).sort(), p.contexts.map((c) => c.text).sort());
    assert.equal(typeof d.timings_ms.rerank, 'number');
  }

  const data = join(work.path, 'distill.jsonl');
  const dist = cli(['eval', 'distill', '--cases', casesFile, '--repos', reposDir, '--query', 'last3', '--index-dir', index, '--out', data]);
  assert.equal(dist.code, 0, dist.stderr);
  assert.match(
    dist.stdout,
    /distillation data: 3 cases, \d+ with 2\+ candidates, \d+ where a candidate holds a cross-file definition; \d+ of \d+ windows kept \(oracle teacher\)/,
  );
  const records = readFileSync(data, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(
      (l) =>
        JSON.parse(l) as {
          feature_names: string[];
          ids: string[];
          features: number[][];
          hits: number[];
          windows: Array<{ members: number[]; choice: number; votes: number }>;
        },
    );
  assert.ok(records.length > 0);
  for (const rec of records) {
    assert.equal(rec.features.length, rec.ids.length);
    assert.equal(rec.hits.length, rec.ids.length);
    for (const row of rec.features) assert.equal(row.length, rec.feature_names.length);
    for (const w of rec.windows) {
      assert.ok(w.members.length >= 2 && w.members.length <= 7);
      // The oracle's pick holds the most definitions of its window.
      const best = Math.max(...w.members.map((m) => rec.hits[m]!));
      assert.ok(best > 0);
      assert.equal(rec.hits[w.members[w.choice]!], best);
    }
  }
});

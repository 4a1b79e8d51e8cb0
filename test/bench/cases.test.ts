import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  caseLang,
  formatCases,
  isBenchFileError,
  parseJsonl,
  PredictionWriter,
  readCases,
  readPredictions,
  validateCase,
  validatePrediction,
  type BenchCase,
  type Prediction,
} from '../../src/bench/cases';
import { tempDir } from '../helpers/paths';

const minimal =
  '{"prompt": "def f():\\n    return ", "groundtruth": "g()", "metadata": {"task_id": "r/0", "repository": "r", "file": "m.py"}}';

void test('reads a minimal CCEval line from another tool (prompt, groundtruth, task_id, repository, file only)', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'cases.jsonl');
    writeFileSync(file, `${minimal}\n\n${minimal.replace('r/0', 'r/1').replace('m.py', 'A.java')}\r\n`);
    const cases = await readCases(file);
    assert.equal(cases.length, 2);
    assert.equal(cases[0]!.groundtruth, 'g()');
    assert.equal(cases[0]!.right_context, undefined);
    assert.equal(caseLang(cases[0]!), 'python');
    assert.equal(caseLang(cases[1]!), 'java');
  } finally {
    dir.cleanup();
  }
});

void test('rejects malformed lines with the file and the 1-based line number', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'bad.jsonl');
    writeFileSync(file, `${minimal}\n${minimal}\n{"prompt": "x", "groundtruth": \n`);
    await assert.rejects(readCases(file), (e: unknown) => {
      assert.ok(isBenchFileError(e));
      assert.equal(e.lineNumber, 3);
      assert.match(e.message, /bad\.jsonl:3: malformed JSON/);
      return true;
    });
    writeFileSync(file, `${minimal}\n{"prompt": "x", "groundtruth": "y", "metadata": {"task_id": "t", "file": "f.py"}}\n`);
    await assert.rejects(readCases(file), /bad\.jsonl:2: "metadata\.repository" must be a non-empty string/);
    await assert.rejects(readCases(join(dir.path, 'missing.jsonl')), /file not found/);
  } finally {
    dir.cleanup();
  }
});

void test('validation messages name the field', () => {
  assert.equal(validateCase([]), 'expected a JSON object');
  assert.equal(validateCase({ prompt: 1 }), '"prompt" must be a string');
  assert.equal(validateCase({ prompt: '', groundtruth: '' }), '"metadata" must be an object');
  assert.match(
    String(validateCase({ prompt: '', groundtruth: '', metadata: { task_id: 't', repository: 'r', file: 'f', lang: 'go' } })),
    /metadata\.lang/,
  );
  assert.match(
    String(validateCase({ prompt: '', groundtruth: '', metadata: { task_id: 't', repository: 'r', file: 'f', crossfile_defs: [{}] } })),
    /crossfile_defs\[0\]/,
  );
  assert.match(String(validatePrediction({ task_id: 't', prediction: 'x', timings_ms: { total: 'slow' } })), /timings_ms\.total/);
  assert.throws(() => parseJsonl('{}\n', 'p.jsonl', validatePrediction), /p\.jsonl:1: "task_id"/);
});

void test('cases round-trip through formatCases and readCases', async () => {
  const dir = tempDir();
  try {
    const c: BenchCase = {
      prompt: 'a\n',
      groundtruth: 'b = "\\u00e9\\n"',
      right_context: 'c\n',
      metadata: {
        task_id: 'r/0',
        repository: 'r',
        file: 'x.py',
        groundtruth_start_lineno: 1,
        lang: 'python',
        crossfile_defs: [{ name: 'n', kind: 'function', file: 'y.py', line: 2 }],
      },
    };
    const file = join(dir.path, 'c.jsonl');
    writeFileSync(file, formatCases([c]));
    assert.deepEqual(await readCases(file), [c]);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(file, 'utf8').trim()) as object), [
      'prompt',
      'groundtruth',
      'right_context',
      'metadata',
    ]);
  } finally {
    dir.cleanup();
  }
});

void test('PredictionWriter appends predictions; resume keeps whole lines and drops a torn last one', async () => {
  const dir = tempDir();
  try {
    const file = join(dir.path, 'preds.jsonl');
    const p = (id: string): Prediction => ({
      task_id: id,
      prediction: 'x',
      contexts: [{ path: 'a.py', text: 'def a(): ...', source: 'sparse' }],
      timings_ms: { total: 1.5 },
    });
    const w = await PredictionWriter.open(file);
    await w.write(p('r/0'));
    await w.write(p('r/1'));
    await w.close();
    assert.deepEqual(await readPredictions(file), [p('r/0'), p('r/1')]);
    writeFileSync(file, readFileSync(file, 'utf8') + '{"task_id": "r/2", "predi');
    const resumed = await PredictionWriter.open(file, { resume: true });
    assert.deepEqual([...resumed.taskIds], ['r/0', 'r/1']);
    await resumed.write(p('r/2'));
    await resumed.close();
    assert.deepEqual(
      (await readPredictions(file)).map((x) => x.task_id),
      ['r/0', 'r/1', 'r/2'],
    );
  } finally {
    dir.cleanup();
  }
});

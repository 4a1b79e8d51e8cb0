// The server's event loop while it loads its models, indexes a large module, rebuilds the sparse
// index of a large repository and saves the dense vectors: each long synchronous step is cut into
// pieces with the loop let through between them, so a request never waits behind one of them
// for long. A timer probe (a tick every few ms, as a request would wait) measures the longest turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FileExtraction, KbItem } from '../../src/engine/kb/types';
import { extractBounded } from '../../src/engine/kb/extract';
import { KnowledgeBase } from '../../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../../src/engine/kb/parsers';
import { openSession } from '../../src/engine/models/onnxSession';
import { DenseRetriever, type DenseEncoder, type DenseSource } from '../../src/engine/retrieve/dense/denseRetrieve';
import { loadVectors } from '../../src/engine/retrieve/dense/denseStore';
import { SparseRetriever } from '../../src/engine/retrieve/sparse/sparseRetrieve';
import { Emitter } from '../../src/engine/util/disposable';
import { repoRoot, tempDir } from '../helpers/paths';
import { writeTree } from './helpers';

/**
 * The longest gap between ticks of a `everyMs` timer while `work` runs (a turn of the event loop that long held every request),
 * counting only the gaps that begin after `from()` (the last embedding, when the build's own work starts).
 */
async function longestTurn<T>(
  work: () => Promise<T>,
  everyMs = 5,
  from: () => number = () => 0,
): Promise<{ result: T; longestMs: number }> {
  let last = performance.now();
  let longest = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    if (last > from()) longest = Math.max(longest, now - last);
    last = now;
  }, everyMs);
  try {
    const result = await work();
    longest = Math.max(longest, performance.now() - Math.max(last, from()));
    return { result, longestMs: longest };
  } finally {
    clearInterval(ticker);
  }
}

/** `files` Python files of `perFile` functions with distinct names and bodies. */
function manyItemsSource(files: number, perFile: number): DenseSource {
  const extractions = new Map<string, FileExtraction>();
  for (let f = 0; f < files; f++) {
    const path = `pkg/m${f}.py`;
    const items: KbItem[] = [];
    for (let i = 0; i < perFile; i++)
      items.push({
        id: `${path}#function:f${i}`,
        path,
        lang: 'python',
        kind: i % 4 === 3 ? 'globalVariable' : 'function',
        name: `f${i}`,
        qualifiedName: `f${i}`,
        signature: `def f${i}(x)`,
        docstring: '',
        range: { startLine: 2 * i, endLine: 2 * i + 1 },
        text: `# ${path}\ndef compute_${f}_${i}(value_${i % 97}, scale_${i % 13}):\n    return value_${i % 97} * scale_${i % 13} + ${f * perFile + i}\n`,
      } as KbItem);
    extractions.set(path, { path, lang: 'python', items, classes: [], imports: [], hasSyntaxErrors: false });
  }
  const changed = new Emitter<{ changed: string[]; removed: string[] }>();
  return { paths: () => [...extractions.keys()].sort(), file: (p) => extractions.get(p), onDidChange: changed.event };
}

void test('models: ONNX sessions asked for at once are created one per turn of the event loop (a timer runs between any two loads)', async () => {
  const lm = join(repoRoot, 'models', 'coderag-lm', 'onnx', 'decoder_model_merged.onnx');
  const encoder = join(repoRoot, 'models', 'coderag-encoder', 'onnx', 'model.onnx');
  let ticks = 0;
  const ticker = setInterval(() => ticks++, 1);
  const ticksAtLoad: number[] = [];
  try {
    // As the server asks at start: the probing LM, the query encoder's sessions, another LM session.
    const sessions = await Promise.all(
      [lm, encoder, encoder, lm].map((file) =>
        openSession(file, 'test', { inputs: ['input_ids'], outputs: [] }, { threads: 1 }).then((s) => {
          ticksAtLoad.push(ticks);
          return s;
        }),
      ),
    );
    await Promise.all(sessions.map((s) => s.release()));
  } finally {
    clearInterval(ticker);
  }
  for (let i = 1; i < ticksAtLoad.length; i++)
    assert.ok(
      ticksAtLoad[i]! > ticksAtLoad[i - 1]!,
      `the timer ran between load ${i} and load ${i + 1}: ticks at each load ${ticksAtLoad.join(', ')}`,
    );
});

void test('sparse path: building the TF-IDF index of 400,000 items hands the event loop back (no turn of it waits 150 ms)', async () => {
  const sparse = new SparseRetriever(manyItemsSource(2000, 200));
  const { longestMs } = await longestTurn(() => sparse.prepare(new AbortController().signal));
  const query = { strategy: 'last3' as const, text: 'compute_7_21 value_21 scale_8', spans: [] };
  const { results, notes } = await sparse.retrieve(
    { file: { path: 'app/main.py', lang: 'python', prefix: '' }, query, topJ: 3 },
    new AbortController().signal,
  );
  assert.match(notes?.[0] ?? '', /^300000 functions, 100000 variables indexed$/);
  assert.match(results[0]?.snippet.text ?? '', /def compute_7_21\(/, 'the best hit is the item the query names');
  assert.ok(longestMs < 150, `the longest turn of the event loop while building: ${longestMs.toFixed(0)} ms`);
  sparse.dispose();
});

/** A Python module of one test class with `methods` methods, each assigning an attribute and calling another. */
function largeTestModule(methods: number): string {
  const lines = ['import unittest', '', '', 'class LargeTestCase(unittest.TestCase):', '    """Many small tests."""', ''];
  for (let i = 0; i < methods; i++) {
    lines.push(`    def test_case_${i}(self):`);
    lines.push(`        self.value_${i % 50} = compute(${i}, scale=${i % 7})`);
    lines.push(`        self.assertEqual(self.value_${i % 50}, ${i})`);
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

void test('extraction: the walk of a large module (one class of 8,000 methods) hands the event loop back (no turn of it waits 150 ms)', async () => {
  const parsers = await loadParsers(join(repoRoot, 'grammars'));
  const source = largeTestModule(8000);
  const { result, longestMs } = await longestTurn(() => extractBounded(parsers, 'python', 'tests/test_large.py', source));
  assert.equal(result.items.filter((i) => i.kind === 'classFunction').length, 8000);
  assert.equal(result.items.filter((i) => i.kind === 'classVariable').length, 50, 'self.value_0 .. self.value_49');
  assert.equal(result.classes[0]?.qualifiedName, 'LargeTestCase');
  assert.equal(result.items.at(-1)?.qualifiedName, 'LargeTestCase.test_case_7999');
  assert.ok(longestMs < 150, `the longest turn of the event loop while extracting: ${longestMs.toFixed(0)} ms`);
});

void test('dense path: building and saving the vectors of 250,000 items hands the event loop back (no turn of it waits 150 ms after the last embedding)', async () => {
  const dir = tempDir();
  try {
    const dim = 256;
    let lastEmbed = Infinity;
    const encoder: DenseEncoder = {
      name: 'instant',
      dim,
      embed: (texts) => {
        lastEmbed = performance.now();
        return Promise.resolve(texts.map((_, j) => Float32Array.from({ length: dim }, (__, d) => (d === j % dim ? 1 : 0.01))));
      },
    };
    const dense = new DenseRetriever(manyItemsSource(2500, 100), encoder, { rowScorer: null, chunkSize: 4096, indexFolder: dir.path });
    const { longestMs } = await longestTurn(
      () => dense.prepare(new AbortController().signal),
      5,
      () => lastEmbed,
    );
    assert.equal(dense.size, 250_000);
    const path = dense.storePath!;
    assert.ok(existsSync(path));
    const saved = await loadVectors(path, { encoder: 'instant', dim });
    assert.equal(saved.status, 'ok', JSON.stringify(saved.status === 'invalid' ? saved.reason : saved.status));
    if (saved.status === 'ok') assert.equal(saved.stored.rows.length, 250_000);
    assert.ok(longestMs < 150, `the longest wait after the last embedding: ${longestMs.toFixed(0)} ms`);
    dense.dispose();
  } finally {
    dir.cleanup();
  }
});

void test('knowledge base: the summary the status shows follows every change of the files (counted once per change)', async () => {
  const dir = tempDir();
  try {
    writeTree(dir.path, { 'a.py': 'def f():\n    pass\n\n\nX = 1\n', 'b.py': 'class C:\n    y = 2\n' });
    const kb = await KnowledgeBase.open({ repoRoot: dir.path, parsers: await loadParsers(join(repoRoot, 'grammars')) });
    await kb.index(undefined, new AbortController().signal);
    const first = kb.summary();
    assert.deepEqual(
      [first.files, first.items.function, first.items.globalVariable, first.items.classVariable, first.classes],
      [2, 1, 1, 1, 1],
    );
    // A caller's change of the answer is not the next caller's.
    first.items.function = 99;
    first.syntaxErrorFiles.push('x.py');
    assert.equal(kb.summary().items.function, 1);
    assert.deepEqual(kb.summary().syntaxErrorFiles, []);
    await kb.updateFile('a.py', 'def f():\n    pass\n\n\ndef g():\n    pass\n');
    const edited = kb.summary();
    assert.deepEqual([edited.items.function, edited.items.globalVariable], [2, 0]);
    await kb.removeFile('b.py');
    assert.deepEqual([kb.summary().files, kb.summary().classes, kb.summary().items.classVariable], [1, 0, 0]);
    kb.dispose();
  } finally {
    dir.cleanup();
  }
});

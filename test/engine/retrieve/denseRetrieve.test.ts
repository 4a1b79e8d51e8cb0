// Dense retrieval (CodeRAG section 2.2.1): the shipped encoder finds the right definition on the
// fixture repositories; vectors persist next to the KB index, are reused, recomputed only for a
// changed file, and a corrupt or foreign vector file is rebuilt.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { ModelRegistry } from '../../../src/engine/models';
import { onnxRowScorer, type RowScorer } from '../../../src/engine/models/OnnxRowScorer';
import type { FileExtraction, KbItem } from '../../../src/engine/kb/types';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { DenseRetriever, type DenseEncoder } from '../../../src/engine/retrieve/dense/denseRetrieve';
import { denseFilePath, loadVectors } from '../../../src/engine/retrieve/dense/denseStore';
import { dequantize, quantize, quantizeInto, scanInt8Rows } from '../../../src/engine/retrieve/dense/int8Rows';
import { TopK } from '../../../src/engine/retrieve/topK';
import { writeFramedFile } from '../../../src/engine/util/framedFile';
import { CancellationError } from '../../../src/engine/util/errors';
import { copyFixture, repoRoot, tempDir } from '../../helpers/paths';
import { bagOfWordsEncoder, fixtureKb, JAVA_ROOT, parsers, unfinishedAfter } from './retrieveFixtures';

const countingEncoder = bagOfWordsEncoder;

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });
test.after(() => registry.dispose());

void test('the definition a usage query asks for is in the dense top results (pyshop, javashop), the unfinished file excluded', async () => {
  // A bag-of-words stand-in encoder: this checks the path (embedding, per-family cosine top-j,
  // exclusion), independent of how far the shipped encoder's training has got.
  const encoder = countingEncoder('bow', 256);
  const py = new DenseRetriever(await fixtureKb('pyshop'), encoder);
  const usage = unfinishedAfter('pyshop', 'app/main.py', 17, 'make_gateway(');
  const r1 = await py.retrieve({ file: usage, query: lastLinesQuery(usage.prefix, 3), topJ: 15 }, new AbortController().signal);
  const ids1 = r1.results.map((x) => x.snippet.id);
  assert.ok(ids1.includes('pyshop/payments.py#function:make_gateway'), ids1.join('\n'));
  assert.ok(ids1.every((id) => !id.startsWith('app/main.py')));
  py.dispose();

  const java = new DenseRetriever(await fixtureKb('javashop'), encoder);
  const file = unfinishedAfter('javashop', `${JAVA_ROOT}/App.java`, 15, 'Gateways.create(');
  const r2 = await java.retrieve({ file, query: lastLinesQuery(file.prefix, 3), topJ: 15 }, new AbortController().signal);
  const ids2 = r2.results.map((x) => x.snippet.id);
  assert.ok(
    ids2.some((id) => id.startsWith(`${JAVA_ROOT}/payment/Gateways.java#classFunction:Gateways.create`)),
    ids2.join('\n'),
  );
  java.dispose();
});

void test("shipped encoder: an item's own text ranks it first; a docstring-like query finds it in the top j", async () => {
  const encoder = await registry.encoder(undefined, new AbortController().signal);
  const kb = await fixtureKb('pyshop');
  const dense = new DenseRetriever(kb, encoder);
  const item = kb.items().find((i) => i.name === 'make_gateway')!;
  const file = { path: 'app/main.py', lang: 'python' as const, prefix: '' };
  const self = await dense.retrieve(
    { file, query: { strategy: 'last3', text: item.text, spans: [] }, topJ: 15 },
    new AbortController().signal,
  );
  assert.equal(self.results[0]?.snippet.id, item.id);
  // Item vectors are stored as int8 rows: the self score is 1 within their rounding (0.9983 on an AVX2-only CPU).
  assert.ok(Math.abs(self.results[0]!.score - 1) < 5e-3, `self score ${self.results[0]!.score}`);
  const doc = await dense.retrieve(
    { file, query: { strategy: 'last3', text: `${item.signature}\n${item.docstring}`, spans: [] }, topJ: 15 },
    new AbortController().signal,
  );
  assert.ok(
    doc.results.some((x) => x.snippet.id === item.id),
    doc.results.map((x) => x.snippet.id).join('\n'),
  );
  for (let i = 1; i < self.results.length; i++) assert.ok(self.results[i]!.score <= 1.0001);
  dense.dispose();
});

void test('vectors persist in the index folder, are reused, and only a changed file is re-embedded', async () => {
  const repo = copyFixture('pyshop');
  const cache = tempDir();
  try {
    const p = await parsers();
    const kb = await KnowledgeBase.open({ repoRoot: repo.path, parsers: p });
    await kb.index(undefined, new AbortController().signal);
    const enc = countingEncoder();
    const progress: number[] = [];
    const dense = new DenseRetriever(kb, enc, { indexFolder: cache.path, chunkSize: 8, onProgress: (x) => progress.push(x.done) });
    await dense.prepare(new AbortController().signal);
    const total = kb.items().length;
    assert.ok(total > 10);
    assert.equal(dense.lastReport?.store, 'missing');
    assert.equal(dense.lastReport?.embedded, new Set(kb.items().map((i) => i.text)).size);
    assert.equal(dense.size, total);
    assert.ok(progress.length >= 3 && progress.at(-1) === dense.lastReport?.embedded);
    const file = denseFilePath(cache.path, enc.name);
    const stored = await loadVectors(file, { encoder: enc.name, dim: enc.dim });
    assert.equal(stored.status, 'ok');
    if (stored.status === 'ok') {
      assert.equal(stored.stored.rows.length, total);
      assert.deepEqual(new Set(stored.stored.rows.map((r) => r.id)), new Set(kb.items().map((i) => i.id)));
    }
    dense.dispose();

    // A new retriever over the same folder embeds nothing.
    const enc2 = countingEncoder();
    const again = new DenseRetriever(kb, enc2, { indexFolder: cache.path });
    await again.prepare(new AbortController().signal);
    assert.equal(again.lastReport?.store, 'loaded');
    assert.equal(enc2.seen.length, 0);
    const before = await again.retrieve(
      {
        file: { path: 'app/main.py', lang: 'python', prefix: '' },
        query: { strategy: 'last3', text: 'def make_gateway(name, api_key)', spans: [] },
        topJ: 5,
      },
      new AbortController().signal,
    );
    assert.ok(before.results.some((r) => r.snippet.name === 'make_gateway'));
    enc2.seen.length = 0; // the query's own embedding

    // Edit one file: only its new or changed items are embedded, after the KB's change event.
    appendFileSync(join(repo.path, 'pyshop/util.py'), '\n\ndef brand_new_helper(value):\n    return value * 2\n');
    assert.equal(await kb.updateFile('pyshop/util.py'), true);
    await again.prepare(new AbortController().signal);
    assert.equal(enc2.seen.length, 1, enc2.seen.join('\n---\n'));
    assert.match(enc2.seen[0]!, /brand_new_helper/);
    const after = await again.retrieve(
      {
        file: { path: 'x.py', lang: 'python', prefix: '' },
        query: { strategy: 'last3', text: 'brand_new_helper value', spans: [] },
        topJ: 1,
      },
      new AbortController().signal,
    );
    assert.equal(after.results[0]?.snippet.name, 'brand_new_helper');
    // Items of the files not edited keep their vectors through the rebuild: the same hit, the same score.
    const beforeHit = before.results.find((r) => r.snippet.name === 'make_gateway')!;
    const unchanged = await again.retrieve(
      {
        file: { path: 'app/main.py', lang: 'python', prefix: '' },
        query: { strategy: 'last3', text: 'def make_gateway(name, api_key)', spans: [] },
        topJ: 5,
      },
      new AbortController().signal,
    );
    const unchangedHit = unchanged.results.find((r) => r.snippet.name === 'make_gateway');
    assert.equal(unchangedHit?.score, beforeHit.score);
    // Saved: a third retriever reuses the new vector too.
    const enc3 = countingEncoder();
    const third = new DenseRetriever(kb, enc3, { indexFolder: cache.path });
    await third.prepare(new AbortController().signal);
    assert.equal(enc3.seen.length, 0);
    again.dispose();
    third.dispose();
    kb.dispose();
  } finally {
    repo.cleanup();
    cache.cleanup();
  }
});

void test('a corrupt, truncated or foreign vector file is detected and rebuilt; cancellation keeps the work for later', async () => {
  const cache = tempDir();
  try {
    const kb = await fixtureKb('pyshop');
    const enc = countingEncoder();
    const first = new DenseRetriever(kb, enc, { indexFolder: cache.path });
    await first.prepare(new AbortController().signal);
    first.dispose();
    const file = denseFilePath(cache.path, enc.name);
    const good = readFileSync(file);

    // Flip bytes in the vectors: checksum mismatch.
    const bad = Buffer.from(good);
    bad[bad.length - 3] = bad[bad.length - 3]! ^ 0xff;
    writeFileSync(file, bad);
    const enc2 = countingEncoder();
    const r2 = new DenseRetriever(kb, enc2, { indexFolder: cache.path });
    await r2.prepare(new AbortController().signal);
    assert.deepEqual(r2.lastReport?.store, { invalid: 'checksum mismatch (corrupt contents)' });
    assert.ok(enc2.seen.length > 0);
    r2.dispose();
    assert.equal((await loadVectors(file, { encoder: enc.name, dim: enc.dim })).status, 'ok');

    // Truncated, garbage, and written for another dimension.
    writeFileSync(file, good.subarray(0, good.length - 10));
    assert.match(JSON.stringify(await loadVectors(file, { encoder: enc.name, dim: enc.dim })), /truncated/);
    writeFileSync(file, 'not a vector file at all');
    assert.equal((await loadVectors(file, { encoder: enc.name, dim: enc.dim })).status, 'invalid');
    writeFileSync(file, good);
    assert.match(JSON.stringify(await loadVectors(file, { encoder: enc.name, dim: 32 })), /dimension 64, expected 32/);
    const wrongDim = countingEncoder(enc.name, 32);
    const r3 = new DenseRetriever(kb, wrongDim, { indexFolder: cache.path });
    await r3.prepare(new AbortController().signal);
    assert.deepEqual(r3.lastReport?.store, { invalid: 'dimension 64, expected 32' });
    assert.equal(r3.size, kb.items().length);
    r3.dispose();

    // The same encoder name, another build (new weights after an update): everything is re-embedded.
    writeFileSync(file, good);
    const rebuilt = { ...countingEncoder(enc.name), fingerprint: 'build-2' };
    const r5 = new DenseRetriever(kb, rebuilt, { indexFolder: cache.path });
    await r5.prepare(new AbortController().signal);
    assert.deepEqual(r5.lastReport?.store, {
      invalid: `written by another build of encoder "${enc.name}" (fingerprint none, expected build-2)`,
    });
    assert.equal(r5.lastReport?.embedded, new Set(kb.items().map((i) => i.text)).size);
    r5.dispose();
    const sameBuild = { ...countingEncoder(enc.name), fingerprint: 'build-2' };
    const r6 = new DenseRetriever(kb, sameBuild, { indexFolder: cache.path });
    await r6.prepare(new AbortController().signal);
    assert.equal(r6.lastReport?.store, 'loaded');
    assert.equal(sameBuild.seen.length, 0, 'vectors of the same build are reused');
    r6.dispose();

    // Cancelled before it starts: rejects, and the next call does the whole job.
    const controller = new AbortController();
    controller.abort();
    const r4 = new DenseRetriever(kb, countingEncoder('other'), {});
    await assert.rejects(r4.prepare(controller.signal), CancellationError);
    await r4.prepare(new AbortController().signal);
    assert.equal(r4.size, kb.items().length);
    // An empty query finds nothing and does not fail.
    assert.deepEqual(
      (
        await r4.retrieve(
          { file: { path: 'a.py', lang: 'python', prefix: '' }, query: { strategy: 'last3', text: '', spans: [] }, topJ: 5 },
          new AbortController().signal,
        )
      ).results,
      [],
    );
    r4.dispose();
  } finally {
    cache.cleanup();
  }
});

/** A repository of `files` x `perFile` synthetic items, served as a knowledge base. */
function syntheticKb(
  files: number,
  perFile: number,
): { paths(): string[]; file(p: string): FileExtraction | undefined; onDidChange(): { dispose(): void } } {
  const extractions = new Map<string, FileExtraction>();
  for (let f = 0; f < files; f++) {
    const path = `src/m${f}.py`;
    const items: KbItem[] = Array.from({ length: perFile }, (_, i) => {
      const kind = i % 4 === 0 ? 'globalVariable' : 'function';
      const name = `${kind === 'function' ? 'fn' : 'VAR'}_${f}_${i}`;
      return {
        id: `${path}#${kind}:${name}`,
        kind,
        lang: 'python',
        path,
        name,
        qualifiedName: name,
        signature: name,
        docstring: '',
        range: { startLine: i, endLine: i },
        text: `# ${path}\n${kind === 'function' ? `def ${name}(x):\n    return x * ${i}` : `${name} = ${f}`}`,
      };
    });
    extractions.set(path, { path, lang: 'python', items, classes: [], imports: [], hasSyntaxErrors: false });
  }
  return { paths: () => [...extractions.keys()], file: (p) => extractions.get(p), onDidChange: () => ({ dispose: () => undefined }) };
}

void test('the ONNX row scorer: its graph loads in onnxruntime and its scores are the integer dot products of the int8 codes', async () => {
  const scorer = await onnxRowScorer();
  const rows = 700;
  const dim = 36;
  const matrix = Int8Array.from({ length: rows * dim }, (_, i) => Math.round(Math.sin(i * 12.9898) * 127));
  const query = Int8Array.from({ length: dim }, (_, i) => Math.round(Math.cos(i * 78.233) * 127));
  const scores = await scorer.scores(matrix, rows, query);
  assert.equal(scores.length, rows);
  for (let r = 0; r < rows; r++) {
    let dot = 0;
    for (let d = 0; d < dim; d++) dot += matrix[r * dim + d]! * query[d]!;
    assert.equal(scores[r], dot, `row ${r}`);
  }
  assert.deepEqual(await scorer.scores(matrix, 0, query), new Int32Array(0));
  await assert.rejects(scorer.scores(matrix.subarray(0, 10), 2, query), /fewer than 2 x 36/);
});

void test('int8 rows: scores are the float cosines within 0.01, and a row comes back within half a step', () => {
  const dim = 192;
  const unit = (seed: number): Float32Array => {
    const v = Float32Array.from({ length: dim }, (_, d) => Math.sin(seed * 12.9898 + d * 78.233) * (1 + (d % 7)));
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
  const q = unit(1);
  const query = quantize(q);
  for (let seed = 2; seed < 50; seed++) {
    const v = unit(seed);
    const codes = new Int8Array(dim);
    const scale = quantizeInto(v, codes, 0);
    const back = dequantize(codes, Float32Array.of(scale), dim);
    v.forEach((x, d) => assert.ok(Math.abs(x - back[d]!) <= scale / 2 + 1e-7));
    const top = new TopK<number>(1);
    scanInt8Rows(codes, Float32Array.of(scale), [seed], query.codes, query.scale, 0, 1, top);
    let cosine = 0;
    for (let d = 0; d < dim; d++) cosine += v[d]! * q[d]!;
    const [hit] = top.sorted();
    if (hit) assert.ok(Math.abs(hit.score - cosine) < 0.01, `${hit.score} vs ${cosine}`);
    else assert.ok(cosine <= 0.01, 'a row is left out only for a score at or below 0');
  }
  const zero = new Int8Array(4).fill(5);
  assert.equal(quantizeInto(new Float32Array(4), zero, 0), 0);
  assert.deepEqual([...zero], [0, 0, 0, 0]);
});

void test('a large repository is searched by the ONNX row scorer with the same results as the JavaScript loop, the unfinished file skipped', async () => {
  // 9,000 items: 6,600 functions and 2,400 variables, both past ONNX_MIN_ROWS (the ONNX scorer),
  // against the JavaScript loop over the same rows.
  const kb = syntheticKb(300, 30);
  // Pseudo-random unit vectors per text (no run of tied scores at the cut).
  const encoder: DenseEncoder = {
    name: 'hash',
    dim: 64,
    embed: (texts) =>
      Promise.resolve(
        texts.map((t) => {
          let h = 2166136261;
          for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 16777619) >>> 0;
          const v = Float32Array.from({ length: 64 }, (_, d) => Math.sin(h * 0.0001 + d * 1.7));
          const norm = Math.hypot(...v);
          return v.map((x) => x / norm);
        }),
      ),
  };
  const real = await onnxRowScorer();
  let onnxCalls = 0;
  const counted: RowScorer = {
    scores: (m, rows, q) => {
      onnxCalls++;
      return real.scores(m, rows, q);
    },
  };
  const onnx = new DenseRetriever(kb, encoder, { rowScorer: counted });
  const js = new DenseRetriever(kb, encoder, { rowScorer: null });
  try {
    for (const [path, text] of [
      ['src/m7.py', 'def fn_7_5(x):\n    return x * 5'],
      ['src/m100.py', 'VAR_120_4 = 120\nfn_120_9(2)'],
    ] as const) {
      const request = {
        file: { path, lang: 'python' as const, prefix: text },
        query: { strategy: 'last3' as const, text, spans: [] },
        topJ: 15,
      };
      const a = (await onnx.retrieve(request, new AbortController().signal)).results;
      const b = (await js.retrieve(request, new AbortController().signal)).results;
      assert.equal(a.length, 30);
      // The same results with the same scores (float32 sums in ONNX, float64 in JavaScript: two
      // nearly equal scores may swap places).
      const jsScores = new Map(b.map((r) => [r.snippet.id, r.score]));
      assert.deepEqual(new Set(jsScores.keys()), new Set(a.map((r) => r.snippet.id)));
      for (const r of a) assert.ok(Math.abs(r.score - jsScores.get(r.snippet.id)!) < 1e-4);
      assert.ok(
        a.every((r) => r.snippet.path !== path),
        'the unfinished file is never a result',
      );
    }
    assert.equal(onnxCalls, 4, 'each family (6,600 and 2,400 rows) goes to the ONNX scorer once per search');
  } finally {
    onnx.dispose();
    js.dispose();
  }
});

void test('the ONNX row scorer is loaded while the index is prepared, not by the first completion; a small repository never loads it', async () => {
  const encoder: DenseEncoder = {
    name: 'ones',
    dim: 8,
    embed: (texts) => Promise.resolve(texts.map(() => new Float32Array(8).fill(Math.SQRT1_2 / 2))),
  };
  const real = await onnxRowScorer();
  const loads = { large: 0, small: 0 };
  const loader = (which: keyof typeof loads) => (): Promise<RowScorer> => {
    loads[which]++;
    return Promise.resolve(real);
  };
  // 300 files of 30 items (6,600 functions) against 5 files of 10 (35 functions, 15 variables).
  const large = new DenseRetriever(syntheticKb(300, 30), encoder, { rowScorer: loader('large') });
  const small = new DenseRetriever(syntheticKb(5, 10), encoder, { rowScorer: loader('small') });
  try {
    await large.prepare(new AbortController().signal);
    await small.prepare(new AbortController().signal);
    assert.deepEqual(loads, { large: 1, small: 0 }, 'prepare loads the scorer for the large repository only');
    for (const dense of [large, small]) {
      const text = 'fn_3_1(x)';
      const request = {
        file: { path: 'src/m1.py', lang: 'python' as const, prefix: text },
        query: { strategy: 'last3' as const, text, spans: [] },
        topJ: 15,
      };
      assert.ok((await dense.retrieve(request, new AbortController().signal)).results.length > 0);
    }
    assert.deepEqual(loads, { large: 1, small: 0 }, 'the requests load nothing more');
  } finally {
    large.dispose();
    small.dispose();
  }
});

void test('a float32 vector file of format 1 (before the int8 layout) is read without embedding again, with the same results', async () => {
  const cache = tempDir();
  try {
    const kb = await fixtureKb('pyshop');
    const enc = countingEncoder();
    const first = new DenseRetriever(kb, enc, { indexFolder: cache.path });
    await first.prepare(new AbortController().signal);
    const request = {
      file: { path: 'app/main.py', lang: 'python' as const, prefix: '' },
      query: { strategy: 'last3' as const, text: 'def make_gateway(name, api_key)', spans: [] },
      topJ: 5,
    };
    const expected = (await first.retrieve(request, new AbortController().signal)).results.map((r) => r.snippet.id);
    first.dispose();
    const file = denseFilePath(cache.path, enc.name);
    const saved = await loadVectors(file, { encoder: enc.name, dim: enc.dim });
    assert.equal(saved.status, 'ok');
    if (saved.status !== 'ok' || saved.stored.data.layout !== 'int8') throw new Error('the dense path writes int8 rows');
    const int8Bytes = readFileSync(file).length;
    // The same vectors as an older build wrote them: float32 rows, version 1, no layout field.
    const { rows, dim, data } = saved.stored;
    const floats = dequantize(data.codes, data.scales, dim);
    await writeFramedFile(
      file,
      { magic: 'coderag-dense-vectors', version: 1, encoder: enc.name, fingerprint: '', dim, rows: rows.map((r) => [r.id, r.hash]) },
      Buffer.from(floats.buffer),
    );
    assert.ok(
      readFileSync(file).length - int8Bytes > rows.length * dim * 2.9,
      'the int8 file takes about a byte per value where float32 takes four',
    );
    const enc2 = countingEncoder();
    const again = new DenseRetriever(kb, enc2, { indexFolder: cache.path });
    await again.prepare(new AbortController().signal);
    assert.equal(again.lastReport?.store, 'loaded');
    assert.equal(enc2.seen.length, 0, 'nothing embedded again');
    assert.deepEqual(
      (await again.retrieve(request, new AbortController().signal)).results.map((r) => r.snippet.id),
      expected,
    );
    again.dispose();
  } finally {
    cache.cleanup();
  }
});

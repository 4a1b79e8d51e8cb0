// Sparse retrieval (CodeRAG section 2.2.1): tokenisation, TF-IDF cosine against hand-computed
// values, exclusion of the unfinished file, incremental updates, and the fixture repositories.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeTerms, identifierParts } from '../../../src/engine/retrieve/sparse/codeTerms';
import { TfIdfIndex } from '../../../src/engine/retrieve/sparse/TfIdfIndex';
import { SparseRetriever } from '../../../src/engine/retrieve/sparse/sparseRetrieve';
import { TopK } from '../../../src/engine/retrieve/topK';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { fakeItem, fixtureKb, JAVA_ROOT, parsers, unfinishedAfter, unfinishedAt } from './retrieveFixtures';
import { tempDir } from '../../helpers/paths';
import { CancellationError } from '../../../src/engine/util/errors';

void test('codeTerms: lower-cased words of 2+ word characters (Unicode), identifier parts only when asked', () => {
  assert.deepEqual(codeTerms('x = makeGateway(a_b, 3); größe'), ['makegateway', 'a_b', 'größe']);
  assert.deepEqual(codeTerms('max_file_bytes parseHTTPResponse', { splitIdentifiers: true }), [
    'max_file_bytes',
    'max',
    'file',
    'bytes',
    'parsehttpresponse',
    'parse',
    'http',
    'response',
  ]);
  assert.deepEqual(identifierParts('getURLFor2Users'), ['get', 'URL', 'For', '2', 'Users']);
  assert.deepEqual(codeTerms(''), []);
});

void test('TopK keeps the k best, ties in offer order', () => {
  const top = new TopK<string>(2);
  for (const [v, s] of [
    ['a', 1],
    ['b', 3],
    ['c', 3],
    ['d', 2],
  ] as const)
    top.offer(v, s);
  assert.deepEqual(
    top.sorted().map((x) => x.value),
    ['b', 'c'],
  );
  assert.equal(new TopK<string>(0).sorted().length, 0);
});

void test('TfIdfIndex scores equal sklearn TfidfVectorizer cosine (smooth idf, l2)', () => {
  const index = new TfIdfIndex<string>((d) => d);
  index.setGroup('f1', ['alpha beta']);
  index.setGroup('f2', ['alpha gamma gamma']);
  const g = Math.log(3 / 2) + 1;
  const hits = index.query('gamma', 5);
  assert.equal(hits.length, 1);
  assert.equal(hits[0]?.doc, 'alpha gamma gamma');
  assert.ok(Math.abs(hits[0]!.score - (2 * g) / Math.sqrt(1 + 4 * g * g)) < 1e-6);
  // Query "alpha beta": d1 is the query itself (cosine 1).
  const both = index.query('alpha beta!', 5);
  assert.ok(Math.abs(both[0]!.score - 1) < 1e-6);
  // The excluded group never appears; unknown terms give nothing.
  assert.deepEqual(
    index.query('alpha beta', 5, 'f1').map((h) => h.doc),
    ['alpha gamma gamma'],
  );
  assert.deepEqual(index.query('zeta', 5), []);
  // Incremental: replacing and removing groups.
  index.setGroup('f2', ['delta']);
  assert.deepEqual(index.query('gamma', 5), []);
  assert.equal(index.query('delta', 5)[0]?.doc, 'delta');
  index.removeGroup('f2');
  assert.deepEqual(index.query('delta', 5), []);
  assert.equal(index.size, 1);
});

void test('SparseRetriever: top-j per family, the unfinished file excluded, items of synthetic KB', async () => {
  const files = new Map([
    [
      'a.py',
      [
        fakeItem('a.py', 'load_config', 'def load_config(path): read config file'),
        fakeItem('a.py', 'CONFIG_PATH', 'CONFIG_PATH = "config.toml"', 'globalVariable'),
      ],
    ],
    ['b.py', [fakeItem('b.py', 'save_config', 'def save_config(path, config): write config')]],
  ]);
  const kb = {
    paths: () => [...files.keys()],
    file: (p: string) =>
      files.has(p)
        ? { path: p, lang: 'python' as const, items: files.get(p)!, classes: [], imports: [], hasSyntaxErrors: false }
        : undefined,
    onDidChange: () => ({ dispose() {} }),
  };
  const sparse = new SparseRetriever(kb);
  const query = { strategy: 'last3' as const, text: 'config = load_config(CONFIG_PATH)', spans: [] };
  const r = await sparse.retrieve({ file: { path: 'c.py', lang: 'python', prefix: '' }, query, topJ: 1 }, new AbortController().signal);
  assert.deepEqual(r.results.map((x) => x.snippet.name).sort(), ['CONFIG_PATH', 'load_config']);
  const excluded = await sparse.retrieve(
    { file: { path: 'a.py', lang: 'python', prefix: '' }, query, topJ: 5 },
    new AbortController().signal,
  );
  assert.deepEqual(
    excluded.results.map((x) => x.snippet.path),
    ['b.py'],
  );
  sparse.dispose();
});

void test('pyshop: a cross-file call finds its definition in the sparse top results', async () => {
  const kb = await fixtureKb('pyshop');
  const sparse = new SparseRetriever(kb);
  // main.py line 17: `gateway = make_gateway(` with the cursor after the parenthesis.
  const file = unfinishedAfter('pyshop', 'app/main.py', 17, 'make_gateway(');
  const r = await sparse.retrieve({ file, query: lastLinesQuery(file.prefix, 3), topJ: 15 }, new AbortController().signal);
  const ids = r.results.map((x) => x.snippet.id);
  assert.ok(ids.slice(0, 3).includes('pyshop/payments.py#function:make_gateway'), ids.join('\n'));
  assert.ok(ids.every((id) => !id.startsWith('app/main.py')));
  // Cursor at line 1: an empty query finds nothing (and does not fail).
  const first = unfinishedAt('pyshop', 'app/main.py', 1);
  assert.deepEqual(
    (await sparse.retrieve({ file: first, query: lastLinesQuery(first.prefix, 10), topJ: 15 }, new AbortController().signal)).results,
    [],
  );
  sparse.dispose();
});

void test('javashop: a cross-file call (Gateways.create) is in the sparse top results', async () => {
  const kb = await fixtureKb('javashop');
  const sparse = new SparseRetriever(kb);
  const file = unfinishedAfter('javashop', `${JAVA_ROOT}/App.java`, 15, 'Gateways.create(');
  const r = await sparse.retrieve({ file, query: lastLinesQuery(file.prefix, 3), topJ: 15 }, new AbortController().signal);
  const ids = r.results.map((x) => x.snippet.id);
  assert.ok(
    ids.slice(0, 5).some((id) => id.startsWith(`${JAVA_ROOT}/payment/Gateways.java#classFunction:Gateways.create`)),
    ids.join('\n'),
  );
  sparse.dispose();
});

void test('SparseRetriever: an aborted index build resumes on the next call', async () => {
  const kb = await fixtureKb('pyshop');
  const sparse = new SparseRetriever(kb);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(sparse.prepare(controller.signal), CancellationError);
  const file = unfinishedAfter('pyshop', 'app/main.py', 17, 'make_gateway(');
  const r = await sparse.retrieve({ file, query: lastLinesQuery(file.prefix, 3), topJ: 15 }, new AbortController().signal);
  assert.ok(r.results.some((x) => x.snippet.id === 'pyshop/payments.py#function:make_gateway'));
  sparse.dispose();
});

void test('SparseRetriever follows knowledge-base changes; a repository with no items returns nothing', async () => {
  const dir = tempDir();
  try {
    const kb = await KnowledgeBase.open({ repoRoot: dir.path, parsers: await parsers() });
    await kb.index(undefined, new AbortController().signal);
    const sparse = new SparseRetriever(kb);
    const file = { path: 'main.py', lang: 'python' as const, prefix: 'total = compute_invoice_total(' };
    const query = lastLinesQuery(file.prefix, 3);
    assert.deepEqual((await sparse.retrieve({ file, query, topJ: 15 }, new AbortController().signal)).results, []);
    mkdirSync(join(dir.path, 'billing'));
    writeFileSync(join(dir.path, 'billing', 'invoice.py'), 'def compute_invoice_total(lines):\n    return sum(lines)\n');
    await kb.updateFile('billing/invoice.py');
    const after = await sparse.retrieve({ file, query, topJ: 15 }, new AbortController().signal);
    assert.equal(after.results[0]?.snippet.id, 'billing/invoice.py#function:compute_invoice_total');
    await kb.removeFile('billing/invoice.py');
    assert.deepEqual((await sparse.retrieve({ file, query, topJ: 15 }, new AbortController().signal)).results, []);
    sparse.dispose();
    kb.dispose();
  } finally {
    dir.cleanup();
  }
});

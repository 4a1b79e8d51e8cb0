// Fault matrix, round 2 (README.md row 3): index items lost. An open document far past the limits
// of a file on disk (a 25 MB line) is completed from a window around the cursor, and the parser
// stays alive for every later request; a parse that fails never replaces a file's saved items, in
// an update, an index run or a full rebuild.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { KnowledgeBase } from '../../src/engine/kb/KnowledgeBase';
import { loadParsers, type Parsers } from '../../src/engine/kb/parsers';
import { indexFolderFor } from '../../src/engine/kb/store';
import { copyFixture, grammarsDir, tempDir } from '../helpers/paths';
import { startLsp, startModelServerThread } from '../server/lspHarness';
import { writeTree } from './helpers';
import { RebuildIndexRequest, type RebuildIndexResult } from '../../src/protocol/protocol';

/** The real parsers, whose parse throws as tree-sitter's does once its WebAssembly runtime aborted. */
function abortedParsers(real: Parsers): Parsers {
  return {
    language: (lang) => real.language(lang),
    parser: (lang) => {
      const parser = real.parser(lang);
      return new Proxy(parser, {
        get(target, key, receiver) {
          if (key === 'parse')
            return () => {
              throw new Error('RuntimeError: Aborted(). Build with -sASSERTIONS for more info.');
            };
          const value = Reflect.get(target, key, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
  };
}

const FILES = {
  'shop/cart.py': 'class Cart:\n    def add(self, item):\n        self.items.append(item)\n\n    def total(self):\n        return 0\n',
  'shop/price.py': 'def price(cart):\n    return sum(cart.items)\n\nTAX = 0.2\n',
};

const itemNames = (kb: KnowledgeBase): string[] =>
  kb
    .items()
    .map((i) => i.qualifiedName)
    .sort();

void test('a parser that fails (aborted runtime) never replaces saved items: not on a file update, not in an index run, not in a full rebuild; a fresh open has them all', async () => {
  const dir = tempDir();
  try {
    const repo = join(dir.path, 'repo');
    writeTree(repo, FILES);
    const indexFolder = indexFolderFor(join(dir.path, 'cache'), repo);
    const real = await loadParsers(grammarsDir);
    const good = await KnowledgeBase.open({ repoRoot: repo, indexFolder, parsers: real });
    await good.index(undefined, new AbortController().signal);
    const all = itemNames(good);
    assert.equal(all.length, 4, all.join(', '));
    good.dispose();

    const broken = await KnowledgeBase.open({ repoRoot: repo, indexFolder, parsers: abortedParsers(real) });
    // A watcher event or a save with new content: the parse fails, the old items stay.
    writeTree(repo, { 'shop/price.py': 'def price(cart):\n    return sum(cart.items) * 2\n\nTAX = 0.2\n' });
    assert.equal(await broken.updateFile('shop/price.py'), false);
    assert.equal(await broken.updateFile('shop/cart.py', 'class Cart:\n    pass\n'), false);
    assert.deepEqual(itemNames(broken), all);
    const run = await broken.index(undefined, new AbortController().signal);
    assert.deepEqual(itemNames(broken), all, 'an index run keeps them');
    assert.deepEqual(
      run.skipped.map((s) => [s.path, s.reason]),
      [['shop/price.py', 'parseFailed']],
      'the changed file is reported',
    );
    assert.match(run.skipped[0]?.detail ?? '', /Aborted\(\).*previous items are kept/);
    broken.dispose();

    const rebuilt = await KnowledgeBase.open({ repoRoot: repo, indexFolder, parsers: abortedParsers(real), discardSavedIndex: true });
    const full = await rebuilt.index(undefined, new AbortController().signal);
    assert.deepEqual(itemNames(rebuilt), all, 'a full rebuild keeps the saved items where parsing fails');
    assert.equal(full.skipped.filter((s) => s.reason === 'parseFailed').length, 2);
    rebuilt.dispose();

    const fresh = await KnowledgeBase.open({ repoRoot: repo, indexFolder, parsers: real });
    const again = await fresh.index(undefined, new AbortController().signal);
    assert.deepEqual(itemNames(fresh), all, 'a fresh open loads every item, and parses the changed file again');
    assert.equal(again.parsed, 1, 'shop/price.py, whose saved items are of its old text');
    fresh.dispose();
  } finally {
    dir.cleanup();
  }
});

const MODEL = 'coderag-lm:test';
// app/main.py line 19 (0-based 18): a cursor whose completion needs the index (as in server.test.ts).
const LINE = 18;
const COL = '    service = CheckoutService(cart, '.length;

void test('server: a 25 MB one-line open document is completed from a window around the cursor; later completions and a full rebuild keep every item', async () => {
  const repo = copyFixture('pyshop');
  const model = await startModelServerThread([MODEL]);
  const lsp = await startLsp(repo.path, {
    debounceMs: 0,
    model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
    ollama: { host: model.url, completionModel: MODEL },
    rerank: { kind: 'none' },
    experimental: { model: { maxNewTokens: 8 }, ollama: { keepAlive: '5m' } },
  });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'));
    const itemsBefore = (await lsp.status()).folders[0]?.items ?? 0;
    assert.ok(itemsBefore > 0);
    const line = `DATA = [${'1, '.repeat(25_000_000 / 3)}`;
    const bigUri = lsp.open(join(repo.path, 'app', 'data_dump.py'), 'python', line);
    await lsp.complete(bigUri, 0, line.length);
    const bigTrace = (await lsp.explain())?.trace;
    assert.equal(bigTrace?.filePath, 'app/data_dump.py', 'the big document was completed (a trace was kept)');
    assert.equal(bigTrace?.error, undefined, JSON.stringify(bigTrace?.error));
    assert.ok((bigTrace?.prompt?.text.length ?? Infinity) < 100_000, 'the prompt holds a window, not the document');
    // The parser is alive: the body mode's detection, the dataflow path and the index all parse.
    const mainUri = lsp.open(join(repo.path, 'app', 'main.py'), 'python');
    const items = await lsp.complete(mainUri, LINE, COL);
    const trace = (await lsp.explain(items[0]?.traceId))?.trace;
    assert.equal(trace?.filePath, 'app/main.py');
    assert.equal(trace?.error, undefined, JSON.stringify(trace?.error));
    assert.match(trace?.prompt?.text ?? '', /# pyshop\/services\/checkout\.py/, 'retrieval found the definition');
    const rebuilt = (await lsp.connection.sendRequest(RebuildIndexRequest.method, { full: true })) as RebuildIndexResult;
    assert.equal(rebuilt.folders[0]?.items, itemsBefore, 'a full rebuild keeps every item');
    assert.equal(rebuilt.folders[0]?.state, 'ready');
  } finally {
    await lsp.close();
    if (lsp.child.exitCode === null) lsp.child.kill('SIGKILL');
    await model.close();
    repo.cleanup();
  }
});

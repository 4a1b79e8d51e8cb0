// The knowledge base's packed texts (kb/packedText.ts): what an item's text and docstring read back,
// what a saved index holds, and what a knowledge base built or reloaded gives, are exactly the
// extraction's, for real files parsed by tree-sitter, across block bounds and non-ASCII text.
import test, { before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadParsers, langOfPath, type Parsers } from '../../../src/engine/kb/parsers';
import { extractFile } from '../../../src/engine/kb/extract';
import { DECODED_BYTES, packExtraction, PackedTexts } from '../../../src/engine/kb/packedText';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import type { FileExtraction } from '../../../src/engine/kb/types';

const repoRoot = path.resolve(__dirname, '../../..');
const fixtures = path.join(repoRoot, 'test', 'fixtures');

let parsers: Parsers;
before(async () => {
  parsers = await loadParsers(path.join(repoRoot, 'grammars'));
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const abs = path.join(dir, name);
    if (statSync(abs).isDirectory()) return sourceFiles(abs);
    return langOfPath(name) ? [abs] : [];
  });
}

function plain(x: FileExtraction): unknown {
  return JSON.parse(JSON.stringify(x));
}

test('packed items read back the texts and docstrings of every fixture file, and serialise as the extraction does', () => {
  let items = 0;
  for (const abs of sourceFiles(fixtures)) {
    const lang = langOfPath(abs)!;
    const x = extractFile(parsers, lang, path.relative(fixtures, abs), readFileSync(abs, 'utf8'));
    const packed = packExtraction(x, new PackedTexts());
    assert.equal(packed.items.length, x.items.length);
    x.items.forEach((item, i) => {
      const p = packed.items[i]!;
      assert.equal(p.text, item.text, `${item.id} text`);
      assert.equal(p.docstring, item.docstring, `${item.id} docstring`);
      assert.equal(p.id, item.id);
      assert.equal(p.className, item.className);
      items++;
    });
    assert.equal(JSON.stringify(packed), JSON.stringify(x), abs);
  }
  assert.ok(items > 50, `fixture items: ${items}`);
});

test('a file of many items, non-ASCII docstrings and empty ones, spread over several blocks, reads back in any order', () => {
  const methods = Array.from({ length: 400 }, (_, i) => {
    const doc = i % 3 === 0 ? '' : `    /** Größe ${i} — 「値」 ${'x'.repeat(i % 50)} */\n`;
    return `${doc}    public int m${i}(int a) { return a + ${i}; /* ünïcödé ${i} */ }\n`;
  });
  const source = `package p;\n\npublic class Big {\n${methods.join('\n')}}\n`;
  const x = extractFile(parsers, 'java', 'p/Big.java', source);
  assert.equal(x.items.length, 400);
  const packed = packExtraction(x, new PackedTexts());
  // Read backwards and interleaved: each read finds its own block.
  for (let i = x.items.length - 1; i >= 0; i -= 7) assert.equal(packed.items[i]!.text, x.items[i]!.text);
  for (let i = 0; i < x.items.length; i += 5) {
    assert.equal(packed.items[i]!.docstring, x.items[i]!.docstring);
    assert.equal(packed.items[x.items.length - 1 - i]!.text, x.items[x.items.length - 1 - i]!.text);
  }
  assert.match(packed.items[1]!.docstring, /Größe 1 — 「値」/);
  assert.equal(packed.items[0]!.docstring, '');
  assert.deepEqual(plain(packed), plain(x));
});

test('the texts kept decoded stay within DECODED_BYTES while a file larger than that is read, and every read is right', () => {
  // 200 methods with a Javadoc of about 30 KB each: about 6 MB of docstrings.
  const methods = Array.from(
    { length: 200 },
    (_, i) => `    /**\n${`     * Step ${i}: ${'y'.repeat(70)}\n`.repeat(360)}     */\n    public int m${i}(int a) { return a + ${i}; }\n`,
  );
  const source = `package p;\n\npublic class Huge {\n${methods.join('\n')}}\n`;
  const x = extractFile(parsers, 'java', 'p/Huge.java', source);
  assert.equal(x.items.length, 200);
  const store = new PackedTexts();
  const packed = packExtraction(x, store);
  const keptBytes = (): number =>
    [...store.decoded.values()].reduce((n, texts) => n + texts.reduce((m, t) => m + Buffer.byteLength(t), 0), 0);
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < x.items.length; i++) {
      assert.equal(packed.items[i]!.docstring, x.items[i]!.docstring);
      assert.ok(keptBytes() <= DECODED_BYTES, `${keptBytes()} bytes kept decoded`);
    }
  }
  // The budget is used, not a handful of blocks.
  assert.ok(keptBytes() > DECODED_BYTES / 2, `${keptBytes()} bytes kept decoded`);
  assert.equal(store.decodedBytes, keptBytes());
});

test('a knowledge base built, saved and reloaded gives the items the extraction gives', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'coderag-packed-'));
  try {
    const repo = path.join(dir, 'repo');
    mkdirSync(path.join(repo, 'pkg'), { recursive: true });
    writeFileSync(
      path.join(repo, 'pkg', 'util.py'),
      'def größe(a):\n    """Die Größe von a."""\n    return len(a)\n\nclass Box:\n    """A box."""\n    size = 3\n\n    def grow(self, n):\n        return self.size + n\n',
    );
    const expected = extractFile(parsers, 'python', 'pkg/util.py', readFileSync(path.join(repo, 'pkg', 'util.py'), 'utf8'));
    const indexFolder = path.join(dir, 'index');
    const fresh = await KnowledgeBase.open({ repoRoot: repo, indexFolder, parsers });
    await fresh.index(undefined, new AbortController().signal);
    const reopened = await KnowledgeBase.open({ repoRoot: repo, indexFolder, parsers });
    assert.equal((await reopened.index(undefined, new AbortController().signal)).savedIndex, 'loaded');
    for (const kb of [fresh, reopened]) {
      assert.deepEqual(
        kb.items().map((i) => [i.id, i.text, i.docstring]),
        expected.items.map((i) => [i.id, i.text, i.docstring]),
      );
      assert.deepEqual(plain(kb.file('pkg/util.py')!), plain(expected));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

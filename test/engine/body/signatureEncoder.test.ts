// Rambo step a's encoder option: signatures compared by the shipped code encoder's
// cosine instead of token Jaccard; the signatures are embedded once and kept current per file.
// Step e's compositions of the lists (turns, CodeRAG's items first, definitions first, RRF).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, grammarsDir, repoRoot } from '../../helpers/paths';
import { loadParsers } from '../../../src/engine/kb/parsers';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { ModelRegistry } from '../../../src/engine/models';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { composeBodyLists, signatureSimilarByVector } from '../../../src/engine/body/rambo';

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });
after(() => registry.dispose());

void describe('signature-similar methods by the code encoder', () => {
  void test('the method whose signature reads the same comes first; the target\'s class stays out; signatures are embedded once', async () => {
    const fixture = copyFixture('javashop');
    const parsers = await loadParsers(grammarsDir);
    const kb = await KnowledgeBase.open({ repoRoot: fixture.path, parsers });
    const repo = new RepoMethods(kb);
    const encoder = await registry.encoder(undefined, new AbortController().signal);
    let embedded = 0;
    const embed = (texts: string[], signal: AbortSignal): Promise<Float32Array[]> => {
      embedded += texts.length;
      return encoder.embed(texts, signal);
    };
    const signal = new AbortController().signal;
    try {
      await kb.index(undefined, new AbortController().signal);
      const first = await repo.embedSignatures(embed, signal);
      assert.ok(first > 5, `every signature embedded (${first})`);
      assert.equal(await repo.embedSignatures(embed, signal), 0, 'a second call embeds nothing');
      // A new file declaring a price getter: its body is what the developer asks for.
      const rel = 'src/main/java/com/example/shop/model/Voucher.java';
      writeFileSync(join(fixture.path, rel), 'package com.example.shop.model;\n\npublic class Voucher {\n    public double getPrice() {\n    }\n\n    public String code() {\n        return "v";\n    }\n}\n');
      await kb.updateFile(rel);
      assert.equal(await repo.embedSignatures(embed, signal), 1, 'only the new signature text (`public String code()`) is embedded');
      const target = { lang: 'java' as const, name: 'getPrice', className: 'Voucher', signature: 'public double getPrice()', signatureRow: 3, signatureIndent: 4 };
      const [query] = await encoder.embed([target.signature], signal);
      const hits = signatureSimilarByVector(target, rel, repo, 10, query!);
      assert.equal(hits.length, 10);
      assert.equal(hits[0]?.item.id, 'src/main/java/com/example/shop/model/Product.java#classFunction:Product.getPrice', JSON.stringify(hits.map((h) => [h.item.id, h.score.toFixed(3)])));
      assert.ok(Math.abs(hits[0]!.score - 1) < 1e-3, `the same text: cosine 1 (${hits[0]!.score})`);
      assert.ok(hits.every((h, i) => i === 0 || h.score <= hits[i - 1]!.score), 'best first');
      assert.ok(hits.every((h) => h.item.path !== rel), 'the target\'s class in its file stays out');
      assert.equal(embedded, first + 1, 'each signature text once (Voucher.getPrice reads as Product.getPrice)');
    } finally {
      repo.dispose();
      kb.dispose();
      fixture.cleanup();
    }
  });
});

void describe('step e: composing the lists', () => {
  const s = (id: string): { snippet: { id: string } } => ({ snippet: { id } });
  const lists = { usages: [s('u1'), s('u2'), s('shared')], definitions: [s('d1'), s('shared')], knowledge: [s('k1'), s('k2'), s('d1')], signatures: [s('g1')] };
  const ids = (xs: Array<{ snippet: { id: string } }>): string[] => xs.map((x) => x.snippet.id);

  void test('turns: a usage, a definition, a CodeRAG item, a signature hit, and again; each snippet once', () => {
    assert.deepEqual(ids(composeBodyLists(lists, 'turns')), ['u1', 'd1', 'k1', 'g1', 'u2', 'shared', 'k2']);
  });

  void test('knowledge-first: every CodeRAG item, then the turns of the others', () => {
    assert.deepEqual(ids(composeBodyLists(lists, 'knowledge-first')), ['k1', 'k2', 'd1', 'u1', 'g1', 'u2', 'shared']);
  });

  void test('definitions-first: definitions and CodeRAG items in turns, then usages and signature hits', () => {
    assert.deepEqual(ids(composeBodyLists(lists, 'definitions-first')), ['d1', 'k1', 'shared', 'k2', 'u1', 'g1', 'u2']);
  });

  void test('related definitions (the signature hits\' elements) come after the sketch\'s definitions and CodeRAG\'s items', () => {
    const withRelated = { ...lists, related: [s('r1'), s('d1')] };
    assert.deepEqual(ids(composeBodyLists(withRelated, 'definitions-first')), ['d1', 'k1', 'shared', 'k2', 'u1', 'r1', 'g1', 'u2']);
    assert.deepEqual(ids(composeBodyLists(withRelated, 'knowledge-first')), ['k1', 'k2', 'd1', 'u1', 'g1', 'u2', 'shared', 'r1']);
    assert.deepEqual(ids(composeBodyLists(withRelated, 'turns')), ['u1', 'd1', 'k1', 'g1', 'r1', 'u2', 'shared', 'k2']);
  });

  void test('rrf: a snippet in two lists rises above one found once at the same rank', () => {
    const fused = ids(composeBodyLists(lists, 'rrf'));
    assert.equal(fused[0], 'd1', `d1 is first in definitions and third in CodeRAG's items: ${fused.join(', ')}`);
    assert.deepEqual([...fused].sort(), ['d1', 'g1', 'k1', 'k2', 'shared', 'u1', 'u2']);
  });
});

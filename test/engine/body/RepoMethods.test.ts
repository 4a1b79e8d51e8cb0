// The identifier -> using-methods index (the body mode's step d) is built with the knowledge base and kept
// current per file: a change to one file re-indexes that file only.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, grammarsDir } from '../../helpers/paths';
import { loadParsers } from '../../../src/engine/kb/parsers';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { rankUsages, signatureSimilar } from '../../../src/engine/body/rambo';

// Currency's own methods use its field `taxRate`; the test follows the other files.
const usersOf = (repo: RepoMethods, name: string): string[] =>
  repo
    .using(name)
    .map((m) => m.item.id)
    .filter((id) => !id.includes('/Currency.java'))
    .sort();

void describe('usage index', () => {
  void test('one changed file updates the index: a new user appears, an edited one leaves, a removed file goes', async () => {
    const fixture = copyFixture('javashop');
    const parsers = await loadParsers(grammarsDir);
    const kb = await KnowledgeBase.open({ repoRoot: fixture.path, parsers });
    const repo = new RepoMethods(kb);
    try {
      await kb.index(undefined, new AbortController().signal);
      assert.deepEqual(usersOf(repo, 'taxRate'), ['src/main/java/com/example/shop/model/Cart.java#classFunction:Cart.total']);
      const rel = 'src/main/java/com/example/shop/util/Taxes.java';
      writeFileSync(
        join(fixture.path, rel),
        'package com.example.shop.util;\n\nimport com.example.shop.model.Currency;\n\npublic class Taxes {\n    public static double grossOf(double net, Currency c) {\n        return net * (1 + c.taxRate());\n    }\n}\n',
      );
      assert.equal(await kb.updateFile(rel), true);
      assert.deepEqual(usersOf(repo, 'taxRate'), [
        'src/main/java/com/example/shop/model/Cart.java#classFunction:Cart.total',
        `${rel}#classFunction:Taxes.grossOf`,
      ]);
      assert.equal(repo.updates, 1, 'only the changed file was re-indexed');
      writeFileSync(
        join(fixture.path, rel),
        'package com.example.shop.util;\n\npublic class Taxes {\n    public static double grossOf(double net) {\n        return net * 1.2;\n    }\n}\n',
      );
      await kb.updateFile(rel);
      assert.deepEqual(usersOf(repo, 'taxRate'), ['src/main/java/com/example/shop/model/Cart.java#classFunction:Cart.total']);
      assert.deepEqual(usersOf(repo, 'grossOf'), [], 'a declaration is not a use');
      unlinkSync(join(fixture.path, rel));
      await kb.updateFile(rel);
      assert.equal(
        repo.methods().some((m) => m.item.path === rel),
        false,
      );
      assert.equal(repo.updates, 3);
    } finally {
      repo.dispose();
      kb.dispose();
      fixture.cleanup();
    }
  });

  void test('signature hits and usages leave out the target and its class in its file', async () => {
    const fixture = copyFixture('javashop');
    const parsers = await loadParsers(grammarsDir);
    const kb = await KnowledgeBase.open({ repoRoot: fixture.path, parsers });
    const repo = new RepoMethods(kb);
    try {
      await kb.index(undefined, new AbortController().signal);
      const target = {
        lang: 'java' as const,
        name: 'total',
        className: 'Cart',
        signature: 'public double total()',
        signatureRow: 61,
        signatureIndent: 4,
      };
      const file = 'src/main/java/com/example/shop/model/Cart.java';
      const hits = signatureSimilar(target, file, repo, 10);
      assert.ok(hits.length > 0);
      assert.ok(
        hits.every((m) => !(m.item.path === file && m.item.className === 'Cart')),
        JSON.stringify(hits.map((m) => m.item.id)),
      );
      const usages = rankUsages(target, file, ['getPrice', 'taxRate', 'subtotal'], 'gross += line.subtotal();', repo, 20);
      assert.ok(
        usages.every((m) => m.item.path !== file || m.item.className === 'Cart.Line'),
        JSON.stringify(usages.map((m) => m.item.id)),
      );
      assert.ok(
        usages.some((m) => m.item.id.endsWith('Cart.Line.subtotal')),
        'a method of another class in the same file, written before the target, may serve',
      );
    } finally {
      repo.dispose();
      kb.dispose();
      fixture.cleanup();
    }
  });
});

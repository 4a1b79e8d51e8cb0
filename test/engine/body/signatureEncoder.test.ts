// Rambo step a's encoder option (issue 17): signatures compared by the shipped code encoder's
// cosine instead of token Jaccard; the signatures are embedded once and kept current per file.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, grammarsDir, repoRoot } from '../../helpers/paths';
import { loadParsers } from '../../../src/engine/kb/parsers';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { ModelRegistry } from '../../../src/engine/models';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { signatureSimilarByVector } from '../../../src/engine/body/rambo';

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

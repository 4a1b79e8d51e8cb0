// Rambo step a's encoder variant (src/bench/variants): signatures compared by the shipped code
// encoder's cosine instead of the product's token Jaccard; the signatures are embedded once and
// kept current per file; through the pipeline's body mode, and the block layout of the body prompt.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { copyFixture, fixturesDir, grammarsDir, repoRoot } from '../helpers/paths';
import { recordingModel } from '../helpers/recordingModel';
import { loadParsers } from '../../src/engine/kb/parsers';
import { KnowledgeBase } from '../../src/engine/kb/KnowledgeBase';
import { ModelRegistry } from '../../src/engine/models';
import { RepoMethods } from '../../src/engine/body/RepoMethods';
import { bodyMode, createPipeline, formatTraceMarkdown, resolveOptions, type CompletionRequest } from '../../src/engine/pipeline';
import { encoderSignatures, SignatureVectors } from '../../src/bench/variants/encoderSignatures';
import { BLOCK_LAYOUT } from '../../src/bench/variants/blockBodyPrompt';

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });
after(() => registry.dispose());

void describe('signature-similar methods by the code encoder', () => {
  void test("the method whose signature reads the same comes first; the target's class stays out; signatures are embedded once", async () => {
    const fixture = copyFixture('javashop');
    const parsers = await loadParsers(grammarsDir);
    const kb = await KnowledgeBase.open({ repoRoot: fixture.path, parsers });
    const repo = new RepoMethods(kb);
    const encoder = await registry.encoder(undefined, new AbortController().signal);
    let embedded = 0;
    const vectors = new SignatureVectors((texts, signal) => {
      embedded += texts.length;
      return encoder.embed(texts, signal);
    });
    const signal = new AbortController().signal;
    try {
      await kb.index(undefined, new AbortController().signal);
      const first = await vectors.update(repo, signal);
      assert.ok(first > 5, `every signature embedded (${first})`);
      assert.equal(await vectors.update(repo, signal), 0, 'a second call embeds nothing');
      // A new file declaring a price getter: its body is what the developer asks for.
      const rel = 'src/main/java/com/example/shop/model/Voucher.java';
      writeFileSync(
        join(fixture.path, rel),
        'package com.example.shop.model;\n\npublic class Voucher {\n    public double getPrice() {\n    }\n\n    public String code() {\n        return "v";\n    }\n}\n',
      );
      await kb.updateFile(rel);
      assert.equal(await vectors.update(repo, signal), 1, 'only the new signature text (`public String code()`) is embedded');
      const target = {
        lang: 'java' as const,
        name: 'getPrice',
        className: 'Voucher',
        signature: 'public double getPrice()',
        signatureRow: 3,
        signatureIndent: 4,
      };
      const [query] = await encoder.embed([target.signature], signal);
      const hits = vectors.signatureHits(target, rel, repo, 10, query!);
      assert.equal(hits.length, 10);
      assert.equal(
        hits[0]?.item.id,
        'src/main/java/com/example/shop/model/Product.java#classFunction:Product.getPrice',
        JSON.stringify(hits.map((h) => [h.item.id, h.score.toFixed(3)])),
      );
      assert.ok(Math.abs(hits[0]!.score - 1) < 1e-3, `the same text: cosine 1 (${hits[0]!.score})`);
      assert.ok(
        hits.every((h, i) => i === 0 || h.score <= hits[i - 1]!.score),
        'best first',
      );
      assert.ok(
        hits.every((h) => h.item.path !== rel),
        "the target's class in its file stays out",
      );
      assert.equal(embedded, first + 1, 'each signature text once (Voucher.getPrice reads as Product.getPrice)');
    } finally {
      repo.dispose();
      kb.dispose();
      fixture.cleanup();
    }
  });
});

void describe("the bench's body variants through the body mode", () => {
  const rel = 'src/main/java/com/example/shop/payment/Gateways.java';
  const header = 'public static PaymentGateway create(String name, String apiKey) {';
  const emptied = (): CompletionRequest => {
    const text = readFileSync(join(fixturesDir, 'javashop', rel), 'utf8');
    const start = text.indexOf(header) + header.length;
    const end = text.indexOf('\n    }\n', start);
    const edited = `${text.slice(0, start)}\n        \n    }\n${text.slice(end + 7)}`;
    return { filePath: rel, lang: 'java', prefix: edited.slice(0, start + 9), suffix: edited.slice(start + 9) };
  };
  const signal = new AbortController().signal;

  void test('signatures by the encoder where its vectors are given, else Jaccard with the reason in the trace', async () => {
    const parsers = await loadParsers(grammarsDir);
    const kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'javashop'), parsers });
    await kb.index(undefined, signal);
    const repo = new RepoMethods(kb);
    try {
      const encoder = await registry.encoder(undefined, signal);
      const options = resolveOptions({ body: { maxNewTokens: 8 } });
      const run = (vectors: SignatureVectors | undefined) =>
        createPipeline(
          options,
          { env: { repo: { retrievers: [], methods: repo } }, hooks: { body: { sketch: 'none', signatures: encoderSignatures(vectors) } } },
          bodyMode({ parsers }),
        ).complete(emptied(), signal);
      const withEncoder = await run(new SignatureVectors((t, s) => encoder.embed(t, s)));
      assert.equal(withEncoder.trace.body?.signatureMatch, 'encoder');
      const scores = withEncoder.trace.body!.signatureSimilar.map((h) => h.score);
      assert.ok(
        scores.length > 0 && scores.every((x, i) => x <= 1.0001 && (i === 0 || x <= scores[i - 1]!)),
        `cosines, best first: ${scores.join(', ')}`,
      );
      assert.match(formatTraceMarkdown(withEncoder.trace), /Signature-similar methods \(encoder\):/);
      const without = await run(undefined);
      assert.equal(without.trace.body?.signatureMatch, 'jaccard (no code encoder loaded)');
      const product = await createPipeline(
        options,
        { env: { repo: { retrievers: [], methods: repo } }, hooks: { body: { sketch: 'none' } } },
        bodyMode({ parsers }),
      ).complete(emptied(), signal);
      assert.equal(product.trace.body?.signatureMatch, 'jaccard');
      assert.deepEqual(without.trace.body?.signatureSimilar, product.trace.body?.signatureSimilar, "the fallback is the product's search");
    } finally {
      repo.dispose();
      kb.dispose();
    }
  });

  void test('the block layout: the fragments under their paths in one comment block, no Rambo instruction', async () => {
    const parsers = await loadParsers(grammarsDir);
    const kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'javashop'), parsers });
    await kb.index(undefined, signal);
    const repo = new RepoMethods(kb);
    try {
      const prompts: string[] = [];
      for (const promptLayout of [undefined, BLOCK_LAYOUT]) {
        const { client, seen } = recordingModel('return null;\n    }', 'stop');
        await createPipeline(
          resolveOptions({ body: { maxNewTokens: 16, knowledge: false } }),
          {
            env: { repo: { retrievers: [], methods: repo }, model: client },
            hooks: { body: { sketch: 'none', ...(promptLayout ? { promptLayout } : {}) } },
          },
          bodyMode({ parsers }),
        ).complete(emptied(), signal);
        prompts.push(seen.at(-1)?.prompt ?? '');
      }
      const [rambo, block] = prompts as [string, string];
      assert.match(rambo, /^\/\/ Here are some relevant code fragments from other files of the repo:\n/);
      assert.match(rambo, /\/\/ Based on above, complete the method body of the class\n/);
      assert.ok(block.startsWith('/*\n// src/main/java/'), block.slice(0, 120));
      assert.ok(!block.includes('Based on above'), 'no Rambo instruction');
      assert.ok(
        block.includes('*/\n// src/main/java/com/example/shop/payment/Gateways.java\n'),
        "the block closes before the file's path header",
      );
      assert.ok(block.endsWith(emptied().prefix.slice(-40)), 'the code ends at the cursor');
    } finally {
      repo.dispose();
      kb.dispose();
    }
  });
});

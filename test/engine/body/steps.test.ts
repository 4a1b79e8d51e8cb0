// Rambo's steps as functions of their inputs alone (no request context): the signature hits of a
// method in another file, the elements that stand in for a sketch naming nothing of the repository,
// and the steps' answer where the knowledge base is not ready.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, grammarsDir } from '../../helpers/paths';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { jaccardSignatures } from '../../../src/engine/body/rambo';
import { bodyAt, elementsStep, signatureHitsStep, usagesStep } from '../../../src/engine/body/steps';

const never = new AbortController().signal;
const request = {
  lang: 'java' as const,
  filePath: 'src/main/java/com/example/shop/service/OrderService.java',
  prefix: 'class OrderService {\n    public Receipt checkout(Cart cart) {\n',
  suffix: '    }\n}\n',
};
const target = {
  lang: 'java' as const,
  name: 'checkout',
  className: 'OrderService',
  signature: 'public Receipt checkout(Cart cart)',
  signatureRow: 1,
  signatureIndent: 4,
};

void describe("Rambo's steps", () => {
  let parsers: Parsers;
  let kb: KnowledgeBase;
  let repo: RepoMethods;
  before(async () => {
    parsers = await loadParsers(grammarsDir);
    kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'javashop'), parsers });
    await kb.index(undefined, never);
    repo = new RepoMethods(kb);
  });
  after(() => {
    repo.dispose();
    kb.dispose();
  });

  void test("a model sketch that names nothing of the repository takes the signature hits' elements; a given one keeps its own", async () => {
    const at = bodyAt(request, target);
    const hits = await signatureHitsStep({ at, repo, search: jaccardSignatures(), topK: 3, signal: never });
    assert.ok(
      hits.methods.some((m) => m.item.text.includes('Receipt checkout(Cart cart)')),
      hits.methods.map((m) => m.item.id).join(', '),
    );
    const sketch = '        qqzx = vvkw.wwpj();\n';
    const input = { parsers, lang: 'java' as const, repo, sketch, signatureHits: hits.methods, elements: 'sketch' as const };
    const fromModel = elementsStep({ ...input, sketchFromModel: true });
    assert.match(fromModel.from ?? '', /named nothing/);
    assert.ok(fromModel.mapped.length > 0, 'the signature hits name something of the repository');
    const given = elementsStep({ ...input, sketchFromModel: false });
    assert.equal(given.from, undefined);
    assert.deepEqual(given.mapped, []);
    assert.ok(given.unmapped.includes('wwpj'), JSON.stringify(given.unmapped));
  });

  void test('without a knowledge base: no signature hits (the step says why), no elements, no usages', async () => {
    const at = bodyAt(request, target);
    await assert.rejects(signatureHitsStep({ at, repo: undefined, search: jaccardSignatures(), topK: 3, signal: never }), /not ready/);
    const input = { parsers, lang: 'java' as const, repo: undefined, sketch: '', signatureHits: [], elements: 'sketch' as const };
    assert.deepEqual(elementsStep({ ...input, sketchFromModel: true }).mapped, []);
    assert.deepEqual(usagesStep({ at, repo: undefined, identifiers: ['Cart'], sketch: '', signatureHits: [], topK: 3 }), []);
  });
});

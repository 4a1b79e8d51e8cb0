// Essential code elements (the body mode's step c): a broken sketch still yields its types, calls and
// field accesses (tree-sitter recovers), and they map to the knowledge base by name.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fixturesDir, grammarsDir } from '../../helpers/paths';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { RepoMethods } from '../../../src/engine/body/RepoMethods';
import { extractElements, mapElements } from '../../../src/engine/body/sketchElements';

void describe('essential code elements of a sketch', () => {
  let parsers: Parsers;
  before(async () => {
    parsers = await loadParsers(grammarsDir);
  });

  void test('Java: an unterminated, unbalanced sketch still gives types, calls and fields', () => {
    const sketch =
      '        Receipt r = new Receipt(cart.getOwner(), cart.total(), gateway.charge(cart.total(), cart.currency\n        if (r.total > Cart.MAX_ITEMS {\n            receipts.add(r);\n';
    const e = extractElements(parsers, 'java', sketch);
    for (const t of ['Receipt', 'Cart']) assert.ok(e.types.includes(t), `type ${t} in ${JSON.stringify(e.types)}`);
    for (const c of ['getOwner', 'total', 'charge', 'add']) assert.ok(e.calls.includes(c), `call ${c} in ${JSON.stringify(e.calls)}`);
    for (const f of ['currency', 'MAX_ITEMS']) assert.ok(e.fields.includes(f), `field ${f} in ${JSON.stringify(e.fields)}`);
  });

  void test('Python: a sketch with a syntax error still gives calls, attributes and capitalised types', () => {
    const sketch =
      '        gateway = make_gateway(DEFAULT_GATEWAY\n        receipt = Receipt(self.cart, gateway.charge(self.cart.total, self.cart.currency))\n        self.receipts.append(receipt\n';
    const e = extractElements(parsers, 'python', sketch);
    assert.ok(e.types.includes('Receipt'), JSON.stringify(e.types));
    for (const c of ['make_gateway', 'charge', 'append']) assert.ok(e.calls.includes(c), `call ${c} in ${JSON.stringify(e.calls)}`);
    for (const f of ['total', 'currency']) assert.ok(e.fields.includes(f), `field ${f} in ${JSON.stringify(e.fields)}`);
  });

  void test('mapping: exact names first, else the best subword Jaccard; a class brings its members', async () => {
    const kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'javashop'), parsers });
    await kb.index(undefined, new AbortController().signal);
    const repo = new RepoMethods(kb);
    try {
      const { mapped, identifiers, definitions } = mapElements(
        { types: ['Cart', 'PaymentGateways'], calls: ['charge', 'taxRates'], fields: ['nothingLikeIt'] },
        repo,
        'java',
      );
      const byName = new Map(mapped.map((m) => [m.name, m]));
      assert.equal(byName.get('Cart')?.how, 'exact');
      assert.ok((byName.get('Cart')?.members ?? 0) > 5, 'Cart brings its members');
      for (const member of ['total', 'getOwner', 'applyDiscount'])
        assert.ok(identifiers.includes(member), `member ${member} searched for usages`);
      assert.equal(byName.get('PaymentGateways')?.how, 'jaccard');
      assert.equal(byName.get('taxRates')?.matched, 'taxRate');
      assert.equal(byName.get('charge')?.path, 'src/main/java/com/example/shop/payment/PaymentGateway.java');
      assert.equal(byName.has('nothingLikeIt'), false, 'an unlike name stays unmapped');
      assert.ok(
        definitions.some((d) => d.id.endsWith('#class:Cart') && /double total\(\);/.test(d.text)),
        'the class definition lists its members',
      );
    } finally {
      repo.dispose();
      kb.dispose();
    }
  });
});

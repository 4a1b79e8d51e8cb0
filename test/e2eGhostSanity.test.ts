// The e2e stage's sanity check of every ghost text it reads (test/e2e/ghostSanity.mjs):
// the ghost texts the e2e fixture's models showed before the junk filters are refused, sane ones pass.
import test from 'node:test';
import assert from 'node:assert/strict';
import { assertSaneGhostText, ghostTextProblems } from './e2e/ghostSanity.mjs';

void test('the e2e\'s Java body (`this.cart = cart;` fifteen times) and Python suggestion (`lineno="<redacted>"`) are insane', () => {
  const body = `${'this.cart = cart;\n'.repeat(15)}this`;
  const problems = ghostTextProblems(body, { lang: 'java' });
  assert.ok(
    problems.some((p) => /"this\.cart = cart;" 15 times/.test(p)),
    problems.join('; '),
  );
  assert.ok(
    problems.some((p) => /this has no member cart/.test(p)),
    problems.join('; '),
  );
  const py = ghostTextProblems('lineno="<redacted>")', { lang: 'python', typed: '    service = CheckoutService(cart, ' });
  assert.ok(
    py.some((p) => /placeholder <redacted>/.test(p)),
    py.join('; '),
  );
  assert.ok(
    py.some((p) => /CheckoutService takes no parameter lineno/.test(p)),
    py.join('; '),
  );
  assert.deepEqual(ghostTextProblems('x = "< REDACTED >"', { lang: 'python' }), ['the redaction placeholder < REDACTED >']);
  assert.deepEqual(ghostTextProblems('cart.add_items(p)', { lang: 'python' }), ['`cart.add_items`: cart has no member add_items']);
  assert.throws(() => assertSaneGhostText(body, { lang: 'java' }), /insane ghost text/);
});

void test('sane ghost texts pass: members the receivers have, parameters the constructor takes, closing braces, Python attribute assignments', () => {
  const body =
    'String id = gateway.charge(cart.total(), cart.getCurrency());\n        Receipt r = new Receipt(cart.getOwner(), cart.total(), id);\n        receipts.add(r);\n        return r;\n    }\n  }\n}';
  assert.deepEqual(ghostTextProblems(body, { lang: 'java' }), []);
  assert.deepEqual(ghostTextProblems('gateway=gateway)', { lang: 'python', typed: '    service = CheckoutService(cart, ' }), []);
  assert.deepEqual(
    ghostTextProblems('gateway)\n    receipt = service.checkout()', { lang: 'python', typed: '    service = CheckoutService(cart, ' }),
    [],
  );
  assert.deepEqual(ghostTextProblems('cart.note = "gift"', { lang: 'python' }), [], 'Python gives an object an attribute by assigning it');
  assert.deepEqual(ghostTextProblems('x += 1\nx += 1', { lang: 'python' }), [], 'twice is not a loop');
  assertSaneGhostText('print(u.format_price(receipt.total, cart.currency))', { lang: 'python' });
});

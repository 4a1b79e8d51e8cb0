// Receiver typing at a dereference on the fixture repositories: every receiver form, an
// inherited member, and receivers the repository cannot prove (left unconstrained).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findDereference, ReceiverTyper, type ReceiverMembers } from '../../../src/engine/check/receiverMembers';
import { fixturesDir } from '../../helpers/paths';
import { fixtureKb, JAVA_ROOT, parsers } from '../retrieve/retrieveFixtures';

/** The fixture file's first `line` lines (1-based, inclusive) followed by `tail`. */
function prefixOf(fixture: string, path: string, line: number, tail: string): string {
  const lines = readFileSync(join(fixturesDir, fixture, path), 'utf8')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  return `${lines.slice(0, line).join('\n')}\n${tail}`;
}

async function membersAt(fixture: 'pyshop' | 'javashop', path: string, line: number, tail: string): Promise<ReceiverMembers | undefined> {
  const typer = new ReceiverTyper(await fixtureKb(fixture), await parsers());
  try {
    return typer.membersAt(
      { path, lang: path.endsWith('.java') ? 'java' : 'python', prefix: prefixOf(fixture, path, line, tail) },
      new AbortController().signal,
    );
  } finally {
    typer.dispose();
  }
}

function assertHas(m: ReceiverMembers | undefined, has: string[], lacks: string[] = []): void {
  assert.ok(m, 'expected a resolved receiver');
  for (const n of has) assert.ok(m.names.has(n), `${n} missing from ${[...m.names].join(', ')} (${m.entities.join('; ')})`);
  for (const n of lacks) assert.ok(!m.names.has(n), `${n} should not be a member (${m.entities.join('; ')})`);
}

void test('findDereference reads the receiver and the typed part, and refuses strings, numbers, comments and expressions', () => {
  assert.deepEqual(findDereference('x = self.cart.ad', 'python'), { receiver: 'self.cart', partial: 'ad' });
  assert.deepEqual(findDereference('y = make_gateway("a", f(b)).', 'python'), { receiver: 'make_gateway("a", f(b))', partial: '' });
  assert.deepEqual(findDereference('  return super().', 'python'), { receiver: 'super()', partial: '' });
  assert.equal(findDereference('x = "a.', 'python'), undefined);
  assert.equal(findDereference('x = 1.', 'python'), undefined);
  assert.equal(findDereference('# see cart.', 'python'), undefined);
  assert.equal(findDereference('x = (a + b).', 'python'), undefined);
  assert.equal(findDereference('x = a[0].', 'python'), undefined);
  assert.equal(findDereference('x = cart', 'python'), undefined);
});

const MAIN = 'app/main.py';
const CHECKOUT = 'pyshop/services/checkout.py';

void test('Python: a local with an inferred type (constructor call) gets the class members, not invented ones', async () => {
  assertHas(
    await membersAt('pyshop', MAIN, 9, '    cart = Cart(owner)\n    cart.ad'),
    ['add', 'apply_discount', 'total', 'owner', 'lines', 'Line', 'empty', 'max_items'],
    ['add_items', 'charge'],
  );
});

void test('Python: a parameter with a declared type, and self with its fields', async () => {
  assertHas(await membersAt('pyshop', CHECKOUT, 11, '        x = cart.'), ['add', 'currency', 'total']);
  assertHas(await membersAt('pyshop', CHECKOUT, 30, '        self.'), ['cart', 'gateway', 'receipts', 'checkout'], ['reciepts']);
});

void test('Python: an imported module and a module alias give its top-level names', async () => {
  assertHas(await membersAt('pyshop', MAIN, 6, 'x = config.'), ['DEFAULT_CURRENCY', 'DEFAULT_GATEWAY', 'tax_rate']);
  assertHas(await membersAt('pyshop', MAIN, 6, 'x = u.'), ['format_price', 'slugify']);
});

void test('Python: a class name (static members), and a call whose return type is a repository class', async () => {
  assertHas(await membersAt('pyshop', MAIN, 6, 'x = Cart.'), ['empty', 'for_guest', 'Line', 'max_items', '__name__']);
  assertHas(await membersAt('pyshop', MAIN, 6, 'x = make_gateway("stripe").'), ['charge', 'api_key', 'charges', 'name'], ['add']);
});

void test('Python: an inherited member through an instance of a subclass, and super()', async () => {
  assertHas(await membersAt('pyshop', 'pyshop/payments.py', 33, '        x = StripeGateway().'), ['charge', 'api_key', 'charges']);
  assertHas(await membersAt('pyshop', 'pyshop/payments.py', 29, '        super().'), ['charge', '__init__', 'api_key']);
});

void test('Python: self in a class with no base and no __init__ (a mixin; a dataclass) is not proven: its users set its attributes', async () => {
  assert.equal(await membersAt('pyshop', 'pyshop/models.py', 21, '        return self.'), undefined);
  assertHas(await membersAt('pyshop', 'pyshop/models.py', 21, '        p = Product("a", "b", 1.0)\n        p.'), ['sku', 'label', 'slug']);
});

void test('Python: third-party, standard-library, untyped and container receivers stay unconstrained', async () => {
  assert.equal(await membersAt('pyshop', 'pyshop/payments.py', 3, 'x = uuid.'), undefined);
  assert.equal(await membersAt('pyshop', MAIN, 6, 'def f(thing):\n    thing.'), undefined);
  assert.equal(await membersAt('pyshop', MAIN, 6, 'items = {}\nitems.'), undefined);
  assert.equal(await membersAt('pyshop', MAIN, 6, 'def f(carts: list[Cart]):\n    carts.'), undefined);
  assert.equal(await membersAt('pyshop', MAIN, 6, 'name = "a"\nname.'), undefined);
});

const APP = `${JAVA_ROOT}/App.java`;
const SERVICE = `${JAVA_ROOT}/service/CheckoutService.java`;

void test('Java: a local with a declared type, a field, and this', async () => {
  assertHas(
    await membersAt('javashop', APP, 14, '        Cart c = new Cart("a");\n        c.'),
    ['add', 'total', 'getOwner', 'getLines', 'toString'],
    ['getItems'],
  );
  assertHas(await membersAt('javashop', SERVICE, 30, '        gateway.'), ['charge', 'name', 'supports', 'TIMEOUT_SECONDS']);
  assertHas(await membersAt('javashop', SERVICE, 30, '        this.'), ['gateway', 'receipts', 'checkout', 'getReceipts']);
});

void test('Java: a class name (static members), a call returning a repository type, and an inherited default method', async () => {
  assertHas(await membersAt('javashop', APP, 14, '        String s = Prices.'), ['format', 'roundCents', 'SCALE', 'class']);
  assertHas(await membersAt('javashop', APP, 14, '        Gateways.create("stripe").'), ['charge', 'name', 'supports']);
  assertHas(await membersAt('javashop', APP, 14, '        Cart c = new Cart("a");\n        c.getCurrency().'), ['name', 'ordinal']);
});

void test('Java: after a type name only static members, nested types and the class literal; this and super only after a class around the cursor', async () => {
  assertHas(
    await membersAt('javashop', APP, 14, '        int n = Prices.'),
    ['format', 'roundCents', 'SCALE', 'größterRabatt', 'class'],
    ['this', 'super', 'getClass', 'toString', 'hashCode'],
  );
  assertHas(
    await membersAt('javashop', APP, 14, '        Object c = Currency.'),
    ['EUR', 'USD', 'GBP', 'values', 'valueOf', 'class'],
    ['symbol', 'taxRate', 'name', 'ordinal', 'this'],
  );
  assertHas(
    await membersAt('javashop', APP, 14, '        int t = PaymentGateway.'),
    ['TIMEOUT_SECONDS', 'class'],
    ['charge', 'name', 'supports', 'this'],
  );
  assertHas(
    await membersAt('javashop', APP, 14, '        Object l = Cart.'),
    ['MAX_ITEMS', 'Line', 'class'],
    ['add', 'total', 'owner', 'this'],
  );
  // Inside CheckoutService, `CheckoutService.this` is Java's qualified this.
  assertHas(
    await membersAt('javashop', SERVICE, 30, '        Object me = CheckoutService.'),
    ['this', 'super', 'class'],
    ['checkout', 'gateway'],
  );
});

void test('Java: standard-library, generic and array receivers stay unconstrained', async () => {
  assert.equal(await membersAt('javashop', APP, 14, '        String s = "a";\n        s.'), undefined);
  assert.equal(await membersAt('javashop', SERVICE, 30, '        receipts.'), undefined);
  assert.equal(await membersAt('javashop', APP, 14, '        Cart[] carts = new Cart[2];\n        carts.'), undefined);
  assert.equal(await membersAt('javashop', APP, 14, '        args.'), undefined);
});

void test("Java: a parameter of a method in an enum constant's own body (a state machine) is typed like any other", async () => {
  const typer = new ReceiverTyper(await fixtureKb('javashop'), await parsers());
  try {
    const prefix = [
      'package com.example.shop.model;',
      '',
      'enum State {',
      '    Open {',
      '        State next(Cart cart, int n) {',
      '            if (n > 0) {',
      '                return Closed;',
      '            }',
      '            cart.',
    ].join('\n');
    assertHas(
      typer.membersAt({ path: 'src/main/java/com/example/shop/model/State.java', lang: 'java', prefix }, new AbortController().signal),
      ['add', 'total', 'getOwner'],
    );
  } finally {
    typer.dispose();
  }
});

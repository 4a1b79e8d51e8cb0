// Checked decoding at calls: the call the text is inside, the callable's parameters from its
// signature, the names in scope that fit each argument (fixture repositories), and the per-step
// guide on a hand-made vocabulary (the preferred name is written; no argument past the last).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  argumentState,
  bareTypeName,
  CallArgumentGuide,
  findOpenCall,
  parseParameters,
  type CallSignature,
} from '../../../src/engine/check/callArguments';
import { ReceiverTyper } from '../../../src/engine/check/receiverMembers';
import { fixturesDir } from '../../helpers/paths';
import { fixtureKb, parsers } from '../retrieve/retrieveFixtures';

function prefixOf(fixture: string, path: string, line: number, tail: string): string {
  const lines = readFileSync(join(fixturesDir, fixture, path), 'utf8')
    .replace(/\r\n?/g, '\n')
    .split('\n');
  return `${lines.slice(0, line).join('\n')}\n${tail}`;
}

async function callAt(fixture: 'pyshop' | 'javashop', path: string, line: number, tail: string): Promise<CallSignature | undefined> {
  const typer = new ReceiverTyper(await fixtureKb(fixture), await parsers());
  try {
    return typer.callAt(
      { path, lang: path.endsWith('.java') ? 'java' : 'python', prefix: prefixOf(fixture, path, line, tail) },
      new AbortController().signal,
    );
  } finally {
    typer.dispose();
  }
}

void test('findOpenCall: the innermost open call, its argument index; not definitions, strings or closed calls', () => {
  assert.deepEqual(findOpenCall('x = CheckoutService(cart, ', 'python'), {
    callee: 'CheckoutService',
    argsStart: 20,
    argIndex: 1,
    current: ' ',
  });
  assert.equal(findOpenCall('x = f(g(1), self.a.b(', 'python')?.callee, 'self.a.b');
  assert.equal(findOpenCall('x = make(a, "x(", ', 'python')?.argIndex, 2);
  assert.equal(findOpenCall('def f(a, ', 'python'), undefined);
  assert.equal(findOpenCall('x = f(a)', 'python'), undefined);
  assert.equal(findOpenCall('x = [f(a), ', 'python'), undefined);
  assert.equal(findOpenCall('s = "f(', 'python'), undefined);
  assert.equal(findOpenCall('    public Receipt checkout(', 'java'), undefined);
  assert.equal(findOpenCall('    Service s = new Service(', 'java')?.callee, 'Service');
  assert.equal(findOpenCall('    if (', 'java'), undefined);
  assert.deepEqual(argumentState('a, (b, c), d)'), { argIndex: 2, current: ' d', closed: true, inString: false });
});

void test('parseParameters: Python self, annotations, defaults, *args; Java types, annotations, varargs', () => {
  assert.deepEqual(parseParameters('def __init__(self, cart: Cart, gateway: PaymentGateway | None = None):', 'python', true), {
    params: [
      { name: 'cart', type: 'Cart' },
      { name: 'gateway', type: 'PaymentGateway | None', optional: true },
    ],
    variadic: false,
  });
  assert.deepEqual(parseParameters('def f(a, *args, b=1, **kw):', 'python', false), {
    params: [{ name: 'a' }, { name: 'b', optional: true }],
    variadic: true,
  });
  assert.deepEqual(
    parseParameters('public CheckoutService(@NonNull final PaymentGateway gateway, Map<String, Integer> m)', 'java', false),
    {
      params: [
        { name: 'gateway', type: 'PaymentGateway' },
        { name: 'm', type: 'Map<String, Integer>' },
      ],
      variadic: false,
    },
  );
  assert.deepEqual(parseParameters('void log(String tag, String... parts)', 'java', false), {
    params: [
      { name: 'tag', type: 'String' },
      { name: 'parts', type: 'String', optional: true },
    ],
    variadic: true,
  });
  assert.deepEqual(
    parseParameters('def g(a, b, *, key):', 'python', false)?.params.map((p) => p.optional === true),
    [false, false, true],
    'keyword-only',
  );
  assert.equal(bareTypeName('Optional[Cart]'), 'Cart');
  assert.equal(bareTypeName('PaymentGateway | None'), 'PaymentGateway');
  assert.equal(bareTypeName('list[Cart]'), undefined);
});

void test('Python fixture: CheckoutService( takes cart and gateway, both bound right above', async () => {
  const sig = await callAt('pyshop', 'app/main.py', 17, '    cart = build_demo_cart("ann")\n    service = CheckoutService(');
  assert.ok(sig, 'resolved');
  assert.deepEqual(
    sig.overloads[0]!.map((p) => p.name),
    ['cart', 'gateway'],
  );
  assert.equal(sig.maxArgs, 2);
  assert.equal(sig.minArgs, 1, 'gateway has a default');
  assert.equal(sig.variadic, false);
  assert.deepEqual(sig.preferred, ['cart', 'gateway']);
});

void test('Python fixture: a parameter matched by type when no name matches; third-party callees stay unguided', async () => {
  const sig = await callAt(
    'pyshop',
    'app/main.py',
    16,
    '    gw = make_gateway(config.DEFAULT_GATEWAY, api_key="demo")\n    basket = build_demo_cart("ann")\n    service = CheckoutService(',
  );
  assert.ok(sig);
  assert.deepEqual(
    sig.preferred,
    ['basket', 'gw'],
    "basket is a Cart (build_demo_cart -> Cart), gw a PaymentGateway (make_gateway's return)",
  );
  assert.equal(await callAt('pyshop', 'app/main.py', 17, '    print('), undefined);
  assert.equal(await callAt('pyshop', 'app/main.py', 17, '    json.dumps('), undefined);
});

void test('Java fixture: new CheckoutService( has one constructor taking the gateway in scope', async () => {
  const path = 'src/main/java/com/example/shop/App.java';
  const sig = await callAt('javashop', path, 18, '        CheckoutService service = new CheckoutService(');
  assert.ok(sig, 'resolved');
  assert.equal(sig.maxArgs, 1);
  assert.deepEqual(sig.preferred, ['gateway']);
});

// A hand-made vocabulary: the guide's decisions are visible as the allowed ids.
const VOCAB = [
  'c',
  'cart',
  'ca',
  'rt',
  ',',
  ' ',
  ' gate',
  'way',
  ')',
  '),',
  'c_dict',
  ' c_dict',
  'x',
  ', ',
  ' gateway',
  'cart,',
  'gateway)',
  '.add',
  '=',
];

function allowedAfter(guide: CallArgumentGuide, generated: string): string[] {
  const logits = new Float32Array(VOCAB.length);
  guide.apply(VOCAB, generated, logits);
  return VOCAB.filter((_, i) => logits[i] !== -Infinity);
}

const SIG: CallSignature = {
  callee: 'CheckoutService',
  entities: ['class x'],
  overloads: [[{ name: 'cart' }, { name: 'gateway' }]],
  variadic: false,
  maxArgs: 2,
  preferred: ['cart', 'gateway'],
};

void test('the guide writes the preferred names and no third argument', () => {
  const prefix = 'service = CheckoutService(';
  const guide = new CallArgumentGuide(prefix, 'python', () => undefined, SIG);
  assert.deepEqual(allowedAfter(guide, ''), ['c', 'cart', 'ca', 'cart,']);
  assert.deepEqual(allowedAfter(guide, 'ca'), ['rt']);
  assert.deepEqual(allowedAfter(guide, 'cart,'), [' ', ' gate', ' gateway', 'gateway)']);
  assert.deepEqual(allowedAfter(guide, 'cart, gate'), ['way']);
  // The name is written: the argument ends there (no identifier character, no `.add` making it
  // another value; Python's keyword `=` stays open).
  assert.deepEqual(allowedAfter(guide, 'cart'), [',', ' ', ' gate', ')', '),', ' c_dict', ', ', ' gateway', '=']);
  // On the last argument, no token may add a top-level comma either (`),` closes the call first).
  assert.deepEqual(allowedAfter(guide, 'cart, gateway'), [' ', ' gate', ')', '),', ' c_dict', ' gateway', '=']);
  const java = new CallArgumentGuide('service = new CheckoutService(', 'java', () => undefined, SIG);
  assert.deepEqual(allowedAfter(java, 'cart'), [',', ' ', ' gate', ')', '),', ' c_dict', ', ', ' gateway']);
  // After the call closes the guide lets go.
  assert.deepEqual(allowedAfter(guide, 'cart, gateway)'), VOCAB);
  assert.equal(guide.events.length, 1);
  assert.ok(guide.events[0]!.steps >= 4);
});

void test('the call does not close before the arguments every overload needs', () => {
  // Both parameters required: after `cart` no token closes the call; with a default on `gateway`, `)` may follow `cart`.
  const needsTwo = new CallArgumentGuide('s = CheckoutService(', 'python', () => undefined, {
    ...SIG,
    preferred: [undefined, undefined],
    minArgs: 2,
  });
  assert.deepEqual(
    allowedAfter(needsTwo, 'cart'),
    VOCAB.filter((t) => !t.includes(')')),
  );
  assert.ok(allowedAfter(needsTwo, 'cart, gateway').includes(')'), 'closing allowed once both are written');
  const needsOne = new CallArgumentGuide('s = CheckoutService(', 'python', () => undefined, {
    ...SIG,
    preferred: [undefined, undefined],
    minArgs: 1,
  });
  assert.deepEqual(allowedAfter(needsOne, 'cart'), VOCAB);
  assert.deepEqual(
    allowedAfter(needsOne, ''),
    VOCAB.filter((t) => t !== ')' && t !== '),'),
    'no empty call',
  );
});

void test('no preference: only the argument count is enforced; a call the model opens is resolved', () => {
  const resolved: string[] = [];
  const sig: CallSignature = { ...SIG, callee: 'f', overloads: [[{ name: 'a' }]], maxArgs: 1, preferred: [undefined] };
  const guide = new CallArgumentGuide('y = ', 'python', (text) => {
    resolved.push(text);
    return sig;
  });
  assert.deepEqual(allowedAfter(guide, 'f'), VOCAB, 'outside a call: untouched');
  assert.deepEqual(
    allowedAfter(guide, 'f('),
    VOCAB.filter((t) => !t.includes(',') || t.startsWith(')')),
  );
  assert.deepEqual(resolved, ['y = f(']);
  assert.equal(guide.events[0]!.at, 'generated');
});

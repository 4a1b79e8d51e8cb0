// Knowledge-base extraction (CodeRAG section 2.1) over the fixture repositories, compared exactly
// with the hand-written expectations beside them, plus stubs, signatures, docstrings and imports.
import test, { before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { loadParsers, langOfPath, type Parsers } from '../../../src/engine/kb/parsers';
import { extractFile } from '../../../src/engine/kb/extract';
import type { FileExtraction, KbItem, Lang } from '../../../src/engine/kb/types';

const repoRoot = path.resolve(__dirname, '../../..');
const fixtures = path.join(repoRoot, 'test', 'fixtures');

interface ExpectedFile {
  hasSyntaxErrors: boolean;
  items: { id: string; kind: string; name: string; qualifiedName: string; path: string; startLine: number; endLine: number }[];
  classes: { name: string; qualifiedName: string; kind: string; startLine: number; endLine: number }[];
}
interface Expected {
  lang: Lang;
  files: Record<string, ExpectedFile>;
}

// Files of the fixtures that the workspace scan must skip (so they have no expectations).
const skippedByScan: Record<string, (rel: string) => boolean> = {
  pyshop: (rel) => rel.startsWith('build/') || rel === 'pyshop/legacy_latin1.py',
  javashop: (rel) => rel.startsWith('target/'),
};

let parsers: Parsers;
before(async () => {
  parsers = await loadParsers(path.join(repoRoot, 'grammars'));
});

function extractFixture(repo: string, rel: string): FileExtraction {
  const lang = langOfPath(rel);
  assert.ok(lang, rel);
  return extractFile(parsers, lang, rel, readFileSync(path.join(fixtures, repo, rel), 'utf8'));
}

function sourceFiles(repo: string): string[] {
  const root = path.join(fixtures, repo);
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (langOfPath(name)) out.push(path.relative(root, p).split(path.sep).join('/'));
    }
  };
  walk(root);
  return out.filter((rel) => !skippedByScan[repo]?.(rel)).sort();
}

function loadExpected(repo: string): Expected {
  return JSON.parse(readFileSync(path.join(fixtures, `${repo}.expected.json`), 'utf8')) as Expected;
}

function item(x: FileExtraction, id: string): KbItem {
  const found = x.items.find((i) => i.id === id);
  assert.ok(found, `no item ${id}; have ${x.items.map((i) => i.id).join(', ')}`);
  return found;
}

for (const repo of ['pyshop', 'javashop']) {
  void test(`${repo}: every source file is extracted exactly as ${repo}.expected.json says`, () => {
    const expected = loadExpected(repo);
    assert.deepEqual(sourceFiles(repo), Object.keys(expected.files).sort(), 'fixture files and expectations must match one to one');
    for (const [rel, exp] of Object.entries(expected.files)) {
      const x = extractFixture(repo, rel);
      assert.equal(x.path, rel);
      assert.equal(x.lang, expected.lang);
      assert.equal(x.hasSyntaxErrors, exp.hasSyntaxErrors, `${rel} hasSyntaxErrors`);
      const items = x.items.map((i) => ({
        id: i.id,
        kind: i.kind,
        name: i.name,
        qualifiedName: i.qualifiedName,
        path: i.path,
        startLine: i.range.startLine,
        endLine: i.range.endLine,
      }));
      assert.deepEqual(items, exp.items, `${rel} items`);
      const classes = x.classes.map((c) => ({
        name: c.name,
        qualifiedName: c.qualifiedName,
        kind: c.kind,
        startLine: c.range.startLine,
        endLine: c.range.endLine,
      }));
      assert.deepEqual(classes, exp.classes, `${rel} classes`);
      for (const i of x.items) {
        assert.equal(i.lang, expected.lang);
        assert.equal(
          i.className,
          i.kind === 'function' || i.kind === 'globalVariable' ? undefined : i.qualifiedName.slice(0, i.qualifiedName.lastIndexOf('.')),
          i.id,
        );
      }
    }
  });

  void test(`${repo}: ids are unique and stable across runs`, () => {
    const ids: string[] = [];
    for (const rel of sourceFiles(repo)) {
      const a = extractFixture(repo, rel);
      const b = extractFixture(repo, rel);
      assert.deepEqual(a, b, `${rel} extracted twice differs`);
      ids.push(...a.items.map((i) => i.id));
    }
    assert.equal(new Set(ids).size, ids.length);
  });

  void test(`${repo}: every stub is self-contained (path comment, class headers, parses on its own)`, () => {
    const lang: Lang = repo === 'pyshop' ? 'python' : 'java';
    const comment = lang === 'python' ? '#' : '//';
    for (const rel of sourceFiles(repo)) {
      const x = extractFixture(repo, rel);
      for (const i of x.items) {
        const lines = i.text.split('\n');
        assert.equal(lines[0], `${comment} ${rel}`, i.id);
        assert.ok(!i.text.includes('\r'), i.id);
        // Each enclosing class appears as a header line, outermost first.
        let at = 1;
        const parts = i.className ? i.className.split('.') : [];
        for (let depth = 1; depth <= parts.length; depth++) {
          const cls = x.classes.find((c) => c.qualifiedName === parts.slice(0, depth).join('.'));
          assert.ok(cls, `${i.id}: class ${parts.slice(0, depth).join('.')}`);
          const idx = lines.findIndex((l, n) => n >= at && l.trim().startsWith(cls.header.split('\n')[0] ?? '\0'));
          assert.ok(idx >= at, `${i.id}: header of ${cls.qualifiedName} missing in\n${i.text}`);
          at = idx + 1;
        }
        if (!x.hasSyntaxErrors) {
          const tree = parsers.parser(lang).parse(i.text);
          assert.ok(tree, i.id);
          try {
            assert.equal(tree.rootNode.hasError, false, `stub of ${i.id} does not parse:\n${i.text}`);
          } finally {
            tree.delete();
          }
        }
      }
    }
  });
}

void test('python stubs: method, self.x, class variable, decorated class, global', () => {
  const models = extractFixture('pyshop', 'pyshop/models.py');
  assert.equal(
    item(models, 'pyshop/models.py#classVariable:Cart.Line.product').text,
    [
      '# pyshop/models.py',
      'class Cart:',
      '    class Line:',
      '        def __init__(self, product: Product, quantity: int = 1):',
      '            self.product = product',
    ].join('\n'),
  );
  assert.equal(
    item(models, 'pyshop/models.py#classVariable:Product.tags').text,
    ['# pyshop/models.py', '@dataclass', 'class Product:', '    tags: List[str] = field(default_factory=list)'].join('\n'),
  );
  assert.equal(
    item(models, 'pyshop/models.py#classFunction:Cart.total').text,
    [
      '# pyshop/models.py',
      'class Cart:',
      '    @property',
      '    def total(self) -> float:',
      '        gross = sum(line.subtotal() for line in self.lines)',
      '        return gross * (1 - self._discount) * (1 + config.tax_rate(self.currency))',
    ].join('\n'),
  );
  // `cls.x = ...` in a classmethod is a class variable; a staticmethod has no receiver.
  const guest = item(models, 'pyshop/models.py#classVariable:Cart.guest_carts');
  assert.match(guest.text, /def for_guest\(cls\) -> "Cart":\n {8}cls\.guest_carts = /);
  const config = extractFixture('pyshop', 'pyshop/config.py');
  assert.equal(item(config, 'pyshop/config.py#globalVariable:LOG_LEVEL').text, '# pyshop/config.py\nLOG_LEVEL = "DEBUG"');
  assert.equal(item(config, 'pyshop/config.py#globalVariable:PORT').signature, 'HOST, PORT = "localhost", 8080');
});

void test('python signatures and docstrings', () => {
  const util = extractFixture('pyshop', 'pyshop/util.py');
  const retry = item(util, 'pyshop/util.py#function:retry');
  assert.equal(retry.signature, 'def retry(times=3,\n          exceptions=(IOError,)):');
  assert.equal(retry.docstring, 'Retry the decorated function on the given exceptions.');
  const price = item(util, 'pyshop/util.py#function:format_price');
  assert.equal(price.signature, 'def format_price(amount: float, currency: str = "EUR") -> str:');
  assert.equal(price.docstring, "Format an amount with two decimals and the currency code.\n\n>>> format_price(3.5)\n'3.50 EUR'");
  assert.ok(price.text.startsWith('# pyshop/util.py\n@logged\ndef format_price('), 'decorators belong to the definition text');
  assert.equal(price.range.startLine, 19, 'a decorated definition starts at its first decorator');
  assert.equal(item(util, 'pyshop/util.py#function:slugify').docstring, '');
  const config = extractFixture('pyshop', 'pyshop/config.py');
  assert.equal(item(config, 'pyshop/config.py#globalVariable:TAX_RATES').docstring, 'VAT or sales tax per currency.');
  assert.equal(item(config, 'pyshop/config.py#globalVariable:MAX_ITEMS').signature, 'MAX_ITEMS: int');
  const models = extractFixture('pyshop', 'pyshop/models.py');
  const cart = models.classes.find((c) => c.qualifiedName === 'Cart');
  assert.equal(cart?.docstring, 'A shopping cart owned by one customer.');
  const product = models.classes.find((c) => c.qualifiedName === 'Product');
  assert.equal(product?.header, 'class Product:');
  const payments = extractFixture('pyshop', 'pyshop/payments.py');
  assert.deepEqual(payments.classes.find((c) => c.name === 'PaymentGateway')?.bases, ['abc.ABC']);
  assert.equal(
    item(payments, 'pyshop/payments.py#classFunction:PaymentGateway.charge').docstring,
    'Charge `amount` and return a transaction id.',
  );
});

void test('python imports', () => {
  const checkout = extractFixture('pyshop', 'pyshop/services/checkout.py');
  assert.deepEqual(checkout.imports, [
    { module: '__future__', name: 'annotations', alias: 'annotations', line: 1 },
    { module: 'pyshop.util', alias: 'u', line: 3 },
    { module: '..models', name: 'Cart', alias: 'Cart', line: 4 },
    { module: '..payments', name: 'PaymentGateway', alias: 'PaymentGateway', line: 5 },
    { module: '..payments', name: 'make_gateway', alias: 'make_gateway', line: 5 },
    { module: '..config', wildcard: true, line: 6 },
  ]);
  const models = extractFixture('pyshop', 'pyshop/models.py');
  assert.deepEqual(
    models.imports.find((i) => i.line === 4),
    { module: '.', name: 'config', alias: 'config', line: 4 },
  );
  const config = extractFixture('pyshop', 'pyshop/config.py');
  assert.deepEqual(config.imports, [
    { module: 'os', alias: 'os', line: 1 },
    { module: 'typing', name: 'Dict', alias: 'Dict', line: 2 },
    { module: 'tomllib', alias: 'tomllib', line: 16 },
  ]);
  const x = extractFile(parsers, 'python', 'm.py', 'import a.b.c\nimport a.b as ab, d\nfrom x import (y as z,\n  w)\n');
  assert.deepEqual(x.imports, [
    { module: 'a.b.c', alias: 'a', line: 0 },
    { module: 'a.b', alias: 'ab', line: 1 },
    { module: 'd', alias: 'd', line: 1 },
    { module: 'x', name: 'y', alias: 'z', line: 2 },
    { module: 'x', name: 'w', alias: 'w', line: 2 },
  ]);
});

void test('python syntax error: hasSyntaxErrors and the valid definitions around it', () => {
  const x = extractFixture('pyshop', 'pyshop/broken.py');
  assert.equal(x.hasSyntaxErrors, true);
  const ids = x.items.map((i) => i.id);
  for (const id of ['#globalVariable:STATUS', '#function:working_before', '#classFunction:AfterBreak.method', '#function:working_after']) {
    assert.ok(ids.includes(`pyshop/broken.py${id}`), id);
  }
  assert.ok(!ids.some((id) => id.includes('broken_function')));
  assert.equal(item(x, 'pyshop/broken.py#function:working_after').text, '# pyshop/broken.py\ndef working_after(y):\n    return y * 2');
});

void test('non-ASCII identifiers', () => {
  const x = extractFixture('pyshop', 'pyshop/i18n.py');
  const g = item(x, 'pyshop/i18n.py#classVariable:Währung.größe');
  assert.equal(g.name, 'größe');
  assert.equal(g.className, 'Währung');
  assert.equal(g.text, '# pyshop/i18n.py\nclass Währung:\n    def __init__(self, code: str):\n        self.größe = len(code)');
  const f = item(x, 'pyshop/i18n.py#function:übersetze');
  assert.equal(f.signature, 'def übersetze(text: str, sprache: str = "de") -> str:');
  assert.equal(f.docstring, 'Übersetzt einen Gruß.');
  assert.equal(item(x, 'pyshop/i18n.py#globalVariable:GRÜSSE').signature, 'GRÜSSE = {"de": "Hallo", "fr": "Bonjour", "ja": "こんにちは"}');
  const j = extractFixture('javashop', 'src/main/java/com/example/shop/util/Prices.java');
  assert.equal(
    item(j, 'src/main/java/com/example/shop/util/Prices.java#classVariable:Prices.größterRabatt').signature,
    'static double größterRabatt = 0.5',
  );
  // Astral-plane characters shift UTF-16 indices; slices must still line up.
  const astral = extractFile(parsers, 'python', 'a.py', 's = "𝒳𝒴"\nclass 𝔄:\n    ü = "😀"\n    def 𝔣(self): return "😀"\n');
  assert.deepEqual(
    astral.items.map((i) => [i.qualifiedName, i.signature]),
    [
      ['s', 's = "𝒳𝒴"'],
      ['𝔄.ü', 'ü = "😀"'],
      ['𝔄.𝔣', 'def 𝔣(self):'],
    ],
  );
});

void test('empty and comment-only files', () => {
  for (const lang of ['python', 'java'] as const) {
    for (const src of ['', '\n\n', lang === 'python' ? '# only a comment\n' : '// only a comment\n']) {
      const x = extractFile(parsers, lang, `e.${lang === 'python' ? 'py' : 'java'}`, src);
      assert.deepEqual([x.items, x.classes, x.imports, x.hasSyntaxErrors], [[], [], [], false]);
    }
  }
  const empty = extractFixture('pyshop', 'pyshop/data/__init__.py');
  assert.equal(empty.items.length, 0);
});

void test('java: overloads get @n ids, constructors are named as the class', () => {
  const rel = 'src/main/java/com/example/shop/model/Cart.java';
  const x = extractFixture('javashop', rel);
  const adds = x.items.filter((i) => i.qualifiedName === 'Cart.add');
  assert.deepEqual(
    adds.map((i) => i.id),
    [`${rel}#classFunction:Cart.add`, `${rel}#classFunction:Cart.add@2`],
  );
  assert.deepEqual(
    adds.map((i) => i.signature),
    ['public Line add(Product product)', 'public Line add(Product product, int quantity)'],
  );
  assert.equal(adds[1]?.docstring, 'Adds {@code quantity} of {@code product}; returns the new line.');
  const ctors = x.items.filter((i) => i.name === 'Cart' && i.kind === 'classFunction');
  assert.deepEqual(
    ctors.map((i) => i.id),
    [`${rel}#classFunction:Cart.Cart`, `${rel}#classFunction:Cart.Cart@2`],
  );
  assert.equal(x.packageName, 'com.example.shop.model');
});

void test('java: signatures, Javadoc, stubs', () => {
  const base = 'src/main/java/com/example/shop/';
  const stripe = extractFixture('javashop', `${base}payment/StripeGateway.java`);
  const charge = item(stripe, `${base}payment/StripeGateway.java#classFunction:StripeGateway.charge`);
  assert.equal(charge.signature, 'public String charge(double amount, Currency currency) throws PaymentException');
  assert.ok(
    charge.text.startsWith(
      `// ${base}payment/StripeGateway.java\npublic class StripeGateway implements PaymentGateway {\n    @Override\n    public String charge(`,
    ),
  );
  assert.ok(charge.text.endsWith('        return id;\n    }\n}'));
  const gw = extractFixture('javashop', `${base}payment/PaymentGateway.java`);
  const abstractCharge = item(gw, `${base}payment/PaymentGateway.java#classFunction:PaymentGateway.charge`);
  assert.equal(abstractCharge.signature, 'String charge(double amount, Currency currency) throws PaymentException');
  assert.equal(
    abstractCharge.docstring,
    'Charges {@code amount} and returns a transaction id.\n\n@throws PaymentException when the provider declines',
  );
  assert.deepEqual(
    gw.classes.map((c) => [c.qualifiedName, c.kind, c.header, c.bases]),
    [
      ['PaymentGateway', 'interface', 'public interface PaymentGateway', []],
      ['PaymentGateway.PaymentException', 'class', 'class PaymentException extends Exception', ['Exception']],
    ],
  );
  assert.equal(gw.classes[0]?.docstring, 'Charges money; implementations talk to one provider.');
  const product = extractFixture('javashop', `${base}model/Product.java`);
  const nameField = item(product, `${base}model/Product.java#classVariable:Product.category`);
  assert.equal(nameField.signature, 'private String category');
  assert.equal(nameField.text, `// ${base}model/Product.java\npublic class Product {\n    private String name, category;\n}`);
  const builderName = item(product, `${base}model/Product.java#classVariable:Product.Builder.name`);
  assert.equal(
    builderName.text,
    `// ${base}model/Product.java\npublic class Product {\n    public static class Builder {\n        private String name = "";\n    }\n}`,
  );
  assert.equal(
    item(product, `${base}model/Product.java#classVariable:Product.DEFAULT_CATEGORY`).docstring,
    'Default tax category for new products.',
  );
  const equals = item(product, `${base}model/Product.java#classFunction:Product.equals`);
  assert.equal(equals.signature, 'public boolean equals(Object other)');
  assert.equal(equals.range.startLine, 55, 'annotations are part of the declaration range');
  const currency = extractFixture('javashop', `${base}model/Currency.java`);
  const gbp = item(currency, `${base}model/Currency.java#classVariable:Currency.GBP`);
  assert.equal(gbp.signature, 'GBP("£", 0.20)');
  assert.equal(gbp.docstring, 'Pound sterling.');
  const checkout = extractFixture('javashop', `${base}service/CheckoutService.java`);
  assert.equal(item(checkout, `${base}service/CheckoutService.java#classVariable:CheckoutService.Receipt.total`).signature, 'double total');
  assert.equal(checkout.classes[1]?.header, 'public record Receipt(String owner, double total, String transactionId)');
});

void test('java imports and package', () => {
  const base = 'src/main/java/com/example/shop/';
  const app = extractFixture('javashop', `${base}App.java`);
  assert.equal(app.packageName, 'com.example.shop');
  assert.deepEqual(app.imports[0], { module: 'com.example.shop.model', name: 'Cart', alias: 'Cart', line: 2 });
  assert.deepEqual(app.imports.at(-1), {
    module: 'com.example.shop.util.Prices',
    name: 'format',
    alias: 'format',
    isStatic: true,
    line: 9,
  });
  assert.equal(app.imports.length, 7);
  const prices = extractFixture('javashop', `${base}util/Prices.java`);
  assert.deepEqual(prices.imports, [
    { module: 'com.example.shop.model', name: 'Currency', alias: 'Currency', line: 2 },
    { module: 'java.lang.Math', isStatic: true, wildcard: true, line: 4 },
  ]);
  const stripe = extractFixture('javashop', `${base}payment/StripeGateway.java`);
  assert.deepEqual(stripe.imports[1], { module: 'java.util', wildcard: true, line: 3 });
});

void test('java syntax error: hasSyntaxErrors and the valid members around it', () => {
  const rel = 'src/main/java/com/example/shop/util/Broken.java';
  const x = extractFixture('javashop', rel);
  assert.equal(x.hasSyntaxErrors, true);
  assert.ok(x.items.some((i) => i.id === `${rel}#classFunction:Broken.before`));
  assert.ok(x.items.some((i) => i.id === `${rel}#classFunction:Broken.after`));
  assert.ok(x.items.some((i) => i.id === `${rel}#classVariable:Broken.counter`));
});

void test('python rules: duplicates, first occurrence of variables, nested functions, scoped blocks', () => {
  const src = [
    'A = 1', // 0
    'A = 2', // 1
    'def f():', // 2
    '    local = 1', // 3
    '    def inner(): pass', // 4
    '    class Hidden: pass', // 5
    'def f(x): pass', // 6
    'class C:', // 7
    '    x = 1', // 8
    '    def __init__(self):', // 9
    '        self.x = 2', // 10
    '        self.y = self.z = 3', // 11
    '        self.a, self.b = 1, 2', // 12
    '        self.y.q = 4', // 13
    '        other.w = 5', // 14
    '        def helper():', // 15
    '            self.hidden = 1', // 16
    '        for i in range(3):', // 17
    '            self.counter = i', // 18
    '    @staticmethod', // 19
    '    def s(self_like):', // 20
    '        self_like.nope = 1', // 21
    '    x += 1', // 22
    'with open("f") as fh:', // 23
    '    W = fh.read()', // 24
    'for i in range(3):', // 25
    '    LOOP = i', // 26
    '',
  ].join('\n');
  const x = extractFile(parsers, 'python', 'r.py', src);
  assert.deepEqual(
    x.items.map((i) => `${i.id.slice('r.py#'.length)} ${i.range.startLine}`),
    [
      'globalVariable:A 0',
      'function:f 2',
      'function:f@2 6',
      'classVariable:C.x 8',
      'classFunction:C.__init__ 9',
      'classVariable:C.y 11',
      'classVariable:C.z 11',
      'classVariable:C.a 12',
      'classVariable:C.b 12',
      'classVariable:C.counter 18',
      'classFunction:C.s 19',
      'globalVariable:W 24',
    ],
  );
  assert.deepEqual(
    x.classes.map((c) => c.qualifiedName),
    ['C'],
  );
});

void test('python: self.x forms that the text prefilter must not miss', () => {
  const src = [
    'class S:',
    '    def __init__(self, a):',
    '        if self.ready == a: self.first = 1',
    '        self.ext: Dict[',
    '            str, int',
    '        ] = {}',
    '        value = self.a + 1; self.b = value',
    '        (self.paren) = 1',
    '        self.t1, (self.t2, other) = 1, (2, 3)',
    '        [self.l1, self.l2] = 1, 2',
    '        self . spaced = 0',
    '        if a <= 3:',
    '            pass',
    '        self.cmp == 1',
    '        self.aug += 1',
    '        self.bare: Any',
    '',
  ].join('\n');
  const x = extractFile(parsers, 'python', 's.py', src);
  assert.deepEqual(
    x.items.filter((i) => i.kind === 'classVariable').map((i) => i.name),
    ['first', 'ext', 'b', 'paren', 't1', 't2', 'l1', 'l2', 'spaced', 'bare'],
  );
});

void test('python: a class under a module-level if gets a dedented stub that parses', () => {
  const src = 'import sys\nif sys.version_info >= (3, 8):\n    class K:\n        v = 1\n        def m(self):\n            return self.v\n';
  const x = extractFile(parsers, 'python', 'k.py', src);
  assert.equal(x.items.find((i) => i.qualifiedName === 'K.m')?.text, '# k.py\nclass K:\n    def m(self):\n        return self.v');
  assert.equal(x.items.find((i) => i.qualifiedName === 'K.v')?.text, '# k.py\nclass K:\n    v = 1');
});

void test('long definitions are cut with a marker and stay closed', () => {
  const body = Array.from({ length: 600 }, (_, n) => `    total = total + ${n}`).join('\n');
  const py = extractFile(
    parsers,
    'python',
    'long.py',
    `class L:\n    def big(self):\n        total = 0\n${body.replace(/^/gm, '    ')}\n        return total\n`,
  );
  const big = py.items.find((i) => i.name === 'big');
  assert.ok(big && big.text.length <= 4100, String(big?.text.length));
  assert.ok(big.text.endsWith('\n# ...'));
  assert.ok(big.text.startsWith('# long.py\nclass L:\n    def big(self):\n'));
  assert.equal(big.range.endLine, 603);
  const jbody = Array.from({ length: 600 }, (_, n) => `        total += ${n};`).join('\n');
  const java = extractFile(
    parsers,
    'java',
    'Long.java',
    `class Long {\n    int big() {\n        int total = 0;\n${jbody}\n        return total;\n    }\n}\n`,
  );
  const jbig = java.items.find((i) => i.name === 'big');
  assert.ok(jbig && jbig.text.length <= 4100);
  assert.ok(jbig.text.endsWith('\n// ...\n}'));
});

void test('CRLF and CR sources give the extraction of the LF source (signatures over two lines, a stub cut near 4,000 characters)', () => {
  const long = Array.from({ length: 200 }, (_, n) => `    total += ${n}  # step ${n}`).join('\n');
  const python = `class C:\n    x = 1\n    def m(self,\n          y=2):\n        self.y = y\n\n\ndef big(a,\n        b):\n    """Sum.\n\n    Long.\n    """\n    total = 0\n${long}\n    return total\n`;
  const jlong = Array.from({ length: 200 }, (_, n) => `        total += ${n}; // step ${n}`).join('\n');
  const java = `/** A class.\n * Two lines. */\nclass J {\n    int big(int a,\n            int b) {\n        int total = 0;\n${jlong}\n        return total;\n    }\n}\n`;
  for (const [lang, path, lf] of [
    ['python', 'c.py', python],
    ['java', 'J.java', java],
  ] as const) {
    const a = extractFile(parsers, lang, path, lf);
    assert.ok(a.items.some((i) => i.signature.includes('\n')) && a.items.some((i) => i.text.length > 3900), `${path}: the cases are there`);
    assert.deepEqual(extractFile(parsers, lang, path, lf.replace(/\n/g, '\r\n')), a, `${path} with CRLF`);
    assert.deepEqual(extractFile(parsers, lang, path, lf.replace(/\n/g, '\r')), a, `${path} with CR`);
  }
});

void test('never throws on garbage, binary-looking, huge or deeply nested input', () => {
  let seed = 7;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const garbage = Array.from({ length: 20000 }, () => String.fromCharCode(Math.floor(rand() * 0xd7ff))).join('');
  const inputs = [
    garbage,
    '\u0000\u0001\u0002PNG\r\n\u001a\n' + garbage.slice(0, 500),
    '('.repeat(5000) + ')'.repeat(10),
    'class A:\n' + '    class B:\n'.repeat(1) + '        ' + 'x = ['.repeat(3000),
    'def f(:\n    """unterminated\n',
    '\ufffd\ufffdK\ufffdse = 1\n',
    'x = 1\n'.repeat(20000),
  ];
  for (const lang of ['python', 'java'] as const) {
    for (const src of inputs) {
      const x = extractFile(parsers, lang, 'g', src);
      assert.ok(Array.isArray(x.items));
    }
  }
  // Many lines of globals: each name once.
  const many = extractFile(parsers, 'python', 'g.py', Array.from({ length: 1000 }, (_, n) => `V${n} = ${n}`).join('\n'));
  assert.equal(many.items.length, 1000);
});

void test('a class the parser gave up on (a method saved mid-edit as `this.`) keeps its class and members', () => {
  const rel = 'src/main/java/com/example/shop/payment/StripeGateway.java';
  const lines = readFileSync(path.join(fixtures, 'javashop', rel), 'utf8').split('\n');
  lines[lines.findIndex((l) => l.includes('return charges;'))] = '        this.';
  const x = extractFile(parsers, 'java', rel, lines.join('\n'));
  assert.deepEqual(
    x.classes.map((c) => c.qualifiedName),
    ['StripeGateway'],
  );
  const names = x.items.map((i) => i.qualifiedName);
  // getCharges, the method being edited, may be missing; the class and the rest stay.
  for (const name of [
    'StripeGateway.apiKey',
    'StripeGateway.charges',
    'StripeGateway.StripeGateway',
    'StripeGateway.charge',
    'StripeGateway.name',
  ])
    assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
});

// Dataflow-guided retrieval (DraCo as CodeRAG section 2.2.1 uses it) on the fixture repositories,
// on synthetic repositories for import resolution, and on bad input.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataflowRetriever, codeLines, namesUsed } from '../../../src/engine/retrieve/dataflow/dataflowRetrieve';
import { analyseUnfinished } from '../../../src/engine/flow/unfinished';
import { SymbolTable } from '../../../src/engine/kb/symbolTable';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import type { UnfinishedFile } from '../../../src/engine/query/unfinishedFile';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { fixtureKb, JAVA_ROOT, knowledgeBase, parsers, unfinishedAfter, unfinishedAt } from './retrieveFixtures';
import { fixturesDir, tempDir } from '../../helpers/paths';

async function dataflowIds(kb: KnowledgeBase, file: UnfinishedFile): Promise<string[]> {
  const df = new DataflowRetriever(kb, await parsers());
  try {
    const r = await df.retrieve({ file, query: lastLinesQuery(file.prefix, 10), topJ: 15 }, new AbortController().signal);
    return r.results.map((x) => x.snippet.id);
  } finally {
    df.dispose();
  }
}

function assertTop(ids: string[], expected: string, n: number): void {
  const at = ids.indexOf(expected);
  assert.ok(at >= 0 && at < n, `expected ${expected} in the top ${n}, got:\n${ids.join('\n')}`);
}

void test('pyshop: a variable assigned from an imported factory resolves to the factory and its return class', async () => {
  const kb = await fixtureKb('pyshop');
  // main.py line 21 uses `gateway` (= make_gateway(...)): cursor on `len(gateway.`
  const ids = await dataflowIds(kb, unfinishedAfter('pyshop', 'app/main.py', 21, 'len(gateway.'));
  assertTop(ids, 'pyshop/payments.py#function:make_gateway', 5);
  assertTop(ids, 'pyshop/payments.py#class:PaymentGateway', 5);
});

void test('pyshop: an attribute of an imported class instance resolves to the class and the member', async () => {
  const kb = await fixtureKb('pyshop');
  // main.py line 20: `receipt = service.checkout()` where service = CheckoutService(cart, gateway).
  const ids = await dataflowIds(kb, unfinishedAfter('pyshop', 'app/main.py', 20, 'service.checkout('));
  assertTop(ids, 'pyshop/services/checkout.py#classFunction:CheckoutService.checkout', 3);
  assertTop(ids, 'pyshop/services/checkout.py#class:CheckoutService', 3);
  // Through `self.gateway` (a field typed by the __init__ hint) to the gateway's method.
  const inner = await dataflowIds(kb, unfinishedAfter('pyshop', 'pyshop/services/checkout.py', 31, 'self.gateway.charge('));
  assertTop(inner, 'pyshop/payments.py#classFunction:PaymentGateway.charge', 3);
});

void test('pyshop: a cross-file call through a module alias and a re-exporting package', async () => {
  const kb = await fixtureKb('pyshop');
  // `u.format_price(` (import pyshop.util as u)
  const ids = await dataflowIds(kb, unfinishedAfter('pyshop', 'app/main.py', 21, 'u.format_price('));
  assertTop(ids, 'pyshop/util.py#function:format_price', 2);
  // `CheckoutService(` comes from pyshop/services/__init__.py re-exporting .checkout.
  const ctor = await dataflowIds(kb, unfinishedAfter('pyshop', 'app/main.py', 19, 'CheckoutService('));
  assertTop(ctor, 'pyshop/services/checkout.py#class:CheckoutService', 3);
  // Imported names are never resolved into the unfinished file itself.
  assert.ok(ids.every((id) => !id.startsWith('app/main.py')));
});

void test('pyshop: on a fresh line, the definitions the lines above used are found (after the direct dependencies)', async () => {
  const kb = await fixtureKb('pyshop');
  // The cursor starts a new line in main() after `print(...)`: nothing is typed yet, so the next
  // line's names are guessed from what main() used just above it.
  const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
  const file: UnfinishedFile = { path: 'app/main.py', lang: 'python', prefix: lines.slice(0, 21).join('\n') + '\n    ' };
  const df = new DataflowRetriever(kb, await parsers());
  try {
    const r = await df.retrieve({ file, query: lastLinesQuery(file.prefix, 10), topJ: 15 }, new AbortController().signal);
    const ids = r.results.map((x) => x.snippet.id);
    // Used only on earlier lines of main(): the gateway setting and the checkout call.
    assertTop(ids, 'pyshop/config.py#globalVariable:DEFAULT_GATEWAY', 15);
    assertTop(ids, 'pyshop/services/checkout.py#classFunction:CheckoutService.checkout', 15);
    const above = r.results.filter((x) => /used above/.test(x.reason ?? ''));
    assert.ok(above.length > 0 && above.every((x) => x.lead !== true), 'names used above are not direct dependencies of the line');
    assert.match(r.notes?.join(' ') ?? '', /\d+ chain\(s\) used above/);
  } finally {
    df.dispose();
  }
});

void test('javashop: factory result, instance attribute, static import, same-package class', async () => {
  const kb = await fixtureKb('javashop');
  const app = `${JAVA_ROOT}/App.java`;
  // line 19: `new CheckoutService(gateway)`; gateway = Gateways.create(...) declared PaymentGateway.
  const factory = await dataflowIds(kb, unfinishedAfter('javashop', app, 19, 'new CheckoutService(gateway'));
  assertTop(factory, `${JAVA_ROOT}/payment/PaymentGateway.java#class:PaymentGateway`, 4);
  assertTop(factory, `${JAVA_ROOT}/service/CheckoutService.java#class:CheckoutService`, 4);
  // The variable name still being typed (`gatew`) is matched by prefix.
  const typing = await dataflowIds(kb, unfinishedAfter('javashop', app, 19, 'new CheckoutService(gatew'));
  assertTop(typing, `${JAVA_ROOT}/payment/PaymentGateway.java#class:PaymentGateway`, 2);
  // line 20: `service.checkout(` -> CheckoutService.checkout
  const member = await dataflowIds(kb, unfinishedAfter('javashop', app, 20, 'service.checkout('));
  assertTop(member, `${JAVA_ROOT}/service/CheckoutService.java#classFunction:CheckoutService.checkout`, 4);
  // line 21: `format(` from `import static com.example.shop.util.Prices.format`
  const statics = await dataflowIds(kb, unfinishedAfter('javashop', app, 21, 'println(format('));
  assertTop(statics, `${JAVA_ROOT}/util/Prices.java#classFunction:Prices.format`, 2);
  // CheckoutService.java line 31: `gateway.charge(` where gateway is a field of an imported interface type.
  const field = await dataflowIds(kb, unfinishedAfter('javashop', `${JAVA_ROOT}/service/CheckoutService.java`, 31, 'gateway.charge('));
  assertTop(field, `${JAVA_ROOT}/payment/PaymentGateway.java#classFunction:PaymentGateway.charge`, 2);
});

function writeRepo(root: string, files: Record<string, string>): void {
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
}

void test('Python import resolution: src/ layout, package root in a subfolder, relative imports, __init__ packages', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'src/acme/__init__.py': 'from .core import Engine\n',
      'src/acme/core.py': 'class Engine:\n    def start(self) -> "Engine":\n        return self\n',
      'src/acme/sub/helpers.py': 'def helper():\n    return 1\n',
      'src/acme/sub/leaf.py': 'from ..core import Engine\nfrom . import helpers\n',
      'tools/pkg/tool.py': 'def run_tool():\n    pass\n',
    });
    const kb = await knowledgeBase(dir.path);
    const symbols = new SymbolTable(kb);
    assert.equal(symbols.pythonModule('acme.core', 'app.py'), 'src/acme/core');
    assert.equal(symbols.pythonModuleFile('src/acme'), 'src/acme/__init__.py');
    assert.equal(symbols.pythonModule('..core', 'src/acme/sub/leaf.py'), 'src/acme/core');
    assert.equal(symbols.pythonModule('.', 'src/acme/sub/leaf.py'), 'src/acme/sub');
    assert.equal(symbols.pythonModule('pkg.tool', 'tools/main.py'), 'tools/pkg/tool');
    assert.equal(symbols.pythonModule('nothing.here', 'x.py'), undefined);
    const prefix = 'from acme import Engine\nfrom acme.sub import helpers\nfrom pkg.tool import run_tool\n\ne = Engine()\ne.start().\n';
    const ids = await dataflowIds(kb, { path: 'app.py', lang: 'python', prefix: prefix + 'x = helpers.helper() + run_tool(' });
    assertTop(ids, 'src/acme/sub/helpers.py#function:helper', 3);
    assertTop(ids, 'tools/pkg/tool.py#function:run_tool', 3);
    const chained = await dataflowIds(kb, { path: 'app.py', lang: 'python', prefix: prefix.slice(0, -2) });
    assertTop(chained, 'src/acme/core.py#classFunction:Engine.start', 3);
    assertTop(chained, 'src/acme/core.py#class:Engine', 3);
  } finally {
    dir.cleanup();
  }
});

void test('Python flow edges: for-in, with-as, parameters with hints, walrus, inheritance (successor)', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'lib/store.py':
        'class Base:\n    def close(self):\n        pass\n\nclass Store(Base):\n    def rows(self) -> "list[Row]":\n        return []\n\nclass Row:\n    def value(self):\n        return 1\n\ndef open_store(path) -> Store:\n    return Store()\n',
    });
    const kb = await knowledgeBase(dir.path);
    const head = 'from lib.store import open_store, Store, Row\n\n';
    const cases: Array<[string, string]> = [
      ['with open_store("x") as s:\n    s.rows', 'lib/store.py#classFunction:Store.rows'],
      ['def f(store: Store):\n    for row in store.rows():\n        row.value', 'lib/store.py#classFunction:Row.value'],
      ['s = open_store("x")\ns.close', 'lib/store.py#classFunction:Base.close'],
      ['if (t := open_store("y")):\n    t.rows', 'lib/store.py#classFunction:Store.rows'],
      ['def g():\n    from lib.store import Row as R\n    R().value', 'lib/store.py#classFunction:Row.value'],
    ];
    for (const [body, expected] of cases) {
      const ids = await dataflowIds(kb, { path: 'main.py', lang: 'python', prefix: head + body });
      assertTop(ids, expected, 4);
    }
  } finally {
    dir.cleanup();
  }
});

void test('bad input: empty file, cursor at line 1, syntax errors, non-ASCII identifiers, a repository with no items, a 20,000-line file', async () => {
  const kb = await fixtureKb('pyshop');
  assert.deepEqual(await dataflowIds(kb, { path: 'new.py', lang: 'python', prefix: '' }), []);
  assert.deepEqual(await dataflowIds(kb, unfinishedAt('pyshop', 'app/main.py', 1)), []);
  // Syntax errors before the cursor: what parsed is still used.
  const broken = await dataflowIds(kb, {
    path: 'x.py',
    lang: 'python',
    prefix: 'from pyshop.payments import make_gateway\ndef broken(:\n    pass\ng = make_gateway("stripe")\ng.',
  });
  assertTop(broken, 'pyshop/payments.py#function:make_gateway', 3);
  // Non-ASCII identifiers resolve like any other.
  const unicode = await dataflowIds(kb, {
    path: 'x.py',
    lang: 'python',
    prefix: 'from pyshop.i18n import Währung, übersetze\nw = Währung("EUR")\nw.größe + übersetze(',
  });
  assertTop(unicode, 'pyshop/i18n.py#class:Währung', 3);
  assertTop(unicode, 'pyshop/i18n.py#function:übersetze', 3);
  const javaUnicode = await dataflowIds(await fixtureKb('javashop'), {
    path: `${JAVA_ROOT}/X.java`,
    lang: 'java',
    prefix: 'package com.example.shop;\nimport com.example.shop.util.Prices;\nclass X { double f() { return Prices.rabattAnwenden(',
  });
  assertTop(javaUnicode, `${JAVA_ROOT}/util/Prices.java#classFunction:Prices.rabattAnwenden`, 2);

  // Java: a method with a syntax error above the cursor, and a 20,000-line class.
  const javaKb = await fixtureKb('javashop');
  const brokenJava = [
    'package com.example.shop;',
    'import com.example.shop.payment.Gateways;',
    'import com.example.shop.payment.PaymentGateway;',
    'class X {',
    '  void broken( {',
    '    x++',
    '  }',
    '  void f() {',
    '    PaymentGateway g = Gateways.create("stripe");',
    '    g.',
  ].join('\n');
  assertTop(
    await dataflowIds(javaKb, { path: `${JAVA_ROOT}/X.java`, lang: 'java', prefix: brokenJava }),
    `${JAVA_ROOT}/payment/PaymentGateway.java#class:PaymentGateway`,
    2,
  );
  const bigJava = [
    'package com.example.shop;',
    'import com.example.shop.model.Cart;',
    'class Big {',
    ...Array.from({ length: 20000 }, (_, i) => `  int m${i}() { return ${i}; }`),
    '  void f(Cart cart) {',
    '    cart.',
  ];
  const t0 = performance.now();
  assertTop(
    await dataflowIds(javaKb, { path: `${JAVA_ROOT}/Big.java`, lang: 'java', prefix: bigJava.join('\n') }),
    `${JAVA_ROOT}/model/Cart.java#class:Cart`,
    2,
  );
  assert.ok(performance.now() - t0 < 5000);

  const empty = tempDir();
  try {
    const none = await knowledgeBase(empty.path);
    assert.deepEqual(await dataflowIds(none, { path: 'a.py', lang: 'python', prefix: 'import os\nx = os.path.join(' }), []);
  } finally {
    empty.cleanup();
  }

  const lines = [
    'from pyshop.payments import make_gateway',
    ...Array.from({ length: 20000 }, (_, i) => `value_${i} = value_${i - 1} + ${i}`),
  ];
  lines.push('gw = make_gateway("stripe")', 'gw.');
  const start = performance.now();
  const big = await dataflowIds(kb, { path: 'big.py', lang: 'python', prefix: lines.join('\n') });
  const elapsed = performance.now() - start;
  assertTop(big, 'pyshop/payments.py#function:make_gateway', 3);
  assert.ok(elapsed < 5000, `20,000-line file took ${elapsed.toFixed(0)} ms`);
});

void test('DataflowRetriever follows knowledge-base changes', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, { 'a.py': 'x = 1\n' });
    const kb = await KnowledgeBase.open({ repoRoot: dir.path, parsers: await parsers() });
    await kb.index(undefined, new AbortController().signal);
    const file: UnfinishedFile = { path: 'main.py', lang: 'python', prefix: 'from tools.b import make_thing\nt = make_thing(' };
    const df = new DataflowRetriever(kb, await parsers());
    const ids = async (): Promise<string[]> =>
      (await df.retrieve({ file, query: lastLinesQuery(file.prefix, 10), topJ: 15 }, new AbortController().signal)).results.map(
        (r) => r.snippet.id,
      );
    assert.deepEqual(await ids(), []);
    writeRepo(dir.path, { 'tools/b.py': 'def make_thing():\n    return 1\n' });
    await kb.updateFile('tools/b.py');
    assert.deepEqual(await ids(), ['tools/b.py#function:make_thing']);
    await kb.removeFile('tools/b.py');
    assert.deepEqual(await ids(), []);
    df.dispose();
    kb.dispose();
  } finally {
    dir.cleanup();
  }
});

void test('analyseUnfinished builds the graph from the prefix only (text after the cursor is never seen)', async () => {
  const p = await parsers();
  const { flow } = analyseUnfinished(p, 'm.py', 'python', 'a = make()\nb = a.x\n');
  assert.deepEqual([...flow.bindings.keys()].sort(), ['a', 'b']);
  assert.deepEqual(flow.bindings.get('b')?.[0]?.values, [[{ name: 'a' }, { name: 'x' }]]);
});

async function dataflowResults(kb: KnowledgeBase, file: UnfinishedFile): Promise<Array<{ id: string; text: string }>> {
  const df = new DataflowRetriever(kb, await parsers());
  try {
    const r = await df.retrieve({ file, query: lastLinesQuery(file.prefix, 10), topJ: 15 }, new AbortController().signal);
    return r.results.map((x) => ({ id: x.snippet.id, text: x.snippet.text }));
  } finally {
    df.dispose();
  }
}

void test('Python: a module used as `mod.member` above yields summaries of the module and of what it star-imports, naming members never used', async () => {
  const dir = tempDir();
  try {
    const shapes = Array.from({ length: 130 }, (_, i) => `class Shape${i}:\n    pass\n`).join('\n');
    writeRepo(dir.path, {
      'geo/__init__.py': 'from .shapes import *\n\nVERSION = "1.0"\n\ndef area(shape) -> float:\n    return 0.0\n',
      'geo/shapes.py': `${shapes}\ndef make_shape(kind: str, size: float = 1.0) -> "Shape0":\n    return Shape0()\n`,
    });
    const kb = await knowledgeBase(dir.path);
    // A fresh line after `geo.Shape3()` was used: the next line may use any member of geo.
    const results = await dataflowResults(kb, {
      path: 'app.py',
      lang: 'python',
      prefix: 'import geo\n\ndef main():\n    s = geo.Shape3()\n    ',
    });
    const ids = results.map((r) => r.id);
    assertTop(ids, 'geo/shapes.py#class:Shape3', 3);
    const pkg = results.find((r) => r.id === 'geo/__init__.py#module');
    const mod = results.find((r) => r.id === 'geo/shapes.py#module');
    assert.ok(pkg && mod, `expected both module summaries, got:\n${ids.join('\n')}`);
    assert.match(pkg.text, /^def area\(shape\) -> float: \.\.\.$/m);
    assert.match(pkg.text, /^VERSION = "1\.0"$/m);
    // One line per definition; past the cap, the remaining names on one line.
    assert.match(mod.text, /^class Shape7: \.\.\.$/m);
    assert.match(mod.text, /^# also: .*\bShape125\b.*\bmake_shape\b/m);
    assert.ok(mod.text.split('\n').length < 130, 'a module summary stays one line per definition, capped');
  } finally {
    dir.cleanup();
  }
  // A generated module with thousands of definitions: the name list is capped too.
  const gen = tempDir();
  try {
    writeRepo(gen.path, {
      'geo/__init__.py': '',
      'geo/consts.py': Array.from({ length: 3000 }, (_, i) => `C${i} = ${i}`).join('\n') + '\n',
    });
    const big = await knowledgeBase(gen.path);
    const huge = (await dataflowResults(big, { path: 'app.py', lang: 'python', prefix: 'from geo import consts\n\nx = consts.C1\n' })).find(
      (r) => r.id === 'geo/consts.py#module',
    );
    assert.ok(huge, 'the generated module has a summary');
    assert.match(huge.text, /\bC338, C339 and 2660 more$/);
    assert.ok(huge.text.length < 8000, `summary of ${huge.text.length} characters`);
  } finally {
    gen.cleanup();
  }
});

void test('Java: a variable of a subclass yields the summary of its repository superclass (inherited members)', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'src/p/TreeBuilder.java':
        'package p;\npublic abstract class TreeBuilder {\n    protected void error(String msg) {}\n    boolean processEndTag(String name) { return true; }\n}\n',
      'src/p/HtmlTreeBuilder.java': 'package p;\npublic class HtmlTreeBuilder extends TreeBuilder {\n    void insert(String t) {}\n}\n',
    });
    const kb = await knowledgeBase(dir.path);
    const prefix = 'package p;\nclass State {\n    boolean process(String t, HtmlTreeBuilder tb) {\n        tb.insert(t);\n        ';
    const results = await dataflowResults(kb, { path: 'src/p/State.java', lang: 'java', prefix });
    const ids = results.map((r) => r.id);
    assertTop(ids, 'src/p/HtmlTreeBuilder.java#class:HtmlTreeBuilder', 3);
    const base = results.find((r) => r.id === 'src/p/TreeBuilder.java#class:TreeBuilder');
    assert.ok(base, `expected the superclass summary, got:\n${ids.join('\n')}`);
    assert.match(base.text, /processEndTag/);
  } finally {
    dir.cleanup();
  }
});

void test('a class summary names every member: two overloads per name in full, the rest by name', async () => {
  const dir = tempDir();
  try {
    const methods = Array.from(
      { length: 60 },
      (_, i) =>
        `    public static String m${i}(int a) { return ""; }\n    public static String m${i}(long a) { return ""; }\n    public static String m${i}(char a) { return ""; }`,
    ).join('\n');
    writeRepo(dir.path, { 'src/p/Utils.java': `package p;\npublic class Utils {\n${methods}\n}\n` });
    const kb = await knowledgeBase(dir.path);
    const results = await dataflowResults(kb, {
      path: 'src/p/Main.java',
      lang: 'java',
      prefix: 'package p;\nclass Main {\n    void f() {\n        Utils.m0(1);\n        ',
    });
    const summary = results.find((r) => r.id === 'src/p/Utils.java#class:Utils');
    assert.ok(summary, `expected the Utils summary, got:\n${results.map((r) => r.id).join('\n')}`);
    assert.match(summary.text, /static String m0\(int a\);/);
    assert.match(summary.text, /static String m0\(long a\);/);
    assert.doesNotMatch(summary.text, /m0\(char a\)/);
    assert.match(summary.text, /\/\/ also: m20, m21, .*\bm59\b/);
  } finally {
    dir.cleanup();
  }
});

void test('codeLines / namesUsed: identifiers outside import statements (parenthesised and continued Python imports, Java imports)', () => {
  const py = namesUsed(
    codeLines('from a import (x,\n    y)\nfrom b import z, \\\n    w\nimport c\nv = x(1)  # z here is a comment\n', 'python'),
  );
  assert.deepEqual([...py].sort(), ['v', 'x']);
  const java = namesUsed(codeLines('package p;\nimport q.Foo;\nimport q.Bar;\nclass A { Foo f; } // Bar\n', 'java'));
  assert.deepEqual([...java].sort(), ['A', 'Foo', 'class', 'f']);
  // Non-ASCII identifiers are whole names, not their ASCII pieces.
  const unicode = namesUsed(codeLines('from m import zähler\ngröße = zähler(1)\nαβ = größe\n', 'python'));
  assert.deepEqual([...unicode].sort(), ['größe', 'zähler', 'αβ']);
});

void test('Python: a name imported but not used yet ranks above imports used long ago', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, { 'lib/a.py': 'def used_fn():\n    return 1\n\ndef fresh_fn():\n    return 2\n' });
    const kb = await knowledgeBase(dir.path);
    const filler = Array.from({ length: 200 }, (_, i) => `v${i} = ${i}`).join('\n');
    const results = await dataflowResults(kb, {
      path: 'main.py',
      lang: 'python',
      prefix: `from lib.a import used_fn, fresh_fn\nfirst = used_fn()\n${filler}\n`,
    });
    const ids = results.map((r) => r.id);
    const fresh = ids.indexOf('lib/a.py#function:fresh_fn');
    const used = ids.indexOf('lib/a.py#function:used_fn');
    assert.ok(fresh >= 0 && used >= 0 && fresh < used, `expected fresh_fn before used_fn, got:\n${ids.join('\n')}`);
  } finally {
    dir.cleanup();
  }
});

void test("Python: a star import the prefix has not used yet brings the module's summary and those of the modules it star-imports", async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'tz/__init__.py': 'from .itertz import *\n\nmap = map\n\ncomp = compose\n',
      'tz/itertz.py': 'def frequencies(seq):\n    return {}\n\ndef compose(*funcs):\n    return funcs[0]\n',
      'tz/unrelated.py': 'def elsewhere():\n    return 0\n',
    });
    const kb = await knowledgeBase(dir.path);
    // The names the next line uses (comp, frequencies) appear nowhere in the prefix: only the star import leads to them.
    const prefix = 'from tz import *\n\n\ndef stem(word):\n    return word.lower()\n\n\n';
    const results = await dataflowResults(kb, { path: 'examples/wordcount.py', lang: 'python', prefix });
    const texts = results.map((r) => `${r.id}: ${r.text}`).join('\n---\n');
    assert.ok(
      results.some((r) => r.id.startsWith('tz/__init__.py#') && /comp = compose/.test(r.text)),
      `tz/__init__.py's summary, got:\n${texts}`,
    );
    assert.ok(
      results.some((r) => r.id.startsWith('tz/itertz.py#') && /def frequencies/.test(r.text)),
      `tz/itertz.py's summary, got:\n${texts}`,
    );
    assert.ok(!results.some((r) => r.id.startsWith('tz/unrelated.py#')), 'a module nobody star-imports stays out');
  } finally {
    dir.cleanup();
  }
});

void test('Python: of the imports not used yet, those sharing words with the lines just above come first', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'ops/__init__.py': '',
      'ops/add.py': 'def add_operation(dn):\n    return 1\n',
      'ops/delete.py': 'def delete_operation(dn):\n    return 2\n',
    });
    const kb = await knowledgeBase(dir.path);
    const prefix =
      'from ops.add import add_operation\nfrom ops.delete import delete_operation\n\nclass Connection:\n    def delete(self, dn):\n        """Delete the entry at dn."""\n        ';
    const ids = (await dataflowResults(kb, { path: 'conn.py', lang: 'python', prefix })).map((r) => r.id);
    const del = ids.indexOf('ops/delete.py#function:delete_operation');
    const add = ids.indexOf('ops/add.py#function:add_operation');
    assert.ok(del >= 0 && add >= 0 && del < add, `expected delete_operation before add_operation, got:\n${ids.join('\n')}`);
  } finally {
    dir.cleanup();
  }
});

void test('Python: the names a file imports from one module come as one summary of their declarations, the module used nearest first', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'lib/__init__.py': '',
      'lib/log.py':
        'ERROR = 10\nBASIC = 20\n\ndef log_enabled(level: int) -> bool:\n    return True\n\ndef log(level: int, message: str, *args) -> None:\n    pass\n',
      'lib/results.py': 'RESULT_SUCCESS = 0\nRESULT_BUSY = 51\n',
      'lib/errors.py': 'class CursorError(Exception):\n    pass\n',
    });
    const kb = await knowledgeBase(dir.path);
    const filler = Array.from({ length: 150 }, (_, i) => `        v${i} = self.step(${i})`).join('\n');
    const prefix = [
      'from lib.log import log, log_enabled, ERROR, BASIC',
      'from lib.results import RESULT_SUCCESS, RESULT_BUSY',
      'from lib.errors import CursorError',
      '',
      'class Cursor:',
      '    def open(self):',
      '        if log_enabled(BASIC):',
      "            log(BASIC, 'open')",
      filler,
      '        if self.result == RESULT_SUCCESS:',
      '            return',
      '        ',
    ].join('\n');
    const results = await dataflowResults(kb, { path: 'cursor.py', lang: 'python', prefix });
    const ids = results.map((r) => r.id);
    const results_ = ids.findIndex((id) => id.startsWith('lib/results.py#imported:'));
    const log = ids.findIndex((id) => id.startsWith('lib/log.py#imported:'));
    // log_enabled / ERROR were used 150 lines up (or never): still among the first places, in one snippet.
    assert.ok(log >= 0 && log < 5, `expected the lib/log.py summary in the first 5, got:\n${ids.join('\n')}`);
    assert.ok(results_ >= 0 && results_ < log, `expected lib/results.py (used 2 lines up) before lib/log.py, got:\n${ids.join('\n')}`);
    const text = results[log]!.text;
    assert.match(text, /^# lib\/log\.py/);
    assert.match(text, /^def log_enabled\(level: int\) -> bool: \.\.\.$/m);
    assert.match(text, /^ERROR = 10$/m);
    assert.doesNotMatch(text, /return True/, 'declarations only, not bodies');
    // A single name from a module is its own definition, not a one-line group.
    assert.ok(ids.includes('lib/errors.py#class:CursorError'), `expected CursorError's summary, got:\n${ids.join('\n')}`);
    assert.ok(!ids.some((id) => id.startsWith('lib/errors.py#imported:')));
  } finally {
    dir.cleanup();
  }
});

void test('Python: the definitions a file reads from an imported module (`from . import exceptions`) are found however far up it read them', async () => {
  const dir = tempDir();
  try {
    writeRepo(dir.path, {
      'web/__init__.py': 'VERSION = "1.0"\n',
      'web/exceptions.py':
        'class BadRequest(Exception):\n    pass\n\n\nclass BadKey(BadRequest, KeyError):\n    pass\n\n\nclass Unused(Exception):\n    pass\n',
    });
    const kb = await knowledgeBase(dir.path);
    // `exceptions.BadKey` was read 200 lines up: beyond the chains used above, which the walk resolves.
    const filler = Array.from({ length: 200 }, (_, i) => `        v${i} = self.get(${i})`).join('\n');
    const prefix =
      'from . import exceptions\n\n\nclass Store(dict):\n    def first(self, key):\n        if key in self:\n            return 1\n' +
      `        raise exceptions.BadKey(key)\n\n    def second(self, key):\n${filler}\n        if key in self:\n            return 2\n        `;
    const results = await dataflowResults(kb, { path: 'web/store.py', lang: 'python', prefix });
    const ids = results.map((r) => r.id);
    assert.ok(ids.includes('web/exceptions.py#class:BadKey'), `expected BadKey, got:\n${ids.join('\n')}`);
    // What the file never read from the module is not brought this way.
    assert.ok(!ids.includes('web/exceptions.py#class:Unused'), `did not expect Unused, got:\n${ids.join('\n')}`);
  } finally {
    dir.cleanup();
  }
});

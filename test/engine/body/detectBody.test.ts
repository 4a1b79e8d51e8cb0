// Body-mode detection: the cursor in an empty method body (empty, `pass`, `...`, a
// docstring, a TODO comment, `{ }`) is the body mode's; everything else stays line mode.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, grammarsDir } from '../../helpers/paths';
import { loadParsers, type Parsers } from '../../../src/engine/kb/parsers';
import { detectBodyTarget, guessBodyTarget } from '../../../src/engine/body/detectBody';

const javaPath = join(fixturesDir, 'javashop', 'src/main/java/com/example/shop/service/CheckoutService.java');
const pyPath = join(fixturesDir, 'pyshop', 'pyshop/services/checkout.py');
const java = readFileSync(javaPath, 'utf8');
const py = readFileSync(pyPath, 'utf8');

/** Replace the body of the method whose body starts after `header` (up to `end`) and put the cursor at `|` in `body`. */
function withBody(text: string, header: string, end: string, body: string): { prefix: string; suffix: string } {
  const start = text.indexOf(header) + header.length;
  const stop = text.indexOf(end, start);
  assert.ok(start >= header.length && stop > start, `${header} ... ${end} found`);
  const edited = text.slice(0, start) + body + text.slice(end === PY_END ? stop + end.length : stop);
  const cursor = start + body.indexOf('|');
  return { prefix: edited.slice(0, cursor), suffix: edited.slice(cursor + 1) };
}

const JAVA_HEADER = 'public Receipt checkout(Cart cart) {';
const JAVA_END = '\n    }\n\n    public List<Receipt>';
const PY_HEADER = 'def checkout(self) -> Receipt:';
const PY_END = '\n        return receipt';

void describe('body-mode detection', () => {
  let parsers: Parsers;
  before(async () => {
    parsers = await loadParsers(grammarsDir);
  });

  void test('Java: an empty method body, a TODO comment, `{ }` with whitespace are body mode', () => {
    for (const body of ['\n        |', '\n        // TODO charge the cart\n        |', '\n        |// TODO', ' | ']) {
      const { prefix, suffix } = withBody(java, JAVA_HEADER, JAVA_END, body);
      const target = detectBodyTarget(parsers, 'java', prefix, suffix);
      assert.ok(target, `body mode for ${JSON.stringify(body)}`);
      assert.equal(target.name, 'checkout');
      assert.equal(target.className, 'CheckoutService');
      assert.match(target.signature, /public Receipt checkout\(Cart cart\)$/);
      assert.equal(target.signatureIndent, 4);
    }
  });

  void test('Java: a method with code, a class body, a field initializer and a comment that is not a TODO stay line mode', () => {
    const inCode = java.indexOf('receipts.add(receipt);');
    assert.equal(detectBodyTarget(parsers, 'java', java.slice(0, inCode), java.slice(inCode)), undefined, 'inside a non-empty body');
    const classLevel = java.indexOf('    public List<Receipt> getReceipts()');
    assert.equal(detectBodyTarget(parsers, 'java', java.slice(0, classLevel), java.slice(classLevel)), undefined, 'between methods');
    const field = java.indexOf('new ArrayList<>()');
    assert.equal(detectBodyTarget(parsers, 'java', java.slice(0, field), java.slice(field)), undefined, 'a field initializer');
    const { prefix, suffix } = withBody(java, JAVA_HEADER, JAVA_END, '\n        // charges later\n        |');
    assert.equal(detectBodyTarget(parsers, 'java', prefix, suffix), undefined, 'a plain comment is content');
  });

  void test('Python: empty, `pass`, `...`, a docstring and a TODO comment are body mode (cursor at column 0 too)', () => {
    const bodies = [
      '\n        |',
      '\n|',
      '\n        pass|',
      '\n        |pass',
      '\n        ...|',
      '\n        """Charge the cart."""\n        |',
      '\n        # TODO: charge\n        |',
    ];
    for (const body of bodies) {
      const { prefix, suffix } = withBody(py, PY_HEADER, PY_END, body);
      const target = detectBodyTarget(parsers, 'python', prefix, suffix);
      assert.ok(target, `body mode for ${JSON.stringify(body)}`);
      assert.equal(target.name, 'checkout');
      assert.equal(target.className, 'CheckoutService');
      assert.equal(target.signatureIndent, 4);
      assert.match(target.signature, /def checkout\(self\) -> Receipt:/);
    }
  });

  void test('Python: a body with code, module level, inside a docstring and a plain comment stay line mode', () => {
    const inCode = py.indexOf('        receipt = Receipt(self.cart, transaction_id)');
    assert.equal(detectBodyTarget(parsers, 'python', py.slice(0, inCode), py.slice(inCode)), undefined, 'inside a non-empty body');
    const lineStart = py.indexOf('        receipt = Receipt(self.cart, transaction_id)') + 8;
    assert.equal(
      detectBodyTarget(parsers, 'python', py.slice(0, lineStart), py.slice(lineStart)),
      undefined,
      'at the start of a line with code',
    );
    const docStart = py.indexOf('"""Charge the cart');
    assert.equal(
      detectBodyTarget(parsers, 'python', py.slice(0, docStart), py.slice(docStart)),
      undefined,
      'before the docstring of a method with code',
    );
    const moduleLevel = py.indexOf('class CheckoutService');
    assert.equal(detectBodyTarget(parsers, 'python', py.slice(0, moduleLevel), py.slice(moduleLevel)), undefined, 'module level');
    const { prefix, suffix } = withBody(py, PY_HEADER, PY_END, '\n        """Charge |the cart."""');
    assert.equal(detectBodyTarget(parsers, 'python', prefix, suffix), undefined, 'inside the docstring');
    const commented = withBody(py, PY_HEADER, PY_END, '\n        # charges later\n        |');
    assert.equal(detectBodyTarget(parsers, 'python', commented.prefix, commented.suffix), undefined, 'a plain comment is content');
  });

  void test('without a tree to read, the last declaration line of the prefix is the target', () => {
    assert.equal(guessBodyTarget('python', 'x = 1\n\n    def total(self, a: int) -> int:\n')?.name, 'total');
    assert.equal(guessBodyTarget('java', 'class A {\n    public int total(int a) {\n')?.name, 'total');
    assert.equal(guessBodyTarget('java', 'class A {\n    int x = 1;\n'), undefined);
  });
});

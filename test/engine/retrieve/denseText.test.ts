// What the dense path embeds for an item: Python docstrings cut to their first sentence, the code kept; Java as it is.
import test from 'node:test';
import assert from 'node:assert/strict';
import { denseText, firstSentence } from '../../../src/engine/retrieve/dense/denseText';

void test('a Java item is embedded as it is, Javadoc included', () => {
  const stub = [
    '// src/Cart.java',
    'public class Cart {',
    '    /**',
    '     * Adds an item. The price is read from the catalog.',
    '     * @param item the item',
    '     */',
    '    public int add(Item item) {',
    '        return total += item.price();',
    '    }',
    '}',
  ].join('\n');
  assert.equal(denseText(stub, 'java'), stub);
});

void test('a Python item keeps the first sentence of its docstring and all of its code', () => {
  const stub = [
    '# shop/cart.py',
    'class Cart:',
    '    def add(self, item):',
    '        """Add an item.',
    '',
    '        Longer text.',
    '        """',
    '        return self.total + item.price',
    '',
  ].join('\n');
  assert.equal(
    denseText(stub, 'python'),
    [
      '# shop/cart.py',
      'class Cart:',
      '    def add(self, item):',
      '        """Add an item."""',
      '        return self.total + item.price',
      '',
    ].join('\n'),
  );
  const noDoc = '# a.py\ndef f():\n    s = """text"""\n    return s\n';
  assert.equal(denseText(noDoc, 'python'), noDoc);
});

void test('a first sentence is cut at a word when it runs on', () => {
  assert.equal(firstSentence('Returns x.  More.'), 'Returns x.');
  assert.equal(firstSentence('no full stop here'), 'no full stop here');
  const long = firstSentence(`${'word '.repeat(80)}end.`);
  assert.ok(long.length <= 204 && long.endsWith(' ...'), long);
});

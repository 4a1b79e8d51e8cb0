// Keyword arguments a repository callee lacks, on the pyshop fixture: cut, or
// repaired to the closest parameter; a callee taking **kwargs, or one not resolved, is not checked.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReceiverTyper } from '../../../src/engine/check/receiverMembers';
import { checkKeywordArguments } from '../../../src/engine/check/keywordArguments';
import { fixturesDir } from '../../helpers/paths';
import { fixtureKb, parsers } from '../retrieve/retrieveFixtures';

const MAIN = 'app/main.py';

void test('a keyword argument the resolved callee lacks is cut (with its comma) or repaired; one it has, or in a string, stays', async () => {
  const typer = new ReceiverTyper(await fixtureKb('pyshop'), await parsers());
  const lines = readFileSync(join(fixturesDir, 'pyshop', MAIN), 'utf8').split('\n');
  const prefix = `${lines.slice(0, 18).join('\n')}\n    service = CheckoutService(`;
  const callAt = (t: string) => typer.callAt({ path: MAIN, lang: 'python', prefix: t }, new AbortController().signal);
  try {
    const cut = checkKeywordArguments(prefix, 'cart, lineno="x")', callAt, { repair: false });
    assert.equal(cut.text, 'cart');
    assert.deepEqual(
      cut.fixes.map((f) => [f.action, f.receiver, f.wrote]),
      [['cut', 'CheckoutService', 'lineno']],
    );
    assert.equal(checkKeywordArguments(prefix, 'cart, gatewy=gateway)', callAt).text, 'cart, gateway=gateway)');
    assert.equal(checkKeywordArguments(prefix, 'cart, gateway=gateway)', callAt).fixes.length, 0);
    assert.equal(checkKeywordArguments(prefix, 'cart, "lineno=3")', callAt).fixes.length, 0, 'inside a string');
    assert.equal(checkKeywordArguments(prefix, 'cart, f(lineno=3))', callAt).fixes.length, 0, 'an unresolved inner call');
    const unresolved = `${lines.slice(0, 18).join('\n')}\n    print(`;
    assert.equal(checkKeywordArguments(unresolved, 'cart, sep="")', callAt).text, 'cart, sep="")', 'a callee outside the repository');
  } finally {
    typer.dispose();
  }
});

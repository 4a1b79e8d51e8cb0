// The identifier a text ends in, found by walking back: the same answer as the `$`-anchored
// regular expressions it replaces, and no answer for a run longer than any identifier.
import test from 'node:test';
import assert from 'node:assert/strict';
import { identifierEndingAt, MAX_IDENTIFIER_CHARS } from '../../../src/engine/util/identifierAtEnd';

const UNICODE = /[\p{L}_$][\p{L}\p{N}_$]*$/u;
const ASCII = /[A-Za-z_$][A-Za-z0-9_$]*$/;

void test('the same identifier as /[\\p{L}_$][\\p{L}\\p{N}_$]*$/u (and its ASCII form), within a range', () => {
  const samples = [
    'cart.',
    'cart.tot',
    'x = 0x1F',
    '123abc',
    'self.__init',
    'a.b(c).d',
    '',
    ' ',
    'über',
    'x.𝒳y',
    'naïve_1',
    '$el',
    'foo(bar',
    '1_000',
    'obj.fn(',
    'a\nb',
  ];
  for (const s of samples) {
    assert.equal(identifierEndingAt(s), UNICODE.exec(s)?.[0] ?? '', JSON.stringify(s));
    assert.equal(identifierEndingAt(s, s.length, 0, true), ASCII.exec(s)?.[0] ?? '', `ascii ${JSON.stringify(s)}`);
    for (let from = 0; from <= s.length; from++)
      for (let end = from; end <= s.length; end++)
        assert.equal(
          identifierEndingAt(s, end, from),
          UNICODE.exec(s.slice(from, end))?.[0] ?? '',
          `${JSON.stringify(s)} [${from}, ${end})`,
        );
  }
});

void test('a run of identifier characters longer than any identifier (a 300 KB hex literal) is no identifier', () => {
  const hex = `x = 0x${'A1B2C3D4'.repeat(300_000 / 8)}`;
  assert.equal(identifierEndingAt(hex), '');
  assert.equal(identifierEndingAt(`${hex} + cart.total`), 'total');
  assert.equal(identifierEndingAt('y'.repeat(MAX_IDENTIFIER_CHARS)), 'y'.repeat(MAX_IDENTIFIER_CHARS));
  assert.equal(identifierEndingAt('y'.repeat(MAX_IDENTIFIER_CHARS + 1)), '');
});

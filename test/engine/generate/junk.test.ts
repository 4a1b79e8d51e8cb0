// The junk rules as pure functions: a loop, the placeholder's forms, a repeat of
// the text after the cursor. The pipeline's use of them: test/engine/pipeline/stages/junk.test.ts.
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  cutInlineLoop,
  cutNearLoop,
  cutRecurringLine,
  cutRepeatedLines,
  placeholderAt,
  repeatsRightContext,
} from '../../../src/engine/generate/postprocess/junk';
import { filterJunk } from '../../../src/engine/generate/postprocess/filterJunk';

void test('a line or block written three times in a row keeps its first copy; twice, closing braces and blank lines are not a loop', () => {
  assert.equal(cutRepeatedLines('a = 1\nx += 1\nx += 1\nx += 1\nreturn x').text, 'a = 1\nx += 1');
  assert.equal(cutRepeatedLines('a.b();\nc.d();\na.b();\nc.d();\na.b();\nc.d();').text, 'a.b();\nc.d();');
  // The third copy cut short by the token limit still proves the loop.
  assert.equal(cutRepeatedLines('    go(1);\n    go(1);\n    go(').text, '    go(1);');
  assert.equal(
    cutRepeatedLines('this.cart = cart;\n' + 'this.cart = cart;\n'.repeat(14) + 'this').cut?.note.match(/\d+ times/)?.[0],
    '15 times',
  );
  for (const fine of ['x += 1\nx += 1\nreturn x', '        }\n    }\n}', 'a\n\n\n\nb', 'if (a) {\n}\n}\n}', 'f(1)\nf(2)\nf(3)'])
    assert.equal(cutRepeatedLines(fine).cut, undefined, fine);
});

void test('a loop inside one line (what a model server wrote at the e2e positions) cuts its line and what follows', () => {
  // Answers the shipped model gave through the Ollama API at pyshop/app/main.py (no loop guard on a server's stream).
  assert.equal(cutInlineLoop(' "metetetetetetetetetetetetetetetetetet').text, '');
  assert.equal(cutInlineLoop('cart, "mug", "mug", "mug", "mug", "mug", "mug", "').text, '');
  assert.equal(cutInlineLoop('mpl.get_waven.get_waven.get_waven.get_waven.get_wav').text, '');
  const kept = filterJunk('cart)\n    cart.add(cart.add(cart.add(cart.add(cart.add(cart.add(');
  assert.equal(kept.text, 'cart)');
  assert.equal(kept.cuts[0]?.rule, 'inlineRepeat');
  assert.match(kept.cuts[0]!.note, /"cart\.add\(" written 6 times in a row in one line/);
  // Code that repeats digits or punctuation, or a piece fewer than four times, is not a loop.
  for (const fine of ['x = [0, 0, 0, 0, 0, 0, 0, 0]', "print('-' * 40)", 'return new Receipt(cart);', 'f(a, a, a)', '"ab" "ab" "ab"'])
    assert.equal(cutInlineLoop(fine).cut, undefined, fine);
});

void test('the placeholder is found in the forms a model copies it', () => {
  for (const form of ['"<redacted>"', '<REDACTED>', '< Redacted >', '&lt;redacted&gt;', '\\u003credacted\\u003e'])
    assert.ok(placeholderAt(`key = ${form}`) >= 0, form);
  for (const not of ['redacted = True', 'REDACTED_KEYS', '"[redacted]"']) assert.equal(placeholderAt(not), -1, not);
});

void test('a suggestion that only re-types the text after the cursor, whitespace aside, up to a token end', () => {
  assert.ok(repeatsRightContext(')', ')\n'));
  assert.ok(repeatsRightContext('    return total', '\n    return  total\n}'));
  assert.ok(repeatsRightContext('a = 1\nb = 2', '\n    a = 1\n    b = 2\n    c = 3'));
  assert.ok(!repeatsRightContext('x', 'x_total = 3'), 'part of a longer name is not a repeat of it');
  assert.ok(!repeatsRightContext('return total + 1', '\n    return total\n'));
  assert.ok(!repeatsRightContext('', ')'));
});

void test('a line written a third time within a few lines (a loop with variations) is cut at its first repeat, with a block opener left dangling', () => {
  // What the shipped model wrote on a werkzeug body (validation): copies not in a row. What is left
  // before the first repeat is a block opener without its block: nothing is shown.
  const looped = cutRecurringLine('if d in sources:\n    if d in sources:\n    d in sources:\n    if d in sources:\n    ');
  assert.equal(looped.text, '');
  assert.match(looped.cut!.note, /written 3 times within 4 lines/);
  assert.equal(
    cutRecurringLine('if not a:\n    return None\nif not b:\n    return None\nif not c:\n    return None').text,
    'if not a:\n    return None',
  );
  // Twice, far apart, or lines that say nothing: kept.
  for (const fine of [
    'x = f()\ny = g(x)\nx = f()\nreturn y',
    '}\n}\n}\n}',
    'a = 1\n' +
      'b = 2\n'.repeat(0) +
      Array.from({ length: 20 }, (_, i) => `v${i} = ${i}`).join('\n') +
      '\na = 1\n' +
      Array.from({ length: 20 }, (_, i) => `w${i} = ${i}`).join('\n') +
      '\na = 1',
  ])
    assert.equal(cutRecurringLine(fine).cut, undefined, fine);
  assert.equal(filterJunk('if d in sources:\n    if d in sources:\n    d in sources:\n    if d in sources:').cuts[0]?.rule, 'repeat');
});

void test('a phrase, call or member chain written again and again with small variations to the end is cut, or nothing is shown', () => {
  // Loops the shipped model wrote inside a line (line, dot and body modes on the larger repositories):
  // no piece is written four times in a row, so the in-line rule lets them through. Each runs to the
  // token limit, as a loop does.
  const inLine = [
    'ModuleType.ModuleType.ModuleType.Type.ModuleType.ModuleType.Type.ModuleType.ModuleType.ModuleType.Type.Modu',
    'timezones() -> st.timezones() -> st.timezones() -> st.timezones() -> st.timez',
    'return True if not None or not None or not None or None or not None or not',
    'int min = max; int min = max; int max = min; int min = max; int min = max + 1; int min = max; int min =',
    // The token limit cut the last name short: `_cons` is `_consumers` unfinished, not a new name.
    'if self._consumers or not self._consumers or not self._consumers or not self._consumers or not self._consumers and not self._cons',
  ];
  for (const looped of inLine) {
    assert.equal(cutInlineLoop(looped).cut, undefined, looped);
    const out = filterJunk(looped);
    assert.equal(out.text, '', looped);
    assert.deepEqual(
      out.cuts.map((c) => c.rule),
      ['nearRepeat'],
      looped,
    );
  }
  // After a line that says something, only the loop's line goes.
  assert.equal(cutNearLoop('total = 0\nreturn True if not None or not None or not None or None or not None').text, 'total = 0');
  // Across lines: the first copy is kept, with a note for the trace.
  const lines = cutNearLoop('int min = max;\nint max = min;\nint min = max;\nint min = max + 1;\nint min = max;');
  assert.equal(lines.text, 'int min = max;');
  assert.match(
    lines.cut!.note,
    /"int min = max ;" written 5 times with small variations to the end \(a decoding loop\): cut at its first repeat/,
  );
  // Copies that are mostly not the unit itself are code (the same call with its arguments in every order).
  for (const fine of ['f(False, True)\nf(True, False)\nf(True, True)', 'assert v + 0 == v\nassert v - 0 == v\nassert 0 + v == v'])
    assert.equal(cutNearLoop(fine).cut, undefined, fine);
});

void test('real code that repeats a phrase with new names in it, or goes on after it, is not a loop', () => {
  for (const fine of [
    'a.b.c.d',
    'x, y, z = 1, 2, 3',
    'self.assertEqual(a, b); self.assertEqual(c, d)',
    '"%s %s %s" % (a, b, c)',
    'foo(bar(baz(qux)))',
    'f(a, a, a)',
    // A builder chain adds a different thing each time: code a person writes.
    'builder.add(a).add(b).add(c).add(d).add(e);',
    'os.path.dirname(os.path.dirname(os.path.dirname(__file__)))',
    'a[i][j] = b[i][j] + c[i][j]',
    // Lines of the validation repositories the first versions of the rule cut.
    ') -> t.Tuple[t.Optional[str], t.List[str], t.List[str]]:',
    'args, sub_ctx.args = sub_ctx.args, []',
    'if lines and lines[-1] and chunk and lines[-1][-1] == chunk[-1]:',
    'ex.getCause().getCause().getCause().getCause().getMessage(),',
    'witness.append(c).append(c).append(c);',
    'getParent().getParent().getParent();',
    'self.assert_join(self.fx.t, self.fx.t, self.fx.t)',
    "self.assertEqual(f('a'), 1)\nself.assertEqual(f('b'), 2)\nself.assertEqual(f('c'), 3)",
    'Map<String, Map<String, Map<String, Integer>>> m;',
  ])
    assert.equal(cutNearLoop(fine).cut, undefined, fine);
});

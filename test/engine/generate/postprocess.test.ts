// Golden cases for postprocessing, with █ marking the cursor (postprocess.cases.txt).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  completionMode,
  cutAtPlaceholder,
  lineSettled,
  postprocessCompletion,
  postprocessEmptyReason,
} from '../../../src/engine/generate/postprocess/postprocess';
import { ownAnswer, specialTokensOf } from '../../../src/engine/generate/postprocess/promptEcho';
import { renderRepoLevel, SPECIAL_TOKENS } from '../../../src/engine/prompt/templates';
import type { Lang } from '../../../src/engine/kb/types';

interface GoldenCase {
  name: string;
  lang: Lang;
  prefix: string;
  suffix: string;
  model: string;
  expected: string;
}

function parseCases(text: string): GoldenCase[] {
  return text
    .split(/^=== /m)
    .filter((s) => s.trim() !== '')
    .map((block) => {
      const [name = '', ...rest] = block.split('\n');
      const sections: Record<string, string> = {};
      let current = '';
      for (const line of rest) {
        const m = /^--- (\w+)/.exec(line);
        if (m) {
          current = m[1] ?? '';
          sections[current] = '';
        } else if (current) sections[current] += (sections[current] === '' ? '' : '\n') + line;
      }
      const code = sections.code ?? '';
      const at = code.indexOf('█');
      assert.ok(at >= 0, `case "${name}" has a cursor marker`);
      return {
        name,
        lang: (sections.lang ?? 'python').trim() as Lang,
        prefix: code.slice(0, at),
        suffix: code.slice(at + 1),
        model: sections.model ?? '',
        expected: (sections.expected ?? '').replace(/\n+$/, ''),
      };
    });
}

const cases = parseCases(readFileSync(join(__dirname, 'postprocess.cases.txt'), 'utf8'));

test('the golden file has cases', () => {
  assert.ok(cases.length >= 10);
});

for (const c of cases) {
  test(`postprocess: ${c.name}`, () => {
    assert.equal(postprocessCompletion(c.model, { lang: c.lang, prefix: c.prefix, suffix: c.suffix }), c.expected);
  });
}

test('completion mode: mid-line is single-line, the line after a block opener is a block', () => {
  assert.equal(completionMode({ lang: 'python', prefix: 'x = f(', suffix: '' }), 'singleLine');
  assert.equal(completionMode({ lang: 'python', prefix: 'def f():\n    ', suffix: '' }), 'block');
  assert.equal(completionMode({ lang: 'java', prefix: 'void f() {\n  ', suffix: '\n}' }), 'block');
  assert.equal(completionMode({ lang: 'java', prefix: 'void f() {\n', suffix: '' }), 'singleLine');
});

void test('model text loses terminal escapes, control characters and bidi controls; ghost text is capped at 4,000 characters at a line end', () => {
  const ctx = { lang: 'python' as Lang, prefix: 'def f():\n    x = ', suffix: '\n' };
  assert.equal(postprocessCompletion('\x1b[1;31mcompute\x1b[0m(\x1b]0;pwned\x07a,\u202e b\u2069)\r\x00\x7f\x9b2J', ctx), 'compute(a, b)');
  assert.equal(postprocessCompletion('\x1bP+q\x1b\\value', ctx), 'value');
  const block = { lang: 'python' as Lang, prefix: 'def f():\n    ', suffix: '\n' };
  const long = postprocessCompletion(Array.from({ length: 200 }, (_, i) => `x${i} = ${'y'.repeat(60)}`).join('\n    '), block, {
    maxLines: 1000,
  });
  assert.ok(long.length <= 4000 && long.endsWith('y'.repeat(60)), `${long.length} characters, cut at a line end`);
  assert.equal(postprocessCompletion('z'.repeat(10_000), ctx).length, 4000);
});

void test("a model that ends the empty cursor line first gives the next line's code, without the cursor's indentation twice", () => {
  const py = { lang: 'python' as Lang, prefix: 'def f(a):\n    x = a + 1\n    ', suffix: '\n    return x\n' };
  assert.equal(postprocessCompletion('\n    y = x * 2\n', py), 'y = x * 2');
  assert.equal(postprocessCompletion('\n\n        y = x * 2', py), '    y = x * 2', "deeper: the model's extra indentation stays");
  assert.equal(postprocessCompletion('\ny = x * 2', py), 'y = x * 2', 'shallower: the cursor cannot move left');
  assert.equal(postprocessCompletion('y = x * 2\n', py), 'y = x * 2');
  const java = { lang: 'java' as Lang, prefix: 'public int size() {\n    ', suffix: '\n}\n' };
  assert.equal(postprocessCompletion('\n    return items.size();\n}\n', java), 'return items.size();');
  const midLine = { lang: 'python' as Lang, prefix: 'x = ', suffix: '\n' };
  assert.equal(postprocessCompletion('\n    y = 1', midLine), '', 'mid-line, a line break ends the completion');
});

void test('after an open bracket, lines that never close it, or close what the line did not open, are no completion, and the reason says so', () => {
  const call = { lang: 'python' as Lang, prefix: 'def f(cart):\n    total = compute(', suffix: '\n' };
  const unclosed = `\n${Array.from({ length: 20 }, (_, i) => `        a${i},`).join('\n')}`;
  assert.equal(postprocessCompletion(unclosed, call), '');
  assert.equal(postprocessEmptyReason(unclosed, call), 'the lines it wrote after the open bracket did not close it within 12 lines');
  assert.equal(postprocessCompletion('\n        cart]\n', call), '', 'a mismatched closer');
  assert.equal(postprocessCompletion('\n        cart,\n    )', call), '\n        cart,\n    )');
  const service = {
    lang: 'python' as Lang,
    prefix: 'def f(cart, engine):\n    service = CheckoutService(',
    suffix: '\n    service.run()\n',
  };
  assert.equal(
    postprocessCompletion(' \n        cart,\n        engine,\n    )\n    service.run()\n', service),
    '\n        cart,\n        engine,\n    )',
    'the arguments through the closing line, nothing after it',
  );
  const java = { lang: 'java' as Lang, prefix: 'Order make() {\n        Order order = factory.create(', suffix: '\n' };
  assert.equal(
    postprocessCompletion('\n            cart, "sku-(9",\n            engine.rates());\n        return order;', java),
    '\n            cart, "sku-(9",\n            engine.rates());',
    'the rest of the closing line stays; brackets in strings do not count',
  );
  const javaBlock = { lang: 'java' as Lang, prefix: 'void f() {\n    if (ready) {', suffix: '\n' };
  assert.equal(
    postprocessCompletion('\n        go();\n    }', javaBlock),
    '',
    'a Java block after its brace is not arguments: the line ends',
  );
});

void test('a single line is settled once it has ended after some code; a block, a blank start or arguments on the next lines are not', () => {
  const py = (prefix: string) => ({ lang: 'python' as Lang, prefix, suffix: '\n' });
  const empty = py('x = 1\n    ');
  const settled = lineSettled(empty);
  assert.ok(settled);
  assert.equal(settled('foo()'), false, 'the line has not ended');
  assert.equal(settled('foo()\n'), true);
  assert.equal(settled('\n    foo()\n    bar'), true, 'leading blank lines are skipped on an empty line');
  assert.equal(settled('\n'), false, 'nothing written yet');
  // What more text cannot change: the chain keeps the same first line.
  assert.equal(postprocessCompletion('foo()\n', empty), postprocessCompletion('foo()\n    bar()\n', empty));
  // A block after `def f():` keeps several lines: no single-line check.
  assert.equal(lineSettled(py('def f():\n    ')), undefined);
  // After an open bracket, a model that breaks the line writes the arguments on the next lines.
  const call = lineSettled(py('    run('));
  assert.ok(call);
  assert.equal(call('\n        a,\n'), false);
  assert.equal(call('a, b)\n'), true);
});

void test('a suggestion never shows the redaction placeholder; it is cut before it with the name it is bound to', () => {
  const py = { lang: 'python' as const, prefix: '    service = CheckoutService(cart, ', suffix: '\n' };
  // The e2e fixture's ghost text: nothing is left to show, and the reason says why.
  assert.equal(postprocessCompletion('lineno="<redacted>")', py), '');
  assert.match(postprocessEmptyReason('lineno="<redacted>")', py) ?? '', /redaction placeholder/);
  assert.equal(postprocessCompletion('gateway, token="<redacted>")', py), 'gateway,');
  const block = { lang: 'python' as const, prefix: 'def connect():\n    ', suffix: '' };
  assert.equal(
    postprocessCompletion('client = make_client()\n    client.login("admin", "<redacted>")\n    return client', block),
    'client = make_client()',
  );
  assert.equal(cutAtPlaceholder('{"Authorization": "Bearer <redacted>"}'), '{"Authorization": "Bearer');
  assert.equal(cutAtPlaceholder('headers["X-Api-Key"] = \'<redacted>\''), '');
  assert.equal(cutAtPlaceholder('password: str = "<redacted>"'), '');
  assert.equal(cutAtPlaceholder('return total'), 'return total');
});

void test('the directional marks LRM, RLM and ALM go like the other bidi controls', () => {
  const ctx = { lang: 'python' as const, prefix: 'x = ', suffix: '' };
  assert.equal(postprocessCompletion('compute(\u200fa,\u200e \u061cb\u202a\u2068)', ctx), 'compute(a, b)');
});

void test("an answer ends at its first special token: the family's own, and other families' except words that code writes too", () => {
  const prompt = '<|fim_prefix|>x = <|fim_suffix|><|fim_middle|>';
  for (const family of ['qwen2.5-coder', 'starcoder2', 'codellama', 'deepseek-coder', 'plain'] as const) {
    const own = family === 'plain' ? [] : SPECIAL_TOKENS[family];
    for (const token of own) assert.equal(ownAnswer(`compute(a)${token}junk`, prompt, family).text, 'compute(a)', `${family} ${token}`);
    assert.equal(ownAnswer('compute(a)<|fim_pad|>', prompt, family).text, 'compute(a)', `${family}: Qwen's pad`);
    assert.equal(ownAnswer('compute(a)<file_sep>b.py', prompt, family).text, 'compute(a)', `${family}: StarCoder's separator`);
  }
  // HTML in a string is code, except for Code Llama, whose tokens these are.
  assert.equal(ownAnswer('html = "<PRE>x</s>"', prompt, 'qwen2.5-coder').text, 'html = "<PRE>x</s>"');
  assert.equal(ownAnswer('html = "x</s>"', prompt, 'codellama').text, 'html = "x');
  assert.ok(!specialTokensOf('plain').includes('</s>'));
  const cut = ownAnswer('a<|fim_pad|><|fim_pad|>', prompt, 'qwen2.5-coder').cut;
  assert.equal(cut?.rule, 'specialToken');
  assert.match(cut?.note ?? '', /<\|fim_pad\|>/);
});

void test('an answer that starts the prompt over (its repository head, a path heading) is no suggestion; a later heading cuts it', () => {
  const files = [{ path: 'app/cart.py', text: 'class Cart:\n    pass\n' }];
  const prompt = renderRepoLevel('qwen2.5-coder', 'shop', files, 'app/main.py', 'cart = ', '\n')!;
  const echo = (text: string): string => ownAnswer(text, prompt, 'qwen2.5-coder').text;
  assert.equal(echo(prompt), '', 'the prompt as it is');
  assert.equal(echo(prompt.replace(/<\|[a-z_]+\|>/g, '')), '', 'the prompt without its tokens (a server that drops them)');
  assert.equal(echo('app/cart.py\nclass Cart:'), '', "a file separator's path");
  assert.equal(echo('Cart()\n\napp/cart.py\nclass Cart:'), 'Cart()', 'the model moved on to another file');
  assert.equal(ownAnswer('Cart()\napp/cart.py', prompt, 'qwen2.5-coder').cut?.rule, 'promptHead');
  const comment = "'''\n# app/cart.py\nclass Cart: ...\n\n# app/models.py (imported here)\nclass Line: ...\n'''\n# app/main.py\ncart = ";
  const plain = (text: string): string => ownAnswer(text, comment, 'plain').text;
  assert.equal(plain(comment), '');
  assert.equal(plain('# app/main.py\ncart = Cart()'), '', "the current file's path comment");
  assert.equal(plain('# app/models.py (imported here)'), '');
  // Code of its own is kept, a comment too, and the snippet's code the model copies (that is what the block is for).
  assert.equal(plain('Cart()'), 'Cart()');
  assert.equal(plain('Cart()  # see app/cart.py'), 'Cart()  # see app/cart.py');
  assert.equal(plain('class Cart: ...'), 'class Cart: ...');
  assert.equal(plain("'''"), "'''");
});

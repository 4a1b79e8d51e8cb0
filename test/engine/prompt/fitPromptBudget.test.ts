import test from 'node:test';
import assert from 'node:assert/strict';
import { fitPromptBudget, estimateTokens, type FittedPrompt } from '../../../src/engine/prompt/fitPromptBudget';
import { PromptMemory } from '../../../src/engine/prompt/promptMemory';
import { modelFamilyOf } from '../../../src/engine/prompt/templates';

const snippets = [
  { path: 'shop/models.py', text: 'class Cart:\n    def add_item(self, item, qty=1):\n        ...' },
  { path: 'shop/util.py', text: 'def money(x):\n    return round(x, 2)' },
];

test('plain prompt: snippets in a string block headed by paths, then the file path and the code', () => {
  const fitted = fitPromptBudget({
    lang: 'python',
    filePath: 'app/main.py',
    prefix: 'cart = Cart()\ncart.',
    suffix: '',
    snippets,
    family: 'plain',
  });
  assert.equal(
    fitted.prompt,
    "'''\n# shop/models.py\nclass Cart:\n    def add_item(self, item, qty=1):\n        ...\n\n# shop/util.py\ndef money(x):\n    return round(x, 2)\n'''\n# app/main.py\ncart = Cart()\ncart.",
  );
  assert.equal(fitted.fim, false);
  assert.equal(fitted.snippetsDropped, 0);
});

const CART = { path: 'src/Cart.java', text: 'class Cart {\n    int size() { return n; }\n}' };

test('Qwen2.5-Coder with the comment form: its FIM template; Java snippets sit in a block comment', () => {
  const fitted = fitPromptBudget({
    lang: 'java',
    filePath: 'src/App.java',
    prefix: 'int n = cart.',
    suffix: ';\n}',
    snippets: [CART],
    family: modelFamilyOf('qwen2.5-coder:1.5b-base'),
    repoFormat: 'comment',
  });
  // The cursor's line opens the middle part, after the code that follows the cursor.
  assert.equal(
    fitted.prompt,
    '<|fim_prefix|>/*\n// src/Cart.java\nclass Cart {\n    int size() { return n; }\n}\n*/\n// src/App.java\n<|fim_suffix|>;\n}<|fim_middle|>int n = cart.',
  );
  assert.equal(fitted.format, 'comment');
  assert.ok(fitted.stop.includes('<|endoftext|>'));
});

test("the repository-level form (auto for Qwen2.5-Coder and StarCoder2): snippets as the repository's files, then the current file", () => {
  const qwen = fitPromptBudget({
    lang: 'java',
    filePath: 'src/App.java',
    prefix: 'int n = cart.',
    suffix: ';\n}',
    snippets: [CART],
    family: 'qwen2.5-coder',
    repoName: 'shop',
  });
  assert.equal(qwen.format, 'files');
  assert.equal(
    qwen.prompt,
    '<|repo_name|>shop\n<|file_sep|>src/Cart.java\nclass Cart {\n    int size() { return n; }\n}\n<|file_sep|>src/App.java\n<|fim_prefix|><|fim_suffix|>;\n}<|fim_middle|>int n = cart.',
  );
  const noSuffix = fitPromptBudget({
    lang: 'java',
    filePath: 'src/App.java',
    prefix: 'int n = cart.',
    suffix: '',
    snippets: [CART],
    family: 'qwen2.5-coder',
    repoName: 'shop',
  });
  assert.equal(
    noSuffix.prompt,
    '<|repo_name|>shop\n<|file_sep|>src/Cart.java\nclass Cart {\n    int size() { return n; }\n}\n<|file_sep|>src/App.java\nint n = cart.',
  );
  const star = fitPromptBudget({
    lang: 'python',
    filePath: 'app/main.py',
    prefix: 'x = ',
    suffix: '\nprint(x)',
    snippets: [{ path: 'lib/a.py', text: 'def f():\n    return 1\n' }],
    family: modelFamilyOf('starcoder2:3b'),
    repoName: 'shop',
  });
  assert.equal(
    star.prompt,
    '<repo_name>shop<file_sep>lib/a.py\ndef f():\n    return 1\n<file_sep><fim_prefix>app/main.py\n<fim_suffix>\nprint(x)<fim_middle>x = ',
  );
  // Code Llama's spaced markers keep the line in the prefix; its head still ends where the line starts.
  const llama = fitPromptBudget({
    lang: 'python',
    filePath: 'app/main.py',
    prefix: 'y = 1\nx = ',
    suffix: '\nprint(x)',
    snippets: [],
    family: 'codellama',
  });
  assert.equal(llama.prompt, '<PRE> # app/main.py\ny = 1\nx =  <SUF>\nprint(x) <MID>');
  assert.equal(llama.head, '<PRE> # app/main.py\ny = 1\n');
  // Families without a documented repository form keep the comment form whatever is asked.
  assert.equal(
    fitPromptBudget({ lang: 'python', filePath: 'a.py', prefix: 'x = ', suffix: '', snippets: [], family: 'plain', repoFormat: 'files' })
      .format,
    'comment',
  );
  assert.equal(
    fitPromptBudget({
      lang: 'python',
      filePath: 'a.py',
      prefix: 'x = ',
      suffix: '',
      snippets: [],
      family: 'codellama',
      repoFormat: 'files',
    }).format,
    'comment',
  );
});

test('over budget: snippets are cut from the right before the code context is squeezed', () => {
  const many = Array.from({ length: 20 }, (_, i) => ({ path: `m${i}.py`, text: `def f${i}():\n` + '    x = 1\n'.repeat(30) }));
  const prefix = 'import os\n'.repeat(20) + 'value = ';
  const fitted = fitPromptBudget({
    lang: 'python',
    filePath: 'a.py',
    prefix,
    suffix: '',
    snippets: many,
    family: 'plain',
    budgetTokens: 600,
  });
  assert.ok(fitted.tokens <= 600, `fits: ${fitted.tokens}`);
  assert.equal(fitted.prefixCut, false);
  assert.ok(fitted.promptPrefix.endsWith(prefix), 'the whole code context is kept');
  assert.ok(fitted.snippetsDropped > 0);
  assert.deepEqual(
    fitted.snippetsUsed.map((s) => s.path),
    many.slice(0, fitted.snippetsUsed.length).map((s) => s.path),
    'order kept',
  );
});

test('a snippet too large for the room left is passed over for the smaller ones ranked after it', () => {
  const small = (i: number) => ({ path: `s${i}.py`, text: `def small_${i}(a):\n    \"\"\"Small ${i}.\"\"\"` });
  const big = { path: 'big.py', text: 'class Big:\n' + '    field_x = 1\n'.repeat(120) };
  const ranked = [small(0), big, small(1), small(2)];
  const fitted = fitPromptBudget({
    lang: 'python',
    filePath: 'a.py',
    prefix: 'x = 1\ny = ',
    suffix: '',
    snippets: ranked,
    family: 'plain',
    budgetTokens: 400,
  });
  assert.deepEqual(
    fitted.snippetsUsed.map((s) => s.path),
    ['s0.py', 's1.py', 's2.py'],
  );
  assert.ok(fitted.tokens <= 400);
});

test("cutIntoRest (a model server's compact renderings): the room the whole snippets leave takes the head of the best one left out", () => {
  const small = (i: number) => ({ path: `s${i}.py`, text: `def small_${i}(a):\n    \"\"\"Small ${i}.\"\"\"` });
  const big = { path: 'big.py', text: 'class Big:\n    # also: first_name, last_name\n' + '    field_x = 1\n'.repeat(120) };
  const ranked = [small(0), big, small(1), small(2)];
  const fitted = fitPromptBudget({
    lang: 'python',
    filePath: 'a.py',
    prefix: 'x = 1\ny = ',
    suffix: '',
    snippets: ranked,
    family: 'plain',
    budgetTokens: 400,
    cutIntoRest: true,
  });
  // Every whole one as before, and the large class's header and names in what they leave, in ranking order.
  assert.deepEqual(
    fitted.snippetsUsed.map((s) => s.path),
    ['s0.py', 'big.py', 's1.py', 's2.py'],
  );
  assert.match(fitted.prompt, /class Big:\n {4}# also: first_name, last_name\n {4}field_x = 1/);
  assert.ok(fitted.prompt.split('field_x').length - 1 < 120, 'cut');
  assert.ok(fitted.tokens <= 400, `fits: ${fitted.tokens}`);
});

test("briefs (a model server's compact renderings): the best-ranked items enter whole, those after them in brief", () => {
  const item = (i: number) => ({
    path: `m${i}.py`,
    text: `def member_${i}(a, b):\n    """${'Explains it at length. '.repeat(8)}"""\n    ...`,
    brief: `def member_${i}(a, b): ...`,
  });
  const ranked = Array.from({ length: 12 }, (_, i) => item(i));
  const input = {
    lang: 'python' as const,
    filePath: 'a.py',
    prefix: 'x = 1\ny = ',
    suffix: '',
    family: 'plain' as const,
    budgetTokens: 900,
  };
  const without = fitPromptBudget({ ...input, snippets: ranked.map(({ brief: _b, ...s }) => s) });
  const fitted = fitPromptBudget({ ...input, snippets: ranked });
  assert.ok(without.snippetsUsed.length < 12, `without briefs ${without.snippetsUsed.length} fit`);
  // Every item is in the prompt; the first ones whole, in ranking order.
  assert.deepEqual(
    fitted.usedIndices,
    ranked.map((_, i) => i),
  );
  const whole = fitted.usedTexts.filter((t, i) => t === ranked[i]!.text).length;
  assert.ok(whole >= 2 && whole < 12, `${whole} whole`);
  assert.deepEqual(
    fitted.usedTexts.slice(whole),
    ranked.slice(whole).map((s) => s.brief),
  );
  for (const s of ranked) assert.ok(fitted.prompt.includes(`def member_${s.path.slice(1, -3)}(a, b)`));
  assert.ok(fitted.tokens <= 900, `fits: ${fitted.tokens}`);
});

test('a code context larger than the budget keeps its end', () => {
  const prefix = Array.from({ length: 2000 }, (_, i) => `line_${i} = ${i}`).join('\n') + '\nlast = ';
  const fitted = fitPromptBudget({ lang: 'python', filePath: 'a.py', prefix, suffix: '', snippets, family: 'plain', budgetTokens: 512 });
  assert.equal(fitted.prefixCut, true);
  assert.ok(fitted.prompt.endsWith('\nlast = '));
  assert.ok(estimateTokens(fitted.prompt) <= 512);
  assert.ok(fitted.snippetsUsed.length > 0, 'snippets keep up to half the budget');
  assert.ok(estimateTokens(fitted.promptPrefix.slice(0, fitted.promptPrefix.indexOf('# a.py\n'))) <= 256 + 8, 'and no more than half');
});

test('contextShare: a long code context keeps at least that share of the budget, the snippets the rest', () => {
  const prefix = Array.from({ length: 2000 }, (_, i) => `line_${i} = ${i}`).join('\n') + '\nlast = ';
  const many = Array.from({ length: 40 }, (_, i) => ({ path: `m${i}.py`, text: `def f${i}(a, b):\n    return a + b + ${i}` }));
  const blockOf = (share: number | undefined): number => {
    const fitted = fitPromptBudget({
      lang: 'python',
      filePath: 'a.py',
      prefix,
      suffix: '',
      snippets: many,
      family: 'plain',
      budgetTokens: 512,
      ...(share !== undefined ? { contextShare: share } : {}),
    });
    assert.ok(fitted.prompt.endsWith('\nlast = '));
    assert.ok(estimateTokens(fitted.prompt) <= 512);
    return estimateTokens(fitted.promptPrefix.slice(0, fitted.promptPrefix.indexOf('# a.py\n')));
  };
  const half = blockOf(undefined);
  const quarter = blockOf(0.75);
  assert.ok(half > 200 && half <= 256 + 8, `CodeRAG's half by default (${half})`);
  assert.ok(quarter > 80 && quarter <= 128 + 8, `a quarter with contextShare 0.75 (${quarter})`);
  assert.equal(blockOf(1), 0, 'no snippet when the context takes it all');
});

test('with no snippets the code context may use the whole budget', () => {
  const prefix = Array.from({ length: 2000 }, (_, i) => `line_${i} = ${i}`).join('\n') + '\nlast = ';
  const fitted = fitPromptBudget({
    lang: 'python',
    filePath: 'a.py',
    prefix,
    suffix: '',
    snippets: [],
    family: 'plain',
    budgetTokens: 512,
  });
  assert.ok(fitted.tokens > 480 && fitted.tokens <= 512, `${fitted.tokens}`);
});

/** The characters two prompts share from their start. */
function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

test('typing at one place changes the prompt only from the cursor line on: the block grows at its end, the left edge stays', () => {
  const memory = new PromptMemory();
  const base = Array.from({ length: 400 }, (_, i) => `value_${i} = compute(${i})`).join('\n') + '\n';
  const line = 'total = cart.add_item(sku, quantity)';
  const pool = Array.from({ length: 12 }, (_, i) => ({ path: `pkg/m${i % 5}.py`, text: `def helper_${i}(a, b):\n    """Helper ${i}."""` }));
  let before: FittedPrompt | undefined;
  let shared = 0;
  let asked = 0;
  let changes = 0;
  for (let n = 1; n <= line.length; n++) {
    // The ranking changes while the line is typed: a new item comes in at its head twice, the others shuffle.
    const head = n < 12 ? [] : n < 25 ? [pool[10]!] : [pool[11]!, pool[10]!];
    const rest = pool.slice(0, 8);
    const ranked = [...head, ...(n % 2 === 0 ? rest : [...rest].reverse())];
    const prefix = base + line.slice(0, n);
    const place = memory.placeAt('app/main.py', 400);
    const fitted = fitPromptBudget({
      lang: 'python',
      filePath: 'app/main.py',
      prefix,
      suffix: '\nprint(total)\n',
      snippets: ranked,
      family: 'qwen2.5-coder',
      budgetTokens: 1024,
      layout: place.layout,
      repoName: 'shop',
    });
    place.keep(fitted.layout);
    assert.ok(fitted.tokens <= 1024, `fits: ${fitted.tokens}`);
    // The head holds the code after the cursor; the line typed so far comes last.
    assert.equal(fitted.prompt, fitted.head + line.slice(0, n), 'the prompt is its head, then the line typed');
    assert.ok(fitted.head.endsWith('\nprint(total)\n<|fim_middle|>'), 'the head runs through the code after the cursor');
    assert.ok(fitted.head.includes(base.slice(base.length - 40)), 'and holds the code above the line');
    if (before) {
      const kept = commonPrefix(before.prompt, fitted.prompt);
      shared += kept;
      asked += fitted.prompt.length;
      if (fitted.blockChanged) changes++;
      else {
        assert.ok(fitted.prompt.startsWith(before.head), `keystroke ${n}: the head of the last prompt is kept`);
        assert.ok(
          fitted.prompt.length - kept <= 1,
          `keystroke ${n}: only the key typed is new (${fitted.prompt.length - kept} characters)`,
        );
      }
    }
    before = fitted;
  }
  assert.ok(changes <= 2, `the block changed ${changes} times`);
  assert.ok(shared / asked > 0.9, `shared share ${(shared / asked).toFixed(3)}`);
});

test('a jump elsewhere in the file starts a new block from the ranking', () => {
  const memory = new PromptMemory();
  const a = memory.placeAt('a.py', 10);
  a.keep({ ...a.layout, blockCap: 100 });
  assert.equal(memory.placeAt('a.py', 30).fresh, false);
  assert.equal(memory.placeAt('a.py', 300).fresh, true);
  assert.equal(memory.placeAt('b.py', 300).fresh, true);
});

test('the same input gives the same prompt (prompt cache stays warm)', () => {
  const a = fitPromptBudget({ lang: 'python', filePath: 'a.py', prefix: 'x = ', suffix: '', snippets, family: 'plain' });
  const b = fitPromptBudget({ lang: 'python', filePath: 'a.py', prefix: 'x = ', suffix: '', snippets: [...snippets], family: 'plain' });
  assert.equal(a.prompt, b.prompt);
});

test('model families are recognised from model names', () => {
  assert.equal(modelFamilyOf('qwen2.5-coder:7b-base'), 'qwen2.5-coder');
  assert.equal(modelFamilyOf('bigcode/starcoder2-3b'), 'starcoder2');
  assert.equal(modelFamilyOf('codellama:7b-code'), 'codellama');
  assert.equal(modelFamilyOf('deepseek-coder:1.3b-base'), 'deepseek-coder');
  assert.equal(modelFamilyOf('coderag-lm'), 'plain');
});

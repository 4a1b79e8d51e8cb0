import test from 'node:test';
import assert from 'node:assert/strict';
import { estimateTokens, fitPromptBudget, type PromptInput, type PromptSnippet } from '../../../src/engine/prompt/fitPromptBudget';
import { PromptMemory } from '../../../src/engine/prompt/promptMemory';
import { RECENT_PLACES, SharedBlock, type NeededItem } from '../../../src/engine/prompt/sharedBlock';
import { localRoom } from '../../../src/engine/generate/readRate';
import type { Candidate } from '../../../src/engine/retrieve/types';

const need = (key: string, cost: number, rank = 0): NeededItem<string> => ({ snippet: key, key, cost, rank });

test('a shared block keeps what it holds where it is and appends what a place misses at its end', () => {
  const block = new SharedBlock<string>(100, 1000);
  block.admit([need('a', 10), need('b', 10, 1)], block.startPlace(), Infinity);
  const second = block.admit([need('b', 10), need('c', 10, 1), need('a', 10, 2)], block.startPlace(), Infinity);
  assert.deepEqual(
    block.items.map((i) => i.key),
    ['a', 'b', 'c'],
  );
  assert.equal(second.appended, 1);
  assert.equal(second.changedFrom, 2, 'the text changes only at the end');
});

test('a full block lets in a new item by evicting the stale ones nearest its end; recent places keep theirs', () => {
  const block = new SharedBlock<string>(40, 1000);
  block.admit([need('old1', 10), need('old2', 10, 1)], block.startPlace(), Infinity);
  for (let p = 0; p < RECENT_PLACES; p++) block.admit([need('kept', 10)], block.startPlace(), Infinity);
  block.admit([need('mid', 10)], block.startPlace(), Infinity);
  // Full: old1 old2 kept mid. A new item takes the room of the stale item nearest the end (old2), not of those needed lately.
  const admitted = block.admit([need('new', 10)], block.startPlace(), Infinity);
  assert.deepEqual(
    block.items.map((i) => i.key),
    ['old1', 'kept', 'mid', 'new'],
  );
  assert.equal(admitted.evicted, 1);
  assert.equal(admitted.changedFrom, 1, 'a server reads again from where old2 stood');
});

test("a place's own needs come before a recent place's items: those leave from the end when nothing stale is left", () => {
  const block = new SharedBlock<string>(40, 1000);
  block.admit([need('a1', 10), need('a2', 10, 1)], block.startPlace(), Infinity);
  block.admit([need('b1', 10), need('b2', 10, 1)], block.startPlace(), Infinity);
  // Full, and every item needed by one of the last places: the new place's two items take the room of the latest ones.
  const admitted = block.admit([need('c1', 10), need('c2', 10, 1)], block.startPlace(), Infinity);
  assert.deepEqual(
    block.items.map((i) => i.key),
    ['a1', 'a2', 'c1', 'c2'],
  );
  assert.equal(admitted.waiting.length, 0);
  assert.equal(admitted.changedFrom, 2, 'a server reads again from where b1 stood');
});

test('an allowance caps what a place appends at once; the rest waits', () => {
  const block = new SharedBlock<string>(1000, 2000);
  block.admit([need('a', 100)], block.startPlace(), Infinity);
  const admitted = block.admit([need('b', 60), need('c', 60, 1)], block.startPlace(), 100);
  assert.deepEqual(
    block.items.map((i) => i.key),
    ['a', 'b'],
  );
  assert.deepEqual(
    admitted.waiting.map((w) => w.key),
    ['c'],
  );
});

test('a copy is adopted only if the block did not change meanwhile', () => {
  const block = new SharedBlock<string>(100, 1000);
  block.admit([need('a', 10)], block.startPlace(), Infinity);
  const tried = block.copy();
  const at = block.version;
  tried.admit([need('b', 10)], 1, Infinity);
  assert.equal(block.holds('b'), false);
  assert.equal(block.adopt(tried, at), true);
  assert.equal(block.holds('b'), true);
  const late = block.copy();
  const lateAt = block.version;
  late.admit([need('c', 10)], 1, Infinity);
  block.admit([need('d', 10)], block.startPlace(), Infinity);
  assert.equal(block.adopt(late, lateAt), false);
  assert.equal(block.holds('c'), false);
});

test("localRoom: a slow or unmeasured server gets a tenth of the budget and adds nothing at once; a fast one CodeRAG's half and all", () => {
  assert.deepEqual(localRoom(6000, undefined, 0.5), { localTokens: 600, allowance: 0 });
  assert.deepEqual(localRoom(6000, 80, 0.5), { localTokens: 600, allowance: 0 });
  const fast = localRoom(6000, 3000, 0.5);
  assert.equal(fast.localTokens, 3000);
  assert.ok(fast.allowance >= 6000);
});

/** A module of `n` functions in file `path`, each its own snippet. */
function items(path: string, n: number, from = 0): PromptSnippet[] {
  return Array.from({ length: n }, (_, i) => {
    const text = `def helper_${from + i}(a, b):\n    """Helper ${from + i} of ${path}."""`;
    const id = `${path}#${from + i}`;
    return { path, id, text, source: { snippet: { id, path, text } } as unknown as Candidate };
  });
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const code = (tag: string): string => Array.from({ length: 300 }, (_, i) => `${tag}_${i} = compute_${tag}(${i})`).join('\n') + '\n    x = ';

test('places on a shared block: a new place reads its local part, the block stays its prefix, and a pause appends what it missed', () => {
  const memory = new PromptMemory();
  const shared = (allowance: number): PromptInput['shared'] => ({
    block: (cap, budget) => memory.sharedBlock('qwen|python', cap, budget),
    localTokens: 400,
    allowance,
  });
  const fit = (file: string, line: number, prefix: string, ranked: PromptSnippet[]) => {
    const place = memory.placeAt(file, line);
    const fitted = fitPromptBudget({
      lang: 'python',
      filePath: file,
      prefix,
      suffix: '\nprint(x)\n',
      snippets: ranked,
      family: 'qwen2.5-coder',
      budgetTokens: 4000,
      layout: place.layout,
      shared: shared(0),
      repoName: 'shop',
    });
    place.keep(fitted.layout);
    return fitted;
  };
  const a = fit('app/a.py', 300, code('a'), items('pkg/m.py', 8));
  assert.ok(a.tokens <= 4000);
  assert.equal(a.usedIndices.length, 8, 'the first place fills the empty block with all it needs');
  // Another file of the package: two items are new to the block; they wait, and the block is the prompt's prefix as before.
  const b = fit('app/b.py', 300, code('b'), [...items('pkg/m.py', 6), ...items('pkg/n.py', 2)]);
  const blockEnd = a.prompt.indexOf('<|file_sep|>app/a.py');
  assert.ok(blockEnd > 0);
  assert.ok(commonPrefix(a.prompt, b.prompt) >= blockEnd, 'the new place shares the whole block with the last prompt');
  assert.equal(b.usedOthers.length, 2, 'items another place needed are still in the prompt, and among its contexts');
  assert.ok(!b.prompt.includes('pkg/n.py'), 'the new items wait for a pause');
  // A pause: the waiting items join at the block's end, read once the server has them.
  memory.placeAt('app/b.py', 300);
  const idle = memory.idleWork()!;
  assert.equal(idle.appended, 2);
  assert.ok(idle.head.includes('pkg/n.py'));
  assert.ok(commonPrefix(idle.head, b.prompt) >= blockEnd - 20, "the pause reads only from the block's end on");
  assert.equal(idle.commit(), true);
  const after = fit('app/b.py', 300, code('b') + 'y', [...items('pkg/m.py', 6), ...items('pkg/n.py', 2)]);
  assert.ok(after.prompt.includes('pkg/n.py'));
  assert.ok(after.prompt.startsWith(idle.head), 'the next keystroke reads only what was typed');
  // Back at the first place: the block grew at its end only, so it is still a prefix of the prompt there.
  const back = fit('app/a.py', 305, code('a') + 'z', items('pkg/m.py', 8));
  assert.ok(commonPrefix(back.prompt, after.prompt) >= after.prompt.indexOf('<|file_sep|>app/b.py'));
  assert.equal(back.usedIndices.length, 8);
});

test("without a shared block a place keeps a block of its own, as the embedded model's prompts do", () => {
  const memory = new PromptMemory();
  const place = memory.placeAt('app/a.py', 300);
  const placed = fitPromptBudget({
    lang: 'python',
    filePath: 'app/a.py',
    prefix: code('a'),
    suffix: '',
    snippets: items('pkg/m.py', 3),
    family: 'plain',
    budgetTokens: 512,
    layout: place.layout,
  });
  place.keep(placed.layout);
  const layout = placed.layout;
  assert.equal(layout.shared, undefined);
  assert.equal(layout.block.length, placed.usedIndices.length);
  assert.deepEqual(placed.usedOthers, []);
  assert.equal(memory.idleWork(), undefined, 'and nothing waits for a pause');
});

test('a short first file leaves a new shared block the room its code does not take, and a later place still gets its local part', () => {
  const memory = new PromptMemory();
  // Items of about 100 estimated tokens each: 25 of them take more than the 2,000 tokens a fast server's place leaves the block.
  const big = Array.from({ length: 25 }, (_, i) => {
    const text = `def helper_${i}(a, b):\n    """${'Helper of the shop. '.repeat(13)}"""`;
    const id = `pkg/m.py#${i}`;
    return { path: 'pkg/m.py', id, text, source: { snippet: { id, path: 'pkg/m.py', text } } as unknown as Candidate };
  });
  const fit = (file: string, prefix: string) => {
    const place = memory.placeAt(file, prefix.split('\n').length - 1);
    const fitted = fitPromptBudget({
      lang: 'python',
      filePath: file,
      prefix,
      suffix: '\nprint(x)\n',
      snippets: big,
      family: 'qwen2.5-coder',
      budgetTokens: 4000,
      layout: place.layout,
      shared: { block: (cap, budget, newCap) => memory.sharedBlock('qwen|python', cap, budget, newCap), localTokens: 2000, allowance: 0 },
      repoName: 'shop',
    });
    place.keep(fitted.layout);
    return fitted;
  };
  const short = fit('app/short.py', 'import shop\n\nx = ');
  assert.equal(short.usedIndices.length, 25, 'every item fits beside a three-line file');
  assert.ok(short.tokens <= 4000);
  const long = fit('app/long.py', code('b'));
  assert.ok(long.tokens <= 4000);
  assert.equal(long.usedOthers.length + long.usedIndices.length, 25, 'the later place keeps the block');
  const codeShown = long.prompt.slice(long.prompt.indexOf('<|file_sep|>app/long.py'));
  assert.ok(
    estimateTokens(codeShown) >= 1000,
    `the later place's code keeps the room the block leaves (${estimateTokens(codeShown)} tokens)`,
  );
});

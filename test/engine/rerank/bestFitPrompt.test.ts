import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BESTFIT_SYSTEM, bestFitMessages, buildRerankQuery, chatMlPrompt, labelOf } from '../../../src/engine/rerank/bestFitPrompt';
import { labelScores, parseBestFitAnswer } from '../../../src/engine/rerank/bestFitAnswer';

const context = Array.from({ length: 35 }, (_, i) => `line_${i + 1} = ${i + 1}`).join('\n') + '\nresult = make_repo(';

const window = [
  { id: 'a', text: '# pkg/repo.py\ndef make_repo(path):\n    return Repo(path)' },
  { id: 'b', text: '# pkg/util.py\nclass Cache:\n    size = 10' },
  { id: 'c', text: '# pkg/io.py\ndef read_text(path):\n    return open(path).read()' },
];

void test('the rerank query is the file path and the last 30 lines', () => {
  const q = buildRerankQuery('pkg/main.py', context);
  const lines = q.text.split('\n');
  assert.equal(lines[0], '# pkg/main.py');
  assert.equal(lines.length, 31);
  assert.equal(lines[1], 'line_7 = 7');
  assert.equal(lines[30], 'result = make_repo(');
  assert.equal(buildRerankQuery('src/a/B.java', 'int x = 1;').text, '// src/a/B.java\nint x = 1;');
});

void test('golden: the BestFit prompt of CodeRAG Fig. 4 for a fixture window', () => {
  const query = buildRerankQuery('pkg/main.py', 'import pkg.repo\n\nresult = make_repo(');
  const [system, user] = bestFitMessages(query, window);
  assert.equal(system?.role, 'system');
  assert.equal(
    system?.content,
    'A conversation between User and Assistant. The user asks a question, and the Assistant solves it. The assistant provides the user with the answer enclosed within <answer> </answer> tags, i.e., <answer> answer here </answer>.',
  );
  assert.equal(system?.content, BESTFIT_SYSTEM);
  assert.equal(user?.role, 'user');
  assert.equal(
    user?.content,
    `
Which of the retrieved code snippets is most helpful for completing the following code snippet?
the code snippet to be completed:
# pkg/main.py
import pkg.repo

result = make_repo(

the retrieved code snippet(s):
[A]
# pkg/repo.py
def make_repo(path):
    return Repo(path)
[B]
# pkg/util.py
class Cache:
    size = 10
[C]
# pkg/io.py
def read_text(path):
    return open(path).read()

Please provide only the label of the most helpful retrieved code snippet, enclosed in square brackets, within the answer tags. For example, if the code snippet C is the most helpful, the answer should be: <answer>[C]</answer>.
`,
  );
  const raw = chatMlPrompt(bestFitMessages(query, window));
  assert.ok(raw.startsWith('<|im_start|>system\nA conversation'));
  assert.ok(raw.endsWith('<|im_end|>\n<|im_start|>assistant\n'));
});

void test('labels run A..W', () => {
  assert.equal(labelOf(0), 'A');
  assert.equal(labelOf(22), 'W');
  assert.throws(() => labelOf(23), RangeError);
});

void test('answers are parsed strictly', () => {
  assert.deepEqual(parseBestFitAnswer('<answer>[B]</answer>', 3), { kind: 'label', index: 1, label: 'B' });
  assert.deepEqual(parseBestFitAnswer('  <answer>[C]', 3), { kind: 'label', index: 2, label: 'C' });
  assert.deepEqual(parseBestFitAnswer('<answer>[C]</ans', 3), { kind: 'label', index: 2, label: 'C' }, 'cut short by the token limit');
  assert.deepEqual(parseBestFitAnswer('<think>\n\n</think>\n\n<answer>[A]</answer>\n', 3), { kind: 'label', index: 0, label: 'A' });
  assert.deepEqual(parseBestFitAnswer('<answer>[D]</answer>', 3), { kind: 'outsideWindow', label: 'D' });
  for (const bad of [
    '[B]',
    'B',
    '<answer>B</answer>',
    '<answer>[b]</answer>',
    '<answer>[B]</answer> because',
    'The answer is <answer>[B]</answer>',
    '<think>B is best</think><answer>[B]</answer>',
    '<answer>[AB]</answer>',
    '<answer>[B]</answer><answer>[C]</answer>',
    '<answer>[B]</answers',
    '<answer>[B] </answer>x',
    '',
  ]) {
    assert.deepEqual(parseBestFitAnswer(bad, 3), { kind: 'unparsable' }, bad);
  }
});

void test('label scores come from the top logprobs at the label token', () => {
  const tokens = [
    { token: '<answer>', logprob: 0 },
    { token: '[', logprob: 0 },
    {
      token: 'B',
      logprob: Math.log(0.6),
      top: [
        { token: 'B', logprob: Math.log(0.6) },
        { token: 'A', logprob: Math.log(0.3) },
        { token: 'Q', logprob: Math.log(0.05) },
      ],
    },
    { token: ']</', logprob: 0 },
  ];
  const scores = labelScores(tokens, 3)!;
  assert.ok(Math.abs(scores[0]! - 0.3) < 1e-9 && Math.abs(scores[1]! - 0.6) < 1e-9 && scores[2] === 0);
  // A merged `[B` token: alternatives share its `[` prefix.
  const merged = [
    { token: '<answer>', logprob: 0 },
    {
      token: '[B',
      logprob: -0.1,
      top: [
        { token: '[B', logprob: -0.1 },
        { token: '[C', logprob: -2.5 },
        { token: ' [A', logprob: -3 },
      ],
    },
    { token: ']', logprob: 0 },
  ];
  const s2 = labelScores(merged, 3)!;
  assert.equal(s2[0], 0);
  assert.ok(s2[1]! > s2[2]! && s2[2]! > 0);
  assert.equal(labelScores([{ token: 'nothing', logprob: 0 }], 3), undefined);
});

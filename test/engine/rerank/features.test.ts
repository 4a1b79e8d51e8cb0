import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRerankQuery } from '../../../src/engine/rerank/bestFitPrompt';
import {
  candidateFeatures,
  FEATURE_COUNT,
  FEATURE_NAMES,
  featureMatrix,
  queryFeatures,
  type FeatureDoc,
} from '../../../src/engine/rerank/features';
import { distillCase, RecordingReranker, seedOf } from '../../../src/bench/distillCases';
import { bestFitRerank } from '../../../src/engine/rerank/bestFitRerank';
import type { Candidate } from '../../../src/engine/retrieve/types';
import type { BenchCase } from '../../../src/bench/cases';

function candidate(
  path: string,
  name: string,
  qualifiedName: string,
  kind: Candidate['snippet']['kind'],
  text: string,
  extra: Partial<Candidate> = {},
): Candidate {
  return {
    snippet: { id: `${path}#${qualifiedName}`, kind, path, name, qualifiedName, range: { startLine: 1, endLine: 3 }, text },
    paths: ['sparse'],
    scores: { sparse: 0.4 },
    ranks: { sparse: 2 },
    ...extra,
  };
}

const doc = (c: Candidate): FeatureDoc => ({ id: c.snippet.id, text: c.snippet.text, candidate: c });
const value = (f: Float32Array, name: (typeof FEATURE_NAMES)[number]): number => f[FEATURE_NAMES.indexOf(name)]!;

const prefix = [
  'from shop.repo import Repository',
  'from shop import util',
  '',
  'def main():',
  '    repo = Repository.open(path)',
  '    items = util.load_items(repo)',
  '    total = repo.get_to',
].join('\n');
const query = buildRerankQuery('app/main.py', prefix);

void test('features say which candidate defines what the unfinished line uses or is typing', () => {
  const q = queryFeatures(query);
  assert.equal(q.typed, 'get_to');
  const getTotal = candidateFeatures(
    q,
    doc(
      candidate(
        'shop/repo.py',
        'get_total',
        'Repository.get_total',
        'classFunction',
        '# shop/repo.py\nclass Repository:\n    def get_total(self) -> int: ...',
      ),
    ),
  );
  const loadItems = candidateFeatures(
    q,
    doc(candidate('shop/util.py', 'load_items', 'load_items', 'function', '# shop/util.py\ndef load_items(repo): ...')),
  );
  const unrelated = candidateFeatures(
    q,
    doc(candidate('shop/mail.py', 'send', 'Mailer.send', 'classFunction', '# shop/mail.py\nclass Mailer:\n    def send(self, to): ...')),
  );
  assert.equal(getTotal.length, FEATURE_COUNT);
  assert.equal(value(getTotal, 'typed_prefix_of_name'), 1);
  assert.equal(value(getTotal, 'owner_in_query'), 1, 'its class Repository appears in the code');
  assert.equal(value(getTotal, 'module_in_query'), 1, 'its module repo appears in the code');
  assert.equal(value(getTotal, 'kind_class_function'), 1);
  assert.equal(value(loadItems, 'name_in_last3'), 1);
  assert.equal(value(loadItems, 'name_in_last_line'), 0);
  assert.equal(value(loadItems, 'typed_prefix_of_name'), 0);
  assert.equal(value(unrelated, 'name_in_query'), 0);
  assert.equal(value(unrelated, 'owner_in_query'), 0);
  assert.equal(value(unrelated, 'rank_sparse'), Math.fround(1 / 3));
  assert.equal(value(unrelated, 'path_dense'), 0);
  assert.equal(value(unrelated, 'lang_python'), 1);
  assert.ok(value(getTotal, 'query_jaccard') > value(unrelated, 'query_jaccard'));
  for (const f of [getTotal, loadItems, unrelated]) assert.ok(f.every((v) => Number.isFinite(v)));
});

void test('context features see the whole code before the cursor: how recently and how often a name was used, what was imported, what the enclosing function uses', () => {
  const filler = Array.from({ length: 40 }, (_, i) => `    step_${i}()`);
  const context = [
    'from shop.repo import (',
    '    Repository,',
    '    Archive,',
    ')',
    'import shop.mail',
    '',
    'def setup():',
    '    shop.mail.configure()',
    '    log_event("start")',
    ...filler,
    '',
    'def main(path):',
    '    repo = Repository.open(path)',
    '    log_event("opened")',
    '    ',
  ].join('\n');
  const q = queryFeatures(buildRerankQuery('app/main.py', context));
  const logEvent = candidateFeatures(q, doc(candidate('shop/log.py', 'log_event', 'log_event', 'function', 'def log_event(msg): ...')));
  const open = candidateFeatures(
    q,
    doc(candidate('shop/repo.py', 'open', 'Repository.open', 'classFunction', 'class Repository:\n    def open(cls, path): ...')),
  );
  const archive = candidateFeatures(q, doc(candidate('shop/repo.py', 'Archive', 'Archive', 'class', 'class Archive: ...')));
  const send = candidateFeatures(q, doc(candidate('shop/mail.py', 'send', 'send', 'function', 'def send(to): ...')));
  const testHelper = candidateFeatures(
    q,
    doc(candidate('tests/test_repo.py', 'make_repo', 'make_repo', 'function', 'def make_repo(): ...')),
  );
  assert.equal(value(logEvent, 'name_recency'), Math.fround(1 / (1 + 1 / 5)), 'used one line above the cursor line');
  assert.equal(value(logEvent, 'name_count_context_log'), Math.fround(Math.log1p(2) / 4), 'used twice, once beyond the 30-line query');
  assert.equal(value(logEvent, 'name_in_query'), 1);
  assert.equal(value(logEvent, 'name_in_scope'), 1, 'main() calls it');
  assert.equal(value(open, 'owner_recency'), Math.fround(1 / (1 + 2 / 5)));
  assert.equal(value(open, 'owner_imported'), 1, 'Repository is imported by name, inside parentheses');
  assert.equal(value(open, 'owner_in_scope'), 1);
  assert.equal(value(open, 'name_imported'), 0);
  assert.equal(value(archive, 'name_imported'), 1);
  assert.equal(value(archive, 'name_count_context_log'), 0, 'an import is not a use');
  assert.equal(value(archive, 'name_recency'), 0);
  assert.equal(value(send, 'name_recency'), 0, 'never used');
  assert.ok(value(send, 'module_recency') > 0, 'its module mail is used in setup()');
  assert.ok(value(send, 'module_recency') < value(open, 'owner_recency'));
  assert.equal(value(send, 'test_candidate'), 0);
  assert.equal(value(testHelper, 'test_candidate'), 1);
  assert.equal(value(testHelper, 'test_query'), 0);
});

void test('the enclosing Java method: names used in it are in scope, names used in an earlier method are not', () => {
  const context = [
    'import org.shop.Repository;',
    'public class Main {',
    '    void setup() {',
    '        Mailer.configure();',
    '    }',
    '    public static void main(final String[] args) throws IOException {',
    '        if (args.length > 0) {',
    '            Repository repo = Repository.open(args[0]);',
    '            ',
  ].join('\n');
  const q = queryFeatures(buildRerankQuery('src/org/shop/MainTest.java', context));
  const open = candidateFeatures(
    q,
    doc(candidate('src/org/shop/Repository.java', 'open', 'Repository.open', 'classFunction', 'public static Repository open(String p);')),
  );
  const configure = candidateFeatures(
    q,
    doc(candidate('src/org/shop/Mailer.java', 'configure', 'Mailer.configure', 'classFunction', 'public static void configure();')),
  );
  assert.equal(value(open, 'owner_in_scope'), 1);
  assert.equal(value(configure, 'owner_in_scope'), 0);
  assert.ok(value(configure, 'owner_recency') > 0);
  assert.equal(value(open, 'test_query'), 1);
  assert.equal(value(open, 'lang_python'), 0);
});

void test('the merged retrieval position is a feature: from the rerank stage, else the row of the batch', () => {
  const a = doc(candidate('shop/a.py', 'alpha', 'alpha', 'function', 'def alpha(): ...'));
  const b = doc(candidate('shop/b.py', 'beta', 'beta', 'function', 'def beta(): ...'));
  const byRow = featureMatrix(query, [a, b]);
  assert.equal(byRow[FEATURE_NAMES.indexOf('merged_position_inv')], 1);
  assert.equal(byRow[FEATURE_COUNT + FEATURE_NAMES.indexOf('merged_position_inv')], 0.5);
  const placed = featureMatrix(query, [{ ...b, position: 7 }]);
  assert.equal(placed[FEATURE_NAMES.indexOf('merged_position_inv')], 1 / 8);
  assert.equal(placed[FEATURE_NAMES.indexOf('merged_position')], Math.fround(7 / 30));
});

void test('features work without retrieval metadata (a plain snippet) and on empty input', () => {
  const m = featureMatrix(query, [
    { id: 'a', text: 'def get_total(self):\n    return 1' },
    { id: 'b', text: '' },
  ]);
  assert.equal(m.length, 2 * FEATURE_COUNT);
  assert.equal(m[FEATURE_NAMES.indexOf('typed_prefix_of_name')], 1, 'the name is read from the def line');
  assert.ok(m.every((v) => Number.isFinite(v)));
  const empty = featureMatrix(buildRerankQuery('A.java', ''), [{ id: 'x', text: 'class A {}' }]);
  assert.equal(empty[FEATURE_NAMES.indexOf('lang_python')], 0);
  assert.ok(empty.every((v) => Number.isFinite(v)));
});

void test('distillation data from a case: the recorder keeps retrieval order; kept windows pick the candidate holding the definitions', async () => {
  const cands = [
    candidate('shop/mail.py', 'send', 'Mailer.send', 'classFunction', '# shop/mail.py\nclass Mailer:\n    def send(self, to): ...'),
    candidate(
      'shop/repo.py',
      'get_total',
      'Repository.get_total',
      'classFunction',
      '# shop/repo.py\nclass Repository:\n    def get_total(self) -> int: ...',
      { scores: { dense: 0.2 }, ranks: { dense: 9 }, paths: ['dense'] },
    ),
    candidate('shop/util.py', 'load_items', 'load_items', 'function', '# shop/util.py\ndef load_items(repo): ...'),
    ...Array.from({ length: 8 }, (_, i) =>
      candidate('shop/other.py', `noise${i}`, `noise${i}`, 'function', `# shop/other.py\ndef noise${i}(): ...`),
    ),
  ];
  const docs = cands.map((c) => ({ ...doc(c), path: c.snippet.path }));
  const recorder = new RecordingReranker();
  const result = await bestFitRerank(query, docs, recorder, { topU: 3 }, new AbortController().signal);
  assert.deepEqual(
    result.trace.after,
    docs.slice(0, 3).map((d) => d.id),
    'recording does not reorder',
  );
  const recorded = recorder.take();
  assert.ok(recorded);
  assert.equal(recorded.docs.length, 11);
  assert.equal(recorder.take(), undefined);

  const c: BenchCase = {
    prompt: prefix,
    groundtruth: 'tal()',
    right_context: '',
    metadata: {
      task_id: 'shop/1',
      repository: 'shop',
      file: 'app/main.py',
      lang: 'python',
      crossfile_defs: [{ name: 'get_total', kind: 'classFunction', file: 'shop/repo.py', line: 3 }],
    },
  } as BenchCase;
  const { record, subsets } = await distillCase(c, recorded, { seed: seedOf('shop/1') }, new AbortController().signal);
  assert.deepEqual(record.hits, [0, 1, ...new Array<number>(9).fill(0)]);
  assert.equal(record.features.length, 11);
  assert.equal(record.features[0]!.length, FEATURE_COUNT);
  assert.deepEqual(record.feature_names, FEATURE_NAMES);
  assert.ok(subsets > 0);
  assert.ok(record.windows.length > 0 && record.windows.length < subsets, 'windows without the definition are not kept');
  for (const w of record.windows) {
    assert.ok(w.members.includes(1));
    assert.equal(w.members[w.choice], 1);
    assert.equal(w.votes, 5);
  }
  const again = await distillCase(c, recorded, { seed: seedOf('shop/1') }, new AbortController().signal);
  assert.deepEqual(again.record.windows, record.windows, 'the subsets are reproducible per case');
});

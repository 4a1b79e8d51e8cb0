// Dot cases: the cursor right after the `.` of a member that is a cross-file
// definition; NIM and the unknown member rate in `eval score`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeSource } from '../../src/engine/kb/scan';
import { caseText, dotColumn } from '../../src/bench/mine';
import { firstIdentifier, nextIdentifierMatch, scorePredictions } from '../../src/bench/score';
import { formatPrediction, validatePrediction, type BenchCase } from '../../src/bench/cases';
import { fixturesDir } from '../helpers/paths';
import { mineFixture } from './mineHelpers';

void test('dotColumn: after the dot of the first member use of a cross-file definition, code only', () => {
  const defs = [{ name: 'add', kind: 'classFunction', file: 'm.py', line: 1 }];
  assert.equal(dotColumn('    cart.add(p)', defs), 9);
  assert.equal(dotColumn('    x = make().add(p)', defs), 15);
  assert.equal(dotColumn('    add(p)', defs), undefined, 'not a dereference');
  assert.equal(dotColumn('    print("cart.add") # cart.add', defs), undefined, 'strings and comments');
});

for (const [name, lang] of [
  ['pyshop', 'python'],
  ['javashop', 'java'],
] as const) {
  void test(`${name}: dot mining puts the cursor right after a dot, the ground truth starting with a cross-file member; each case reassembles its file`, async () => {
    const result = await mineFixture(join(fixturesDir, name), name, lang, 'dot');
    assert.ok(result.cases.length > 0, 'some dot cases');
    for (const c of result.cases) {
      assert.ok(c.prompt.endsWith('.'), `${c.metadata.task_id}: prompt ends at the dot`);
      const col = c.metadata.groundtruth_start_col!;
      assert.equal(c.prompt.length - (c.prompt.lastIndexOf('\n') + 1), col);
      assert.ok(
        (c.metadata.crossfile_defs ?? []).some((d) => d.name === firstIdentifier(c.groundtruth)),
        `${c.metadata.task_id}: ${c.groundtruth}`,
      );
      const decoded = decodeSource(readFileSync(join(fixturesDir, name, c.metadata.file)));
      assert.ok(decoded.ok);
      assert.equal(c.prompt + c.groundtruth + '\n' + (c.right_context ?? ''), caseText(decoded.text));
    }
  });
}

void test('NIM compares first identifiers; the unknown member rate counts predictions that say', () => {
  assert.equal(nextIdentifierMatch('add(p)', 'add(product)'), true);
  assert.equal(nextIdentifierMatch('add_items(p)', 'add(product)'), false);
  assert.equal(nextIdentifierMatch('', ''), false);
  const meta = (id: string): BenchCase['metadata'] => ({ task_id: id, repository: 'r', file: 'a.py', lang: 'python' });
  const cases: BenchCase[] = [
    { prompt: 'cart.', groundtruth: 'add(p)', metadata: meta('1') },
    { prompt: 'cart.', groundtruth: 'total', metadata: meta('2') },
  ];
  const report = scorePredictions(cases, [
    { task_id: '1', prediction: 'add(x)', contexts: [], timings_ms: {}, unknown_member: false },
    { task_id: '2', prediction: 'totl', contexts: [], timings_ms: {}, unknown_member: true },
  ]);
  assert.equal(report.overall.nim, 50);
  assert.equal(report.overall.unknown_member_rate, 0.5);
  assert.equal(scorePredictions(cases, []).overall.unknown_member_rate, null);
});

void test('a prediction keeps unknown_member through its file line', () => {
  const p = { task_id: 't', prediction: 'x', contexts: [], timings_ms: {}, unknown_member: true };
  assert.deepEqual(validatePrediction(JSON.parse(formatPrediction(p))), p);
  assert.equal(validatePrediction({ ...p, unknown_member: 'yes' }), '"unknown_member" must be a boolean when present');
});

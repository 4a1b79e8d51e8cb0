// What the editor reports about a shown suggestion: accepted with Tab, accepted word by word,
// typed through, typed over, dismissed by moving away, replaced by another suggestion — each
// reported once, with the characters of the suggestion that ended in the document.
import test from 'node:test';
import assert from 'node:assert/strict';
import { OutcomeTracker, outcomeSender, type OutcomeReport } from '../../src/client/outcomeTracker';

function tracker(): { t: OutcomeTracker; reports: OutcomeReport[] } {
  const reports: OutcomeReport[] = [];
  return { t: new OutcomeTracker((r) => reports.push(r)), reports };
}

const insert = (at: number, text: string) => ({ rangeOffset: at, rangeLength: 0, text });

void test('Tab: the accept command reports the whole suggestion once', () => {
  const { t, reports } = tracker();
  t.shown('t1', 'file:///a.py', 100, 'cart.add(item)');
  t.edited('file:///a.py', [insert(100, 'cart.add(item)')]);
  t.accepted('t1');
  t.cursorAt('file:///a.py', 114);
  assert.deepEqual(reports, [{ traceId: 't1', outcome: 'accepted', acceptedChars: 14, shownChars: 14 }]);
});

void test('the accept command alone (its edit not yet seen) reports accepted', () => {
  const { t, reports } = tracker();
  t.shown('t1', 'u', 10, 'return total');
  t.accepted('t1');
  assert.deepEqual(
    reports.map((r) => [r.outcome, r.acceptedChars]),
    [['accepted', 12]],
  );
});

void test('typing through, then typing something else: partly accepted, the typed-through part counts', () => {
  const { t, reports } = tracker();
  t.shown('t2', 'u', 50, 'self.total = 0');
  for (const [i, ch] of [...'self.'].entries()) t.edited('u', [insert(50 + i, ch)]);
  t.shown('t2', 'u', 55, 'total = 0'); // served from the typing-through cache: same trace
  assert.equal(reports.length, 0);
  t.edited('u', [insert(55, 'x')]);
  assert.deepEqual(reports, [{ traceId: 't2', outcome: 'partial', acceptedChars: 5, shownChars: 14 }]);
});

void test('typed over from the first character: rejected', () => {
  const { t, reports } = tracker();
  t.shown('t3', 'u', 0, 'print(x)');
  t.edited('u', [insert(0, 'y')]);
  assert.deepEqual(
    reports.map((r) => r.outcome),
    ['rejected'],
  );
});

void test('dismissed by moving the cursor away: rejected; edits elsewhere before it move it', () => {
  const { t, reports } = tracker();
  t.shown('t4', 'u', 40, 'foo()');
  t.edited('u', [insert(5, 'abc')]); // before the suggestion: it moves to 43
  t.edited('u', [insert(200, 'zzz')]); // after it: irrelevant
  t.cursorAt('u', 43);
  assert.equal(reports.length, 0);
  t.cursorAt('u', 10);
  assert.deepEqual(
    reports.map((r) => [r.traceId, r.outcome, r.acceptedChars]),
    [['t4', 'rejected', 0]],
  );
});

void test('word-by-word accept, then away: partial; backspace takes characters back', () => {
  const { t, reports } = tracker();
  t.shown('t5', 'u', 0, 'items.append(entry)');
  t.edited('u', [insert(0, 'items.')]);
  t.edited('u', [insert(6, 'append')]);
  t.edited('u', [{ rangeOffset: 11, rangeLength: 1, text: '' }]); // backspace: 'items.appen'
  t.cursorAt('u', 11);
  assert.equal(reports.length, 0);
  t.left('u');
  assert.deepEqual(
    reports.map((r) => [r.outcome, r.acceptedChars, r.shownChars]),
    [['partial', 11, 19]],
  );
});

void test('another suggestion ends the one shown before; a second end reports nothing', () => {
  const { t, reports } = tracker();
  t.shown('t6', 'u', 0, 'a = 1');
  t.shown('t7', 'u', 0, 'b = 2');
  t.accepted('t6');
  t.flush();
  t.flush();
  assert.deepEqual(
    reports.map((r) => [r.traceId, r.outcome]),
    [
      ['t6', 'rejected'],
      ['t7', 'rejected'],
    ],
  );
});

void test('typing the whole suggestion by hand counts as accepted; edits of other documents are ignored', () => {
  const { t, reports } = tracker();
  t.shown('t8', 'u', 3, 'ok');
  t.edited('other', [insert(3, 'zz')]);
  t.edited('u', [insert(3, 'o')]);
  t.edited('u', [insert(4, 'k')]);
  assert.deepEqual(
    reports.map((r) => r.outcome),
    ['accepted'],
  );
});

void test('an auto-closed bracket typed over continues the suggestion', () => {
  const { t, reports } = tracker();
  t.shown('t9', 'u', 0, 'f(x)');
  t.edited('u', [insert(0, 'f')]);
  t.edited('u', [insert(1, '()')]); // the editor closes the bracket; the cursor stays between
  t.edited('u', [insert(2, 'x')]);
  t.edited('u', [{ rangeOffset: 3, rangeLength: 1, text: ')' }]);
  assert.deepEqual(
    reports.map((r) => [r.outcome, r.acceptedChars]),
    [['accepted', 4]],
  );
});

void test('learning turned off in the workspace: outcomes are followed but nothing is sent', () => {
  const sent: OutcomeReport[] = [];
  const state = { enabled: false };
  const t = new OutcomeTracker(
    outcomeSender(
      () => state.enabled,
      (r) => sent.push(r),
    ),
  );
  t.shown('a', 'u', 0, 'x = 1');
  t.accepted('a');
  assert.equal(sent.length, 0);
  state.enabled = true;
  t.shown('b', 'u', 0, 'y = 2');
  t.flush();
  assert.deepEqual(
    sent.map((r) => [r.traceId, r.outcome]),
    [['b', 'rejected']],
  );
});

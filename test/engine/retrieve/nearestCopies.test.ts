// The twocopies fixture: with two copies of a source tree the edited file gets its own
// copy (Java and Python), and a Java type used only in a generic argument or a cast brings its
// class summary; dropFarCopies on the merged candidates.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataflowRetriever } from '../../../src/engine/retrieve/dataflow/dataflowRetrieve';
import { analyseUnfinished } from '../../../src/engine/flow/unfinished';
import { nearestCopy } from '../../../src/engine/kb/symbolTable';
import { lastLinesQuery } from '../../../src/engine/query/lastLinesQuery';
import { mergeCandidates } from '../../../src/engine/retrieve/mergeCandidates';
import { dropFarCopies } from '../../../src/engine/retrieve/nearestCopies';
import type { PathTrace, ScoredSnippet } from '../../../src/engine/retrieve/types';
import { knowledgeBase, parsers, unfinishedAt } from './retrieveFixtures';
import { fixturesDir } from '../../helpers/paths';

const ROOT = join(fixturesDir, 'twocopies');
interface Expected {
  ownCopy: { file: string; line: number; expected: string; never: string }[];
  typeOnlyInGenericOrCast: { file: string; line: number; expected: string }[];
}
const expected = JSON.parse(readFileSync(join(fixturesDir, 'twocopies.expected.json'), 'utf8')) as Expected;

async function dataflowResults(file: string, line: number): Promise<ScoredSnippet[]> {
  const kb = await knowledgeBase(ROOT);
  const df = new DataflowRetriever(kb, await parsers());
  try {
    const unfinished = unfinishedAt('twocopies', file, line);
    const r = await df.retrieve({ file: unfinished, query: lastLinesQuery(unfinished.prefix, 10), topJ: 15 }, new AbortController().signal);
    return r.results;
  } finally {
    df.dispose();
  }
}

for (const c of expected.ownCopy) {
  void test(`twocopies: ${c.file} line ${c.line} gets its own copy (${c.expected}), never ${c.never}`, async () => {
    const results = await dataflowResults(c.file, c.line);
    const ids = results.map((r) => r.snippet.id);
    const at = ids.indexOf(c.expected);
    assert.ok(at >= 0 && at < 5, `expected ${c.expected} in the top 5, got:\n${ids.join('\n')}`);
    assert.ok(!results.some((r) => r.snippet.path === c.never), `the other copy was retrieved:\n${ids.join('\n')}`);
  });
}

for (const c of expected.typeOnlyInGenericOrCast) {
  void test(`twocopies: ${c.file} line ${c.line}, a type used only in a generic argument or a cast, retrieves its class summary`, async () => {
    const ids = (await dataflowResults(c.file, c.line)).map((r) => r.snippet.id);
    const at = ids.indexOf(c.expected);
    assert.ok(at >= 0 && at < 5, `expected ${c.expected} in the top 5, got:\n${ids.join('\n')}`);
  });
}

void test('javaTypeRefs: generic arguments and casts of the enclosing class, nearest first, JDK types left out, other bodies folded away', async () => {
  const text = readFileSync(join(ROOT, 'lib/src/main/java/org/acme/app/Shelf.java'), 'utf8');
  const prefix = text.split('\n').slice(0, 29).join('\n') + '\n';
  const { flow } = analyseUnfinished(await parsers(), 'lib/src/main/java/org/acme/app/Shelf.java', 'java', prefix);
  const names = flow.typeRefs.map((r) => r.chain.map((s) => s.name).join('.'));
  // `(Widget) first` on line 29 is nearer than `List<Widget>` on line 19 (List, Object: JDK); the
  // body of title() (Strings.isBlank) is folded by parseableText, so Strings is not among them.
  assert.deepEqual(names, ['Widget']);
});

void test('nearestCopy: the longest shared path prefix, then outside test, build and vendored trees', () => {
  const copies = [{ path: 'legacy/src/a/B.java' }, { path: 'lib/src/a/B.java' }];
  assert.equal(nearestCopy(copies, 'lib/src/c/D.java')?.path, 'lib/src/a/B.java');
  assert.equal(nearestCopy(copies, 'legacy/src/c/D.java')?.path, 'legacy/src/a/B.java');
  assert.equal(nearestCopy([{ path: 'build/lib/p/m.py' }, { path: 'p/m.py' }], 'app.py')?.path, 'p/m.py');
});

void test("dropFarCopies / mergeCandidates: a definition found in two source trees stays only in the edited file's tree; code windows and equally near copies stay", () => {
  const snip = (path: string, name: string, kind: 'classFunction' | 'class' = 'classFunction'): ScoredSnippet => ({
    score: 1,
    snippet: {
      id: `${path}#${kind}:Strings.${name}`,
      kind,
      path,
      name,
      qualifiedName: `Strings.${name}`,
      range: { startLine: 0, endLine: 1 },
      text: name,
    },
  });
  const window = (path: string): ScoredSnippet => ({
    score: 1,
    snippet: {
      id: `${path}#window:0-10`,
      kind: 'function',
      path,
      name: 'w',
      qualifiedName: 'w',
      range: { startLine: 0, endLine: 10 },
      text: 'w',
    },
  });
  const sparse = [
    snip('legacy/src/org/acme/util/Strings.java', 'shout'),
    snip('lib/src/org/acme/util/Strings.java', 'isBlank'),
    window('legacy/src/org/acme/util/Strings.java'),
  ];
  const dense = [snip('lib/src/org/acme/util/Strings.java', 'shout'), snip('legacy/src/org/acme/util/Strings.java', 'isBlank')];
  const [s, d] = dropFarCopies([sparse, dense], 'lib/src/org/acme/app/Shelf.java');
  assert.deepEqual(
    s!.map((r) => r.snippet.id),
    ['lib/src/org/acme/util/Strings.java#classFunction:Strings.isBlank', 'legacy/src/org/acme/util/Strings.java#window:0-10'],
  );
  assert.deepEqual(
    d!.map((r) => r.snippet.id),
    ['lib/src/org/acme/util/Strings.java#classFunction:Strings.shout'],
  );
  // Equally near (the edited file is in neither tree): both stay.
  const [both] = dropFarCopies([dense], 'app/Main.java');
  assert.equal(both!.length, 2);
  // Same class name and folder in two packages: not copies.
  const [unrelated] = dropFarCopies(
    [[snip('lib/src/org/one/util/Strings.java', 'shout'), snip('lib/src/org/two/util/Strings.java', 'shout')]],
    'lib/src/org/one/App.java',
  );
  assert.equal(unrelated!.length, 2);
  const trace = (path: PathTrace['path'], results: ScoredSnippet[]): PathTrace => ({
    path,
    status: 'ok',
    elapsedMs: 1,
    budgetMs: 100,
    results,
  });
  const merged = mergeCandidates([trace('sparse', sparse), trace('dense', dense)], 10, 'lib/src/org/acme/app/Shelf.java');
  assert.ok(merged.every((c) => !c.snippet.id.includes('legacy/') || c.snippet.id.includes('#window:')));
});

// The server's learning from suggestion outcomes: rewards reach the arm that produced the
// suggestion, once; the state survives a restart (a new feature over the same cache folder);
// reset forgets it; learning turned off learns nothing; a damaged saved state starts afresh.
import test from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { LinUcb } from '../../src/engine/similar/linUcb';
import { SIMILAR_ARMS, type SimilarArm } from '../../src/engine/similar/types';
import type { StageOutcomes } from '../../src/engine/pipeline';
import { LearningFeature, rewardOf } from '../../src/server/LearningFeature';
import { LEARNABLE_KEPT } from '../../src/server/learningStore';
import { mergeConfig } from '../../src/server/config';
import { tempDir } from '../helpers/paths';
import { setLogSink } from '../../src/engine/util/logger';

const DIM = 3;

function newBandit(saved?: unknown): { bandit: LinUcb<SimilarArm>; error?: string } {
  if (saved === undefined) return { bandit: new LinUcb<SimilarArm>(SIMILAR_ARMS, DIM) };
  try {
    return { bandit: LinUcb.fromJSON<SimilarArm>(saved, SIMILAR_ARMS, DIM) };
  } catch (e) {
    return { bandit: new LinUcb<SimilarArm>(SIMILAR_ARMS, DIM), error: String(e) };
  }
}

type Outcomes = Pick<StageOutcomes, 'similar' | 'gate'>;

/** A suggestion's similar-code outcome (its trace id is the map's key). */
function trace(_id: string, arm: SimilarArm, features: number[], chosenBy: 'bandit' | 'fixed' = 'bandit'): Outcomes {
  return { similar: { arm, chosenBy, features, perspectives: [], snippets: [] } };
}

/** A learning feature that was told of the suggestions in `made` (made in `root`), as the completion feature tells it. */
function feature(cacheRoot: string, made: Map<string, Outcomes>, root = '/repo/a'): LearningFeature {
  const learning = new LearningFeature({ cacheRoot: () => cacheRoot, newBandit });
  for (const [id, outcomes] of made) learning.remember(id, root, outcomes);
  return learning;
}

void test('rewards: accepted 1, partly accepted the share of characters, rejected 0, nonsense 0', () => {
  assert.equal(rewardOf({ outcome: 'accepted', acceptedChars: 3, shownChars: 10 }), 1);
  assert.equal(rewardOf({ outcome: 'partial', acceptedChars: 3, shownChars: 12 }), 0.25);
  assert.equal(rewardOf({ outcome: 'rejected', acceptedChars: 0, shownChars: 12 }), 0);
  assert.equal(rewardOf({ outcome: 'partial', acceptedChars: 99, shownChars: 0 }), 0);
  assert.equal(rewardOf({ outcome: 'partial', acceptedChars: 20, shownChars: 10 }), 1);
});

void test('an outcome updates the arm that produced the suggestion, once; the state survives a restart', async () => {
  const cache = tempDir('learning-').path;
  const traces = new Map([
    ['t1', trace('t1', 'summary', [1, 0.5, 0.2])],
    ['t2', trace('t2', 'lexical', [1, 0.1, 0.9])],
  ]);
  const a = feature(cache, traces);
  const before = (await a.banditFor('/repo/a')).score('summary', [1, 0.5, 0.2]);
  assert.equal(a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 9, shownChars: 9 }), 1);
  assert.equal(
    a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 9, shownChars: 9 }),
    undefined,
    'a second outcome of the same suggestion is not learned',
  );
  assert.equal(a.onOutcome({ traceId: 't2', outcome: 'rejected', acceptedChars: 0, shownChars: 9 }), 0);
  assert.deepEqual((await a.banditFor('/repo/a')).pullCounts(), { lexical: 1, hypothetical: 0, summary: 1, none: 0 });
  assert.ok((await a.banditFor('/repo/a')).score('summary', [1, 0.5, 0.2]) > before);
  assert.equal(a.banditReward('t1'), 1, 'Explain shows the reward');
  await a.shutdown();
  const b = feature(cache, new Map());
  assert.deepEqual((await b.banditFor('/repo/a')).pullCounts(), { lexical: 1, hypothetical: 0, summary: 1, none: 0 });
  assert.equal(
    (await b.banditFor('/repo/a')).score('summary', [1, 0.5, 0.2]),
    (await a.banditFor('/repo/a')).score('summary', [1, 0.5, 0.2]),
  );
  assert.deepEqual(
    (await b.banditFor('/repo/other')).pullCounts(),
    { lexical: 0, hypothetical: 0, summary: 0, none: 0 },
    'state is per workspace folder',
  );
});

void test('reset forgets memory and saved state', async () => {
  const cache = tempDir('learning-reset-').path;
  const traces = new Map([['t1', trace('t1', 'hypothetical', [1, 0, 1])]]);
  const a = feature(cache, traces);
  await a.banditFor('/repo/a');
  a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 4, shownChars: 4 });
  await a.save();
  assert.equal(readdirSync(join(cache, 'learning')).length, 1);
  assert.equal(a.reset(), 1);
  assert.equal(existsSync(join(cache, 'learning')), false);
  assert.deepEqual((await a.banditFor('/repo/a')).pullCounts(), { lexical: 0, hypothetical: 0, summary: 0, none: 0 });
  await a.shutdown();
  assert.deepEqual((await feature(cache, new Map()).banditFor('/repo/a')).pullCounts(), {
    lexical: 0,
    hypothetical: 0,
    summary: 0,
    none: 0,
  });
});

void test('a similar-code mode other than the bandit learns nothing; fixed choices and unknown traces are not learned', async () => {
  const cache = tempDir('learning-off-').path;
  const traces = new Map([
    ['t1', trace('t1', 'lexical', [1, 1, 1])],
    ['t2', trace('t2', 'lexical', [1, 1, 1], 'fixed')],
  ]);
  const a = feature(cache, traces);
  a.updateConfig(mergeConfig({ similar: { mode: 'lexical' } }).config);
  assert.equal(a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 1, shownChars: 1 }), undefined);
  a.updateConfig(mergeConfig({ similar: { mode: 'off' } }).config);
  assert.equal(a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 1, shownChars: 1 }), undefined);
  a.updateConfig(mergeConfig({ similar: { mode: 'bandit' } }).config);
  assert.equal(a.onOutcome({ traceId: 't2', outcome: 'accepted', acceptedChars: 1, shownChars: 1 }), undefined);
  assert.equal(a.onOutcome({ traceId: 'gone', outcome: 'accepted', acceptedChars: 1, shownChars: 1 }), undefined);
  assert.equal(a.onOutcome({ traceId: 't1', outcome: 'bogus' as 'accepted', acceptedChars: 1, shownChars: 1 }), undefined);
  assert.equal(a.updates, 0);
  await a.shutdown();
  assert.equal(existsSync(join(cache, 'learning')), false, 'nothing written');
});

void test('a damaged or foreign saved state starts afresh instead of failing', async () => {
  const cache = tempDir('learning-bad-').path;
  const a = feature(cache, new Map([['t1', trace('t1', 'none', [1, 0, 0])]]));
  await a.banditFor('/repo/a');
  a.onOutcome({ traceId: 't1', outcome: 'rejected', acceptedChars: 0, shownChars: 3 });
  await a.save();
  const file = join(cache, 'learning', readdirSync(join(cache, 'learning'))[0]!);
  for (const bad of ['{not json', JSON.stringify({ version: 1, arms: ['x'], dim: DIM, alpha: 0.1, A: {}, b: {} })]) {
    writeFileSync(file, bad);
    const b = feature(cache, new Map());
    assert.deepEqual((await b.banditFor('/repo/a')).pullCounts(), { lexical: 0, hypothetical: 0, summary: 0, none: 0 });
  }
});

void test('a saved state larger than any state can be is not read (a 2 MiB file): a fresh bandit, and the log says why', async () => {
  const cache = tempDir('learning-huge-').path;
  const a = feature(cache, new Map([['t1', trace('t1', 'summary', [1, 0.5, 0.2])]]));
  await a.banditFor('/repo/a');
  a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 3, shownChars: 3 });
  await a.save();
  const file = join(cache, 'learning', readdirSync(join(cache, 'learning'))[0]!);
  // A valid state padded past the cap: were it read, its pull would show.
  writeFileSync(file, JSON.stringify((await a.banditFor('/repo/a')).toJSON()) + ' '.repeat(2 * 2 ** 20));
  const warnings: string[] = [];
  setLogSink((level, _tag, message) => void (level === 'warn' && warnings.push(message)));
  try {
    assert.deepEqual((await feature(cache, new Map()).banditFor('/repo/a')).pullCounts(), {
      lexical: 0,
      hypothetical: 0,
      summary: 0,
      none: 0,
    });
  } finally {
    setLogSink(() => undefined);
  }
  assert.ok(
    warnings.some((w) => /more than a saved state can be \(1 MiB\): starting afresh/.test(w)),
    warnings.join('\n'),
  );
});

void test('a FIFO where the learned state lives is refused at once: a fresh bandit, and the log says why', async () => {
  const cache = tempDir('learning-fifo-').path;
  const a = feature(cache, new Map([['t1', trace('t1', 'summary', [1, 0.5, 0.2])]]));
  await a.banditFor('/repo/a');
  a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 3, shownChars: 3 });
  await a.save();
  const file = join(cache, 'learning', readdirSync(join(cache, 'learning'))[0]!);
  rmSync(file);
  assert.equal(spawnSync('mkfifo', [file]).status, 0);
  const warnings: string[] = [];
  setLogSink((level, _tag, message) => void (level === 'warn' && warnings.push(message)));
  try {
    const hung = Symbol('hung');
    const got = await Promise.race([
      feature(cache, new Map()).banditFor('/repo/a'),
      new Promise((r) => setTimeout(() => r(hung), 3000).unref()),
    ]);
    assert.notEqual(got, hung, 'reading the learned state waited on the FIFO');
    assert.deepEqual((got as LinUcb<SimilarArm>).pullCounts(), { lexical: 0, hypothetical: 0, summary: 0, none: 0 });
  } finally {
    setLogSink(() => undefined);
    // On the old code a thread waits in open() for a writer: give it one so the test process can end.
    try {
      closeSync(openSync(file, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waits: nothing to release.
    }
  }
  assert.ok(
    warnings.some((w) => /named pipe \(FIFO\), not a regular file/.test(w)),
    warnings.join('\n'),
  );
});

void test('learning keeps the last 4,096 completions apart from the explain cache: an older one teaches nothing, a newer one still does', async () => {
  const cache = tempDir('learning-kept-').path;
  const a = feature(cache, new Map());
  await a.banditFor('/repo/a');
  for (let i = 0; i <= LEARNABLE_KEPT; i++) a.remember(`t${i}`, '/repo/a', trace(`t${i}`, 'lexical', [1, 0, 0]));
  assert.equal(a.onOutcome({ traceId: 't0', outcome: 'accepted', acceptedChars: 1, shownChars: 1 }), undefined, 'the oldest was dropped');
  assert.equal(
    a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 1, shownChars: 1 }),
    1,
    'one with 4,095 newer completions still teaches',
  );
  assert.deepEqual((await a.banditFor('/repo/a')).pullCounts(), { lexical: 1, hypothetical: 0, summary: 0, none: 0 });
});

void test('a save that fails after its temp file was written leaves no temp file, keeps the state to save, and the next save writes it', async () => {
  const cache = tempDir('learning-failed-save-').path;
  const a = feature(cache, new Map([['t1', trace('t1', 'summary', [1, 0.5, 0.2])]]));
  await a.banditFor('/repo/a');
  a.onOutcome({ traceId: 't1', outcome: 'accepted', acceptedChars: 3, shownChars: 3 });
  await a.save();
  const folder = join(cache, 'learning');
  const file = join(folder, readdirSync(folder)[0]!);
  // A folder where the state file was: the temp file is written, its rename over the state fails.
  rmSync(file);
  mkdirSync(join(file, 'in-the-way'), { recursive: true });
  a.remember('t2', '/repo/a', trace('t2', 'lexical', [1, 0.1, 0.9]));
  a.onOutcome({ traceId: 't2', outcome: 'accepted', acceptedChars: 3, shownChars: 3 });
  const warnings: string[] = [];
  setLogSink((level, _tag, message) => void (level === 'warn' && warnings.push(message)));
  try {
    await a.save();
  } finally {
    setLogSink(() => undefined);
  }
  assert.ok(
    warnings.some((w) => /saving the learned state failed: cannot write/.test(w)),
    warnings.join('\n'),
  );
  assert.deepEqual(
    readdirSync(folder).filter((n) => n.endsWith('.tmp')),
    [],
    'no temp file left',
  );
  rmSync(file, { recursive: true });
  await a.save();
  assert.deepEqual((await feature(cache, new Map()).banditFor('/repo/a')).pullCounts(), {
    lexical: 1,
    hypothetical: 0,
    summary: 1,
    none: 0,
  });
});

// The show gate learns from what the user does with the suggestions it showed, through the same
// outcome path as ProCC's bandit: rejections move its decision for like suggestions to silence,
// acceptances back; the learned gate survives a restart, per workspace folder; `all` learns
// nothing, a suggestion it kept back is never learned from; reset forgets it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LinUcb } from '../../src/engine/similar/linUcb';
import { SIMILAR_ARMS, type SimilarArm } from '../../src/engine/similar/types';
import type { StageOutcomes } from '../../src/engine/pipeline';
import { LearningFeature } from '../../src/server/LearningFeature';
import { mergeConfig } from '../../src/server/config';
import { GATE_FEATURES, type GateFeatures } from '../../src/engine/gate/features';
import { SHOW_THRESHOLDS } from '../../src/engine/gate/levels';
import { GateModel } from '../../src/engine/gate/model';
import { tempDir } from '../helpers/paths';

const newBandit = (): { bandit: LinUcb<SimilarArm> } => ({ bandit: new LinUcb<SimilarArm>(SIMILAR_ARMS, 3) });

/** A short, fairly confident Java line whose names the prompt holds. */
const FEATURES: GateFeatures = {
  ...(Object.fromEntries(GATE_FEATURES.map((f) => [f, 0])) as GateFeatures),
  bias: 1,
  meanLogprob: -0.3,
  minLogprob: -1,
  logChars: Math.log1p(40),
  blankLine: 1,
  java: 1,
  knownIdentifiers: 1,
};

type Outcomes = Pick<StageOutcomes, 'similar' | 'gate'>;

/** A suggestion's gate outcome (its trace id is the map's key). */
function gateTrace(_id: string, shown = true, features = FEATURES): Outcomes {
  return { gate: { shown, score: 0.3, threshold: 0.22, logprobs: true, learned: 0, features, text: 'x' } };
}

/** A learning feature that was told of the suggestions in `made` (made in `root`), as the completion feature tells it. */
function feature(cacheRoot: string, made: Map<string, Outcomes>, root = '/repo/a'): LearningFeature {
  const learning = new LearningFeature({ cacheRoot: () => cacheRoot, newBandit });
  for (const [id, outcomes] of made) learning.remember(id, root, outcomes);
  return learning;
}

void test('rejected suggestions move the gate to silence for like ones, accepted ones back; the learned gate survives a restart', async () => {
  const cache = tempDir('gate-learning-').path;
  const a = feature(cache, new Map());
  const gate = await a.gateFor('/repo/a');
  const threshold = SHOW_THRESHOLDS.balanced;
  const before = gate.score(FEATURES, true);
  assert.ok(before >= threshold, `the shipped gate shows it (${before})`);
  let n = 0;
  while (gate.score(FEATURES, true) >= threshold && n < 100) {
    a.remember(`r${n}`, '/repo/a', gateTrace(`r${n}`));
    assert.equal(a.onOutcome({ traceId: `r${n}`, outcome: 'rejected', acceptedChars: 0, shownChars: 24 }), 0);
    n++;
  }
  assert.ok(n > 1 && n < 100, `rejections silence it after a few (${n})`);
  const silenced = gate.score(FEATURES, true);
  assert.equal(a.loadedShowGate('/repo/a'), gate, 'the pipeline reads the learned gate');
  await a.shutdown();
  const b = feature(cache, new Map());
  assert.equal((await b.gateFor('/repo/a')).score(FEATURES, true), silenced, 'the learned gate is read back after a restart');
  assert.equal((await b.gateFor('/repo/other')).score(FEATURES, true), before, 'per workspace folder');
  let m = 0;
  while ((await b.gateFor('/repo/a')).score(FEATURES, true) < threshold && m < 100) {
    b.remember(`a${m}`, '/repo/a', gateTrace(`a${m}`));
    assert.equal(b.onOutcome({ traceId: `a${m}`, outcome: 'accepted', acceptedChars: 24, shownChars: 24 }), 1);
    m++;
  }
  assert.ok(m < 100, `acceptances show it again (${m})`);
  assert.equal(b.reset(), 2);
  assert.equal((await b.gateFor('/repo/a')).score(FEATURES, true), before, 'reset: the shipped weights again');
  assert.equal(existsSync(join(cache, 'learning')), false);
});

void test('`all` learns nothing; a suggestion the gate kept back, or of an unknown trace, is not learned from', async () => {
  const cache = tempDir('gate-learning-off-').path;
  const traces = new Map([
    ['t1', gateTrace('t1')],
    ['t2', gateTrace('t2', false)],
  ]);
  const a = feature(cache, traces);
  const gate = await a.gateFor('/repo/a');
  a.updateConfig(mergeConfig({ suggestions: { show: 'all' } }).config);
  assert.equal(a.onOutcome({ traceId: 't1', outcome: 'rejected', acceptedChars: 0, shownChars: 5 }), undefined);
  a.updateConfig(mergeConfig({ suggestions: { show: 'balanced' } }).config);
  assert.equal(
    a.onOutcome({ traceId: 't2', outcome: 'rejected', acceptedChars: 0, shownChars: 5 }),
    undefined,
    'not shown: nothing to learn',
  );
  assert.equal(a.onOutcome({ traceId: 'nope', outcome: 'rejected', acceptedChars: 0, shownChars: 5 }), undefined);
  assert.equal(gate.updates, 0);
  assert.equal(
    a.onOutcome({ traceId: 't1', outcome: 'partial', acceptedChars: 1, shownChars: 4 }),
    0.25,
    'a partial acceptance is learned at its share',
  );
  assert.equal(gate.updates, 1);
});

void test('a damaged or foreign saved gate starts from the shipped weights', async () => {
  const cache = tempDir('gate-learning-bad-').path;
  const dir = join(cache, 'learning');
  // A learned gate saved, then overwritten with the wrong number of weights.
  const a = feature(cache, new Map([['t', gateTrace('t')]]));
  await a.gateFor('/repo/a');
  a.onOutcome({ traceId: 't', outcome: 'rejected', acceptedChars: 0, shownChars: 1 });
  await a.save();
  const file = readdirSync(dir).find((f) => f.endsWith('.gate.json'))!;
  writeFileSync(join(dir, file), JSON.stringify({ ...new GateModel().toJSON(), withLogprobs: [1, 2, 3] }));
  const b = feature(cache, new Map());
  assert.equal((await b.gateFor('/repo/a')).score(FEATURES, true), new GateModel().score(FEATURES, true));
});

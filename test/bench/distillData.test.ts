import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  constructDistillationData,
  definitionsCovered,
  oracleTeacher,
  rerankerTeacher,
  splitByQuery,
  teacherAgreement,
  toJsonl,
  type OracleDoc,
  type Teacher,
} from '../../src/bench/distillData';
import { seededRandom } from '../../src/bench/random';
import { buildRerankQuery } from '../../src/engine/rerank/bestFitPrompt';
import { ollamaReranker } from '../../src/engine/rerank/LlmReranker';
import { startOllamaTestServer } from '../helpers/ollamaServer';
import { overlapModelTestDouble } from '../engine/rerank/overlapModelTestDouble';
import type { RerankDoc } from '../../src/engine/rerank/types';

const query = buildRerankQuery('app/main.py', 'x = load_config(path)\n');
const list: RerankDoc[] = Array.from({ length: 15 }, (_, i) => ({ id: `c${i}`, text: `def f${i}(): return ${i}` }));
const idNumber = (d: RerankDoc): number => Number(d.id.slice(1));

/**
 * A deterministic fake teacher: prefers the candidate with the largest id number; its z-th vote
 * on a window follows a fixed pattern decided by the window's smallest id, so some windows reach
 * 4 of 5 and others do not.
 */
function fakeTeacher(calls: Array<{ window: string[]; vote: number | undefined }>): Teacher {
  const counters = new Map<string, number>();
  return (_q, window) => {
    const key = window.map((d) => d.id).join(',');
    const z = counters.get(key) ?? 0;
    counters.set(key, z + 1);
    let best = 0;
    window.forEach((d, i) => {
      if (idNumber(d) > idNumber(window[best]!)) best = i;
    });
    const other = best === 0 ? 1 : 0;
    // Pattern by the smallest id mod 3: 0 -> 5/5 agree, 1 -> 4/5 (one dissent), 2 -> 2/5, 2 dissents, 1 failed call.
    const pattern = idNumber(window[0]!) % 3;
    let vote: number | undefined = best;
    if (pattern === 1 && z === 2) vote = other;
    if (pattern === 2 && (z === 1 || z === 3)) vote = other;
    if (pattern === 2 && z === 4) vote = undefined;
    calls.push({ window: window.map((d) => d.id), vote });
    return Promise.resolve(vote);
  };
}

void test('Alg. 2: sizes 2..7, three subsets each, five votes, kept when one label wins >= 4 of 5', async () => {
  const calls: Array<{ window: string[]; vote: number | undefined }> = [];
  const { samples, stats } = await constructDistillationData(
    query,
    list,
    fakeTeacher(calls),
    { random: seededRandom(42) },
    new AbortController().signal,
  );
  assert.equal(stats.subsets, 18);
  assert.equal(stats.teacherCalls, 90);
  assert.equal(calls.length, 90);
  const windows = [...new Set(calls.map((c) => c.window.join(',')))];
  const sizes = calls.filter((_, i) => i % 5 === 0).map((c) => c.window.length);
  assert.deepEqual(sizes, [2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7, 7]);
  for (const w of windows) {
    const ids = w.split(',').map((id) => Number(id.slice(1)));
    assert.deepEqual(
      ids,
      [...ids].sort((a, b) => a - b),
      'subsets keep retrieval order',
    );
    assert.equal(new Set(ids).size, ids.length);
  }
  // Expected kept subsets: those whose smallest id mod 3 is 0 or 1.
  const subsetFirsts = calls.filter((_, i) => i % 5 === 0).map((c) => Number(c.window[0]!.slice(1)));
  const expectedKept = subsetFirsts.filter((f) => f % 3 !== 2).length;
  assert.equal(stats.kept, expectedKept);
  assert.equal(samples.length, expectedKept);
  assert.ok(expectedKept > 0 && expectedKept < 18, `kept ${expectedKept} of 18: both outcomes occur`);
  assert.equal(stats.failedCalls, subsetFirsts.filter((f) => f % 3 === 2).length);
  for (const s of samples) {
    const best = s.candidates.reduce((b, d, i) => (idNumber(d) > idNumber(s.candidates[b]!) ? i : b), 0);
    assert.equal(s.choice, best);
    assert.equal(s.expected, `<answer>[${'ABCDEFG'[best]}]</answer>`);
    assert.ok(s.votes >= 4);
    assert.deepEqual(s.query, query);
  }
  const lines = toJsonl(samples).trimEnd().split('\n');
  assert.equal(lines.length, samples.length);
  const first = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.deepEqual(Object.keys(first).slice(0, 3), ['query', 'candidates', 'choice']);
});

void test('the same seed gives the same data; sizes above the list length are skipped', async () => {
  const a = await constructDistillationData(query, list, fakeTeacher([]), { random: seededRandom(5) }, new AbortController().signal);
  const b = await constructDistillationData(query, list, fakeTeacher([]), { random: seededRandom(5) }, new AbortController().signal);
  assert.equal(toJsonl(a.samples), toJsonl(b.samples));
  const small = await constructDistillationData(
    query,
    list.slice(0, 4),
    fakeTeacher([]),
    { random: seededRandom(5) },
    new AbortController().signal,
  );
  assert.equal(small.stats.subsets, 9);
});

void test('the oracle teacher picks the candidate covering the most cross-file definitions', async () => {
  const defs = [
    { name: 'load_config', kind: 'function', file: 'app/config.py', line: 3 },
    { name: 'Config', kind: 'class', file: 'app/config.py', line: 10 },
    { name: 'DEFAULTS', kind: 'globalVariable', file: 'app/defaults.py', line: 1 },
  ];
  const docs: OracleDoc[] = [
    { id: 'a', path: 'app/other.py', text: 'def load_config(p): pass', score: 9 },
    { id: 'b', path: 'app/config.py', text: 'def load_config(path):\n    return Config(path)', score: 1 },
    { id: 'c', path: 'app/config.py', text: 'def load_configs(path): pass', score: 5 },
    { id: 'd', path: 'app/defaults.py', text: 'DEFAULTS = {}', score: 2 },
  ];
  assert.equal(definitionsCovered(docs[0]!, defs), 0, 'the file must match');
  assert.equal(definitionsCovered(docs[1]!, defs), 2);
  assert.equal(definitionsCovered(docs[2]!, defs), 0, 'the name must occur as an identifier');
  const teacher = oracleTeacher(() => defs);
  assert.equal(await teacher(query, docs, new AbortController().signal), 1);
  assert.equal(await teacher(query, [docs[0]!, docs[3]!], new AbortController().signal), 1);
  // Ties go to the higher retrieval score, then the earlier candidate.
  const tie: OracleDoc[] = [
    { ...docs[3]!, id: 'x', score: 1 },
    { ...docs[3]!, id: 'y', score: 3 },
    { ...docs[3]!, id: 'z', score: 3 },
  ];
  assert.equal(await teacher(query, tie, new AbortController().signal), 1);
  // No candidate covers a definition: the oracle abstains, so the window is not kept.
  assert.equal(await teacher(query, [docs[0]!, docs[2]!], new AbortController().signal), undefined);
  const { samples } = await constructDistillationData(
    query,
    docs,
    teacher,
    { sizes: [2, 3, 4], random: seededRandom(1) },
    new AbortController().signal,
  );
  for (const s of samples) assert.ok(definitionsCovered(s.candidates[s.choice] as OracleDoc, defs) > 0);
});

void test('an LLM teacher sampling through the Ollama-compatible server', async () => {
  const server = await startOllamaTestServer(overlapModelTestDouble({ seed: 3 }));
  try {
    const q = buildRerankQuery('app/main.py', 'cfg = load_config(path)\nvalue = cfg.get_value(');
    const docs: RerankDoc[] = [
      { id: 'get', text: 'class Config:\n    def get_value(self, key): return self.data[key]' },
      { id: 'load', text: 'def load_config(path): return Config(path)' },
      { id: 'misc', text: 'def unrelated(a, b): return a * b' },
      { id: 'misc2', text: 'def also_unrelated(c): return c' },
    ];
    const teacher = rerankerTeacher(ollamaReranker({ host: server.url, temperature: 0.8 }));
    const { samples, stats } = await constructDistillationData(q, docs, teacher, { random: seededRandom(9) }, new AbortController().signal);
    assert.equal(stats.teacherCalls, server.requests.length);
    assert.ok(server.requests.every((r) => (r.body as { options: { temperature: number } }).options.temperature === 0.8));
    assert.ok(stats.kept >= 1);
    for (const s of samples) assert.ok(s.votes >= 4);
    // A server that answers outside the window gives no votes and no samples.
    server.setFault({ kind: 'outsideLabel' });
    const none = await constructDistillationData(
      q,
      docs,
      teacher,
      { sizes: [2, 3], random: seededRandom(9) },
      new AbortController().signal,
    );
    assert.equal(none.samples.length, 0);
    assert.equal(none.stats.failedCalls, none.stats.teacherCalls);
  } finally {
    await server.close();
  }
});

void test('agreement with the teacher and a split by query', async () => {
  const { samples } = await constructDistillationData(
    query,
    list,
    fakeTeacher([]),
    { random: seededRandom(42) },
    new AbortController().signal,
  );
  const other = buildRerankQuery('app/other.py', 'y = 2\n');
  const more = (await constructDistillationData(other, list, fakeTeacher([]), { random: seededRandom(43) }, new AbortController().signal))
    .samples;
  const all = [...samples, ...more];
  const lastWins = {
    kind: 'distilled' as const,
    name: 'largest id',
    pick: (_q: unknown, w: readonly RerankDoc[]) =>
      Promise.resolve({ index: w.reduce((b, d, i) => (idNumber(d) > idNumber(w[b]!) ? i : b), 0) }),
  };
  assert.deepEqual(await teacherAgreement(lastWins, all, new AbortController().signal), {
    agree: all.length,
    total: all.length,
    failed: 0,
    rate: 1,
  });
  const firstWins = { kind: 'distilled' as const, name: 'first', pick: () => Promise.resolve({ index: 0 }) };
  assert.equal(
    (await teacherAgreement(firstWins, all, new AbortController().signal)).agree,
    0,
    'the largest id is never first in a sorted subset',
  );
  const split = splitByQuery(all, 0.5, seededRandom(2));
  assert.equal(split.train.length + split.heldOut.length, all.length);
  const trainQueries = new Set(split.train.map((s) => s.query.text));
  assert.ok(split.heldOut.every((s) => !trainQueries.has(s.query.text)));
});

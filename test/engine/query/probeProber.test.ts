// Probing with the shipped causal LM (CodeRAG Alg. 1) through lmChunkProber: the chosen chunk is
// deterministic, its score is the recomputed sum of per-step max log-probs, probes run nearest
// first under a time budget, and buildQuery falls back when the model is missing.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry, maxLogProb, type CausalLM } from '../../../src/engine/models';
import { buildQuery } from '../../../src/engine/query/buildQuery';
import { chunkLines } from '../../../src/engine/query/chunkLines';
import { lmChunkProber } from '../../../src/engine/query/lmChunkProber';
import { probeQuery } from '../../../src/engine/query/probeQuery';
import { prefixAt } from '../../../src/engine/query/unfinishedFile';
import { fixturesDir, repoRoot, tempDir } from '../../helpers/paths';
import type { ProbeResult } from '../../../src/engine/models';

const registry = new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 });
test.after(() => registry.dispose());

/** Greedy decoding one step at a time without the KV cache, summing the max log-probs. */
async function recomputedScore(lm: CausalLM, probe: string, m: number): Promise<number> {
  const ids = lm.encode(probe);
  let sum = 0;
  for (let s = 0; s < m; s++) {
    const [logits] = await lm.logitsNext([ids], new AbortController().signal);
    const { id, logProb } = maxLogProb(logits!);
    sum += logProb;
    ids.push(id);
  }
  return sum;
}

void test('shipped LM: the chosen chunk is deterministic and its score is the recomputed sum of max log-probs', async () => {
  const lm = await registry.causalLM(undefined, new AbortController().signal);
  const text = readFileSync(join(fixturesDir, 'pyshop', 'app/main.py'), 'utf8');
  const prefix = prefixAt(text, 19, 25); // `    receipt = service.checkout(` area
  const prober = lmChunkProber(lm, { batchSize: 3, budgetMs: 60_000 });
  const q1 = await probeQuery(prefix, prober, {}, new AbortController().signal);
  const q2 = await probeQuery(prefix, lmChunkProber(lm, { batchSize: 8, budgetMs: 60_000 }), {}, new AbortController().signal);
  assert.equal(q1.strategy, 'probe');
  assert.deepEqual(q1.spans, q2.spans);
  assert.equal(q1.text, q2.text);
  const { chunks, target } = chunkLines(prefix, 3);
  assert.equal(q1.chunkScores?.length, chunks.length - 1);
  assert.equal(prober.lastRun?.scored, chunks.length - 1);
  assert.ok((prober.lastRun?.batches ?? 0) >= 2);
  // The chosen chunk has the best score, and that score is the recomputed sum (batching pads: small tolerance).
  const best = [...q1.chunkScores!].sort((a, b) => b.score - a.score)[0]!;
  assert.deepEqual(q1.spans[0], { startLine: best.startLine, endLine: best.endLine });
  const chosen = chunks.find((c) => c.startLine === best.startLine)!;
  const again = await recomputedScore(lm, `${chosen.text}\n${target!.text}`, 5);
  assert.ok(Math.abs(again - best.score) < 1e-2, `recomputed ${again}, probed ${best.score}`);
  for (const [a, b] of q1.chunkScores!.map((c, i) => [c.score, q2.chunkScores![i]!.score] as const)) assert.ok(Math.abs(a - b) < 1e-2);
  assert.ok(q1.text.endsWith(target!.text));
});

void test('lmChunkProber probes nearest chunks first in batches and stops at its time budget', async () => {
  const calls: string[][] = [];
  let clock = 0;
  const fake = {
    greedyProbe(prompts: string[], steps: number): Promise<ProbeResult[]> {
      calls.push(prompts);
      clock += 100;
      return Promise.resolve(
        prompts.map((p) => ({ tokens: new Array<number>(steps).fill(0), maxLogProbs: new Array<number>(steps).fill(-Number(p.slice(1))) })),
      );
    },
  };
  const prober = lmChunkProber(fake, { batchSize: 2, budgetMs: 250, now: () => clock });
  const scores = await prober.scoreProbes(['p1', 'p2', 'p3', 'p4', 'p5'], 3, new AbortController().signal);
  // Batches from the end: [p4, p5], then [p2, p3] (expected to end at 200 ms); a third would end
  // at 300 ms, past the budget, so p1 is never probed.
  assert.deepEqual(calls, [
    ['p4', 'p5'],
    ['p2', 'p3'],
  ]);
  assert.deepEqual(scores, [-Infinity, -6, -9, -12, -15]);
  assert.deepEqual(prober.lastRun, { probes: 5, scored: 4, batches: 2, elapsedMs: 200 });
  // With 150 ms, the second batch would end at 200 ms: only the first runs.
  calls.length = 0;
  clock = 0;
  const tight = lmChunkProber(fake, { batchSize: 2, budgetMs: 150, now: () => clock });
  await tight.scoreProbes(['p1', 'p2', 'p3', 'p4', 'p5'], 3, new AbortController().signal);
  assert.deepEqual(calls, [['p4', 'p5']]);
});

void test('buildQuery with probing falls back to a model-free query when the model is missing', async () => {
  const empty = tempDir();
  const reg = new ModelRegistry({ modelsDir: empty.path });
  try {
    const lm = await reg.causalLM(undefined, new AbortController().signal).catch(() => undefined);
    assert.equal(lm, undefined);
    const prefix = Array.from({ length: 20 }, (_, i) => `x${i} = f(${i})`).join('\n');
    const q = await buildQuery(
      prefix,
      { strategy: 'probe', fallback: 'last3' },
      lm ? lmChunkProber(lm) : undefined,
      new AbortController().signal,
    );
    assert.equal(q.strategy, 'last3');
    assert.match(q.fallbackReason ?? '', /model not available/);
  } finally {
    await reg.dispose();
    empty.cleanup();
  }
});

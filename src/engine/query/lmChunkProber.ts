// The causal LM as probeQuery's ChunkProber (CodeRAG Alg. 1): each probe is greedily continued
// for m tokens and scored by the sum of the per-step maximum log-probabilities. Probes run in
// batches (the model's KV cache serves the m steps of a batch), nearest the cursor first, under a
// time budget: a batch starts only if it is expected to end within the budget, probes left score
// -Infinity, so a long file costs about the budget and the chunks next to the cursor are always
// judged.
import type { CausalLM } from '../models/types';
import type { ChunkProber } from './probeQuery';
import { throwIfAborted } from '../util/errors';

/**
 * Probes per greedyProbe call, and the budget no new batch is expected to overrun (the first batch
 * always runs). Dev repositories, shipped LM, sparse path alone, recall@10 Python / Java:
 * - budget 20 ms / batch 4, when a batch could start until the budget was spent: probing 30-34 ms
 *   median, 0.282 / 0.278; 250 ms / batch 8: 139-163 ms, 0.240 / 0.214 (the small LM's scores
 *   mislead more the farther the chunks it judges);
 * - budget 20 ms / batch 4 as now (no batch expected to end past it), with sessions that do not
 *   spin: probing 20.5 / 20.3 ms median, 0.275 / 0.260.
 */
export const DEFAULT_PROBE_BATCH = 4;
export const DEFAULT_PROBE_BUDGET_MS = 20;

interface LmChunkProberOptions {
  /** Probes per greedyProbe call (DEFAULT_PROBE_BATCH). */
  batchSize?: number;
  /** Start no batch expected to end after this many ms (DEFAULT_PROBE_BUDGET_MS; the first batch always runs). */
  budgetMs?: number;
  /** For tests. */
  now?: () => number;
}

/** What the last scoreProbes call did (for traces and measurements). */
interface ProbeRunStats {
  probes: number;
  scored: number;
  batches: number;
  elapsedMs: number;
}

interface LmChunkProber extends ChunkProber {
  readonly lastRun: ProbeRunStats | undefined;
}

export function lmChunkProber(lm: Pick<CausalLM, 'greedyProbe'>, options: LmChunkProberOptions = {}): LmChunkProber {
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_PROBE_BATCH);
  const budgetMs = options.budgetMs ?? DEFAULT_PROBE_BUDGET_MS;
  const now = options.now ?? (() => performance.now());
  let lastRun: ProbeRunStats | undefined;
  return {
    get lastRun() {
      return lastRun;
    },
    async scoreProbes(probes, m, signal) {
      const start = now();
      const scores = new Array<number>(probes.length).fill(-Infinity);
      let scored = 0;
      let batches = 0;
      // probeQuery lists probes in file order: the nearest chunks are last.
      for (let end = probes.length; end > 0; end -= batchSize) {
        // A batch starts only if, at the average batch time so far, it ends within the budget.
        const elapsed = now() - start;
        if (batches > 0 && elapsed + elapsed / batches > budgetMs) break;
        throwIfAborted(signal);
        const from = Math.max(0, end - batchSize);
        const results = await lm.greedyProbe(probes.slice(from, end), m, signal);
        results.forEach((r, i) => {
          scores[from + i] = r.maxLogProbs.reduce((a, b) => a + b, 0);
        });
        scored += end - from;
        batches++;
      }
      lastRun = { probes: probes.length, scored, batches, elapsedMs: now() - start };
      return scores;
    },
  };
}

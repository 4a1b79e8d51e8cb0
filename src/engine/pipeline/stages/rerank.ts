// The rerank stage's reranker for one request: the one the host's switch selects now, resolved when
// the request starts (a switch applies to the next request).
import { BestFitRerankStage } from '../../rerank/rerankCandidates';
import type { RerankerSwitch } from '../../rerank/RerankerSwitch';
import type { RerankStage } from '../../rerank/types';

/**
 * The reranker `switcher` selects now; a chosen reranker that is not available (its model not loaded,
 * no server configured) keeps the retrieval order and says so in the trace; `none` is no stage.
 */
export function rerankerNow(switcher: RerankerSwitch): RerankStage | undefined {
  const { reranker, choice, missing } = switcher.resolve();
  if (reranker) return new BestFitRerankStage(reranker);
  if (!missing) return undefined;
  return {
    name: `${choice} (unavailable)`,
    rerank: (input) => Promise.resolve({ ranked: input.candidates.slice(0, input.topU), calls: [], notes: [missing] }),
  };
}

// The shipped causal LM in the pipeline's two model roles: the embedded completion model and the
// probing model (CodeRAG Alg. 1).
import type { EmbeddedLM } from '../generate/EmbeddedClient';
import type { TokenLogprob } from '../generate/types';
import { lmChunkProber } from '../query/lmChunkProber';
import type { ChunkProber } from '../query/probeQuery';
import type { CausalLM } from '../models/types';

/** The shipped causal LM as the embedded completion model. */
export function embeddedLMOf(lm: CausalLM): EmbeddedLM {
  return {
    generate: async (prompt, options, signal) => {
      let stoppedBy: 'eos' | 'length' | 'stop' | undefined;
      const logprobs: TokenLogprob[] = [];
      const text = await lm.generate(
        prompt,
        {
          maxNewTokens: options.maxNewTokens,
          ...(options.stop ? { stop: [...options.stop] } : {}),
          ...(options.until ? { until: options.until } : {}),
          ...(options.logitsFilter ? { logitsFilter: options.logitsFilter } : {}),
          onStop: (r) => (stoppedBy = r),
          onToken: (token, logprob) => logprobs.push({ token, logprob }),
        },
        signal,
      );
      return { text, ...(stoppedBy ? { stoppedBy } : {}), logprobs };
    },
    encode: (text) => lm.encode(text),
    ...(lm.tokenTexts ? { tokenTexts: () => lm.tokenTexts!() } : {}),
    contextTokens: lm.maxPositions,
    eosId: lm.eosId,
  };
}

/** The shipped causal LM as the probing model (CodeRAG Alg. 1), batched and under a time budget. */
export function causalLMProber(lm: CausalLM): ChunkProber {
  return lmChunkProber(lm);
}

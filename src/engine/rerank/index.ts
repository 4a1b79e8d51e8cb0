// BestFit reranking (CodeRAG section 2.3): prompt, heap sort, LLM and distilled rerankers, switch
// and the pipeline stage. (The distillation data of Alg. 2 is a bench tool: src/bench.)
export * from './types';
export {
  BESTFIT_SYSTEM,
  LABELS,
  RERANK_QUERY_LINES,
  bestFitMessages,
  bestFitUserMessage,
  buildRerankQuery,
  chatMlPrompt,
  labelOf,
} from './bestFitPrompt';
export type { ChatMessage } from './bestFitPrompt';
export { argmax, labelScores, parseBestFitAnswer } from './bestFitAnswer';
export type { ParsedAnswer, TokenLogprob, TopLogprob } from './bestFitAnswer';
export { DEFAULT_ARITY, DEFAULT_TOP_U, bestFitHeapSort, heapSortCallBound } from './bestFitHeapSort';
export type { HeapSortOptions, HeapSortResult, WindowComparator } from './bestFitHeapSort';
export { bestFitRerank } from './bestFitRerank';
export type { RerankOptions, RerankResult } from './bestFitRerank';
export {
  DEFAULT_RERANK_MODEL,
  DEFAULT_RERANK_TIMEOUT_MS,
  LlmReranker,
  ollamaReranker,
  ollamaTransport,
  openAiReranker,
  openAiTransport,
} from './LlmReranker';
export type {
  LlmAnswer,
  LlmRerankerOptions,
  LlmTransport,
  OllamaRerankerOptions,
  OpenAiRerankerOptions,
  SamplingOptions,
} from './LlmReranker';
export {
  DEFAULT_RERANKER,
  DistilledReranker,
  OnnxFeatureScorer,
  OnnxPairScorer,
  RERANKER_FILE,
  loadDistilledReranker,
} from './DistilledReranker';
export type { PairScorer } from './DistilledReranker';
export { RerankerSwitch } from './RerankerSwitch';
export type { RerankerChange } from './RerankerSwitch';
export { BestFitRerankStage, candidateDocs, pipelineCalls, retrievalScore } from './rerankCandidates';

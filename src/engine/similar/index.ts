// ProCC's similar code: the window index, the perspectives, the stage and the bandit a host keeps.
export { LinUcb } from './linUcb';
export type { LinUcbChoice, LinUcbOptions, LinUcbState } from './linUcb';
export { createSimilarBandit, similarFeatures, SIMILAR_ALPHA, SIMILAR_FEATURE_DIM } from './bandit';
export { CodeWindowIndex, DEFAULT_WINDOW, summarizeCode } from './windowIndex';
export type { CodeWindow, WindowHit, WindowIndexOptions, WindowIndexReport, WindowSource } from './windowIndex';
export { SimilarRetriever, firstNonEmptyLine } from './perspectives';
export type { NextLineModel, PerspectiveResult, SimilarRequest, SimilarRetrieval, SimilarRetrieverOptions } from './perspectives';
export { similarStage, SIMILAR_MODES } from './chooseWindows';
export type { SimilarMode, SimilarOutcome, SimilarStageOptions } from './chooseWindows';
export { PERSPECTIVES, SIMILAR_ARMS } from './types';
export type { Perspective, SimilarArm, SimilarTrace } from './types';

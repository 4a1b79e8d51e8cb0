// Local models for the engine: the registry, the model roles and the typed errors.

export { ModelRegistry } from './ModelRegistry';
export type { ModelRegistryOptions } from './ModelRegistry';
export type { ModelPlacement } from './device';
export type { CausalLM, Encoder, ProbeResult } from './types';
export type { DownloadProgress } from './download';
export { isModelError } from './errors';
export type { ModelErrorCode } from './errors';
export { maxLogProb } from './OnnxCausalLM';
export { downloadedModelPath, downloadedModels, downloadGguf, ggufDownloadInfo, ggufSourceProblem } from './ggufDownload';
export type { DownloadedModel, GgufSource } from './ggufDownload';

// Local models for the engine: the registry, the model roles and the typed errors.

export { ModelRegistry, DEFAULT_CAUSAL_LM, DEFAULT_ENCODER } from './ModelRegistry';
export type { LoadedModelPlacement, ModelRegistryOptions, ModelKind, ResolvedModel } from './ModelRegistry';
export { MODEL_DEVICES, isModelDevice, parseModelDevice, providerLabel } from './device';
export type { ExecutionProvider, ModelDevice, ModelPlacement } from './device';
export type { CausalLM, Encoder, GenerateOptions, ModelTimings, ProbeResult } from './types';
export type { DownloadProgress } from './download';
export { ModelError, isModelError } from './errors';
export type { ModelErrorCode } from './errors';
export { maxLogProb } from './OnnxCausalLM';

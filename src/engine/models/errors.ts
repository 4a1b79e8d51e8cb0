// Typed model-loading errors (CONTRIBUTING.md "Code rules", rule 9): every failure to resolve, download or open a
// model surfaces as a ModelError with a code and a message that says what to do.

import { UserError } from '../util/errors';

export type ModelErrorCode =
  | 'missing' // no such folder / file, or an unknown model name
  | 'corrupt' // a file exists but cannot be parsed (truncated .onnx, invalid JSON)
  | 'config' // config.json disagrees with what the loader needs or with the .onnx graph
  | 'download' // a Hugging Face download failed (offline, timeout, 404)
  | 'runtime'; // onnxruntime failed while running an otherwise valid model

export class ModelError extends UserError {
  constructor(
    readonly code: ModelErrorCode,
    message: string,
    readonly modelName?: string,
    options?: { cause?: unknown },
  ) {
    super(message);
    this.name = 'ModelError';
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

export function isModelError(e: unknown): e is ModelError {
  return e instanceof ModelError;
}

// A model client that answers every request with one fixed text and keeps the requests it saw,
// for tests of what the pipeline asks of the model.
import type { GenerateRequest, GenerateResult, ModelClient } from '../../src/engine/generate/types';

export function recordingModel(
  text: string,
  stoppedBy: GenerateResult['stoppedBy'],
  backend: ModelClient['backend'] = 'embedded',
): { client: ModelClient; seen: GenerateRequest[] } {
  const seen: GenerateRequest[] = [];
  const client: ModelClient = {
    backend,
    model: 'm',
    family: 'plain',
    endpoint: 'embedded',
    generate: (r) => (seen.push(r), Promise.resolve({ text, model: 'm', elapsedMs: 1, ...(stoppedBy ? { stoppedBy } : {}) })),
  };
  return { client, seen };
}

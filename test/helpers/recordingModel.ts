// A model client that answers every request with one fixed text and keeps the requests it saw,
// for tests of what the pipeline asks of the model.
import assert from 'node:assert/strict';
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
    // Standing in for the in-process model, it reads knowledge as that model does (whole definitions).
    ...(backend === 'embedded' ? { capabilities: { wholeKnowledge: true } } : {}),
    generate: (r) => (seen.push(r), Promise.resolve({ text, model: 'm', elapsedMs: 1, ...(stoppedBy ? { stoppedBy } : {}) })),
  };
  return { client, seen };
}

/** Every request held the model to a Java body: no end before it closes, nothing blank first. */
export function assertHeldToBody(seen: readonly GenerateRequest[]): void {
  assert.ok(seen.length > 0);
  for (const r of seen) {
    assert.equal(r.holdEnd?.(''), true, 'not ended before the body closes');
    assert.equal(r.holdEnd?.('return null;\n    }'), false);
    assert.equal(r.holdLine?.('   '), true, 'held while blank');
    assert.equal(r.holdLine?.('return'), false);
  }
}

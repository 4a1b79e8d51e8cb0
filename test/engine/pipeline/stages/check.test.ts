// The check stage gives a model client what the client says it can use (ModelClient.capabilities),
// whatever its backend is called: a member choice to a client that takes one, a token constraint
// to one that sees logits, and to a client with neither its finished answer repaired.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReceiverTyper } from '../../../../src/engine/check/receiverMembers';
import type { GenerateRequest, ModelCapabilities, ModelClient } from '../../../../src/engine/generate/types';
import { createPipeline, resolveOptions } from '../../../../src/engine/pipeline';
import { fixturesDir } from '../../../helpers/paths';
import { fixtureKb, parsers } from '../../retrieve/retrieveFixtures';

function client(capabilities: ModelCapabilities | undefined, seen: GenerateRequest[]): ModelClient {
  return {
    backend: 'ollama',
    model: 'm',
    family: 'plain',
    endpoint: 'http://model.test',
    ...(capabilities ? { capabilities } : {}),
    generate: (r) => (seen.push(r), Promise.resolve({ text: 'totl()\n', model: 'm', elapsedMs: 1, stoppedBy: 'stop' as const })),
  };
}

void test('checking asks each client for what it declares it can use, not by its backend', async () => {
  const kb = await fixtureKb('pyshop');
  const typer = new ReceiverTyper(kb, await parsers());
  try {
    const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
    const request = {
      filePath: 'app/main.py',
      lang: 'python' as const,
      prefix: `${lines.slice(0, 18).join('\n')}\n    cart.`,
      suffix: '\n',
    };
    const run = async (capabilities: ModelCapabilities | undefined) => {
      const seen: GenerateRequest[] = [];
      const pipeline = createPipeline(resolveOptions({ query: { strategy: 'last10' }, check: { mode: 'constrain' } }), {
        env: { repo: { retrievers: [], receivers: typer }, model: client(capabilities, seen) },
      });
      const result = await pipeline.complete(request, new AbortController().signal);
      return { result, asked: seen[0]! };
    };

    const choice = await run({ memberChoice: true });
    assert.ok(choice.asked.memberChoice?.names.includes('total'), "a client that takes a member choice is given the receiver's members");
    assert.equal(choice.asked.constraint, undefined);
    assert.equal(choice.result.trace.check?.atCursor?.receiver, 'cart');

    const logits = await run({ decodeConstraint: true });
    assert.ok(logits.asked.constraint, 'a client that sees logits is given the token constraint');
    assert.equal(logits.asked.memberChoice, undefined);
    // Its answer is checked again after decoding, cut only (the constraint had the word; what it let through is not guessed at).
    assert.equal(logits.result.items[0]?.text, undefined);
    assert.deepEqual(
      logits.result.trace.check?.fixes?.map((f) => [f.action, f.wrote]),
      [['cut', 'totl']],
    );

    const neither = await run(undefined);
    assert.equal(neither.asked.constraint, undefined);
    assert.equal(neither.asked.memberChoice, undefined);
    assert.equal(neither.result.trace.check?.atCursor, undefined, 'nothing asked at the cursor of a client that can use nothing');
    // Its finished answer is repaired: `totl` is not a member of Cart, `total` is.
    assert.equal(neither.result.items[0]?.text, 'total()');
    assert.deepEqual(
      neither.result.trace.check?.fixes?.map((f) => [f.wrote, f.became]),
      [['totl', 'total']],
    );
  } finally {
    typer.dispose();
    kb.dispose();
  }
});

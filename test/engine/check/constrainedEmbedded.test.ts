// Checked decoding end to end with the shipped embedded model: after `cart.` (a Cart the
// repository types) the constrained completion starts with a real member of Cart, and the trace
// says what was constrained.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir, grammarsDir, repoRoot } from '../../helpers/paths';
import { KnowledgeBase } from '../../../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../../../src/engine/kb/parsers';
import { ModelRegistry, type CausalLM } from '../../../src/engine/models';
import { EmbeddedClient } from '../../../src/engine/generate/EmbeddedClient';
import { createPipeline, resolveOptions } from '../../../src/engine/pipeline';
import { createRepositoryIndex, type RepositoryIndex } from '../../../src/engine/index/repositoryIndex';
import { embeddedLMOf } from '../../../src/engine/index/pipelineAdapters';

const CART_MEMBERS = [
  'max_items',
  'owner',
  'currency',
  'lines',
  '_discount',
  'add',
  'apply_discount',
  'discount_applied',
  'total',
  'empty',
  'for_guest',
  'guest_carts',
  'Line',
];

void describe('checked decoding with the embedded model', () => {
  let kb: KnowledgeBase;
  let lm: CausalLM;
  let paths: RepositoryIndex;

  before(async () => {
    const parsers = await loadParsers(grammarsDir);
    kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, 'pyshop'), parsers });
    await kb.index(undefined, new AbortController().signal);
    paths = createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'] });
    lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
  });
  after(() => {
    paths?.dispose();
    kb?.dispose();
  });

  async function completeAt(
    prefix: string,
    mode: 'constrain' | 'off',
    maxNewTokens = 8,
    prior?: number | { python?: number; java?: number },
  ) {
    const model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
    const pipeline = createPipeline(
      resolveOptions({
        query: { strategy: 'last10' },
        retrieval: { budgetsMs: { sparse: 5000, dataflow: 5000 } },
        generate: { maxNewTokens },
        check: { mode, prior },
      }),
      { env: { repo: { retrievers: paths.retrievers, receivers: paths.receivers }, model: model } },
    );
    return pipeline.complete({ filePath: 'app/main.py', lang: 'python', prefix, suffix: '\n' }, new AbortController().signal);
  }

  void test('after cart. the suggestion starts with a member of Cart; the trace records the constrained name', async () => {
    const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
    const prefix = `${lines.slice(0, 18).join('\n')}\n    cart.`;
    const { items, trace } = await completeAt(prefix, 'constrain');
    const first = /^[\w]*/.exec(items[0]?.text ?? trace.model?.raw ?? '')?.[0] ?? '';
    assert.ok(CART_MEMBERS.includes(first), `"${first}" (raw ${JSON.stringify(trace.model?.raw)}) is not a member of Cart`);
    const check = trace.check;
    assert.equal(check?.mode, 'constrain');
    assert.equal(check?.atCursor?.receiver, 'cart');
    assert.equal(check?.constrained?.[0]?.receiver, 'cart');
    assert.equal(check?.constrained?.[0]?.written, first);
    assert.ok((check?.steps ?? 0) > 0 && (check?.constrained?.[0]?.steps ?? 0) > 0);
    const off = await completeAt(prefix, 'off');
    assert.equal(off.trace.check, undefined, 'off: nothing checked');
  });

  void test('after cart. the member the lines before it name is written (the member prior), and the trace says which it favoured', async () => {
    const prefix =
      'from pyshop.models import Cart\n\n\ndef welcome_back(cart: Cart) -> None:\n    # a returning customer: apply the discount\n    cart.';
    // The model spells the name in short pieces under the mask: room for the whole name; the prior asked for (the default is 0).
    const { items, trace } = await completeAt(prefix, 'constrain', 16, 32);
    assert.match(items[0]?.text ?? '', /^apply_discount\b/, `raw ${JSON.stringify(trace.model?.raw)}`);
    // `_discount` holds every word of its name too: the two tie, and the model chose between them.
    assert.deepEqual(trace.check?.constrained?.[0]?.favoured?.slice(0, 2).sort(), ['_discount', 'apply_discount']);
    const alone = await completeAt(prefix, 'constrain', 8, 0);
    assert.equal(alone.trace.check?.constrained?.[0]?.favoured, undefined, 'prior 0: the mask alone');
    // A weight per language: the request's language decides; another language's weight does not apply.
    const own = await completeAt(prefix, 'constrain', 16, { python: 32, java: 0 });
    assert.deepEqual(own.trace.check?.constrained?.[0]?.favoured, trace.check?.constrained?.[0]?.favoured);
    const other = await completeAt(prefix, 'constrain', 8, { java: 32 });
    assert.equal(other.trace.check?.constrained?.[0]?.favoured, undefined, 'no Python weight: the mask alone');
  });

  void test("the fixture's CheckoutService( line gets the arguments in scope, and no more than the constructor takes", async () => {
    const lines = readFileSync(join(fixturesDir, 'pyshop', 'app', 'main.py'), 'utf8').split('\n');
    const prefix = `${lines.slice(0, 18).join('\n')}\n    service = CheckoutService(`;
    const { items, trace } = await completeAt(prefix, 'constrain', 16);
    const text = items[0]?.text ?? '';
    // `gateway` has a default: the call may close after `cart`; a second argument is the name in scope.
    assert.match(text, /^cart(, ?gateway)?\)/, `constrained: ${JSON.stringify(text)} (raw ${JSON.stringify(trace.model?.raw)})`);
    assert.doesNotMatch(text, /^cart, ?gateway\s*,/, 'no third argument');
    const call = trace.check?.calls?.[0];
    assert.equal(call?.callee, 'CheckoutService');
    assert.deepEqual(call?.params, ['cart', 'gateway']);
    assert.deepEqual(call?.preferred, ['cart', 'gateway']);
    const off = await completeAt(prefix, 'off', 16);
    assert.equal(off.trace.check, undefined);
  });
});

// Checking finished completions (remote models): a wrong member after a typed receiver is repaired
// to the one close valid member, else the suggestion is cut before it; end to end through the
// pipeline with the Ollama-compatible test server answering a wrong member.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkCompletion, closestMember, editDistance } from '../../../src/engine/check/repairCompletion';
import { ReceiverTyper, type ReceiverMembers } from '../../../src/engine/check/receiverMembers';
import { OllamaClient } from '../../../src/engine/generate/OllamaClient';
import { createPipeline } from '../../../src/engine/pipeline/createPipeline';
import { resolveOptions } from '../../../src/engine/pipeline/resolveOptions';
import { startOllamaTestServer } from '../../helpers/ollamaServer';
import { fixturesDir } from '../../helpers/paths';
import { fixtureKb, parsers } from '../retrieve/retrieveFixtures';

const CART = new Set(['add', 'apply_discount', 'total', 'owner', 'lines', 'currency']);
const cartAt = (text: string): ReceiverMembers | undefined => {
  const m = /\bcart\.([\w]*)$/.exec(text);
  return m ? { receiver: 'cart', partial: m[1] ?? '', names: CART, entities: ['instance of Cart'] } : undefined;
};

void test('edit distance and the closest member: unambiguous and close only', () => {
  assert.equal(editDistance('totl', 'total'), 1);
  assert.equal(closestMember('totl', CART), 'total');
  assert.equal(closestMember('ad', CART), 'add');
  assert.equal(closestMember('add_items', CART), undefined, 'too far from add');
  assert.equal(closestMember('Owner', CART), 'owner');
  assert.equal(closestMember('x', new Set(['a', 'b'])), undefined, 'two names as close');
});

void test('checkCompletion repairs, cuts, and leaves valid and unresolved dereferences alone', () => {
  assert.deepEqual(checkCompletion('    cart.', 'ad(p)', cartAt), {
    text: 'add(p)',
    checked: 1,
    fixes: [{ action: 'repaired', receiver: 'cart', wrote: 'ad', became: 'add', at: 0 }],
  });
  assert.deepEqual(checkCompletion('    cart.', 'add_items(p)', cartAt), {
    text: '',
    checked: 1,
    fixes: [{ action: 'cut', receiver: 'cart', wrote: 'add_items', at: 0 }],
  });
  assert.deepEqual(checkCompletion('    x = ', 'cart.totl + other.thing', cartAt).text, 'cart.total + other.thing');
  assert.deepEqual(checkCompletion('    x = ', 'len(cart.lines) + cart.add_items(p)', cartAt), {
    text: 'len(cart.lines) +',
    checked: 2,
    fixes: [{ action: 'cut', receiver: 'cart', wrote: 'add_items', at: 18 }],
  });
  assert.deepEqual(checkCompletion('    cart.ap', 'ply_discount(5)', cartAt), { text: 'ply_discount(5)', checked: 1, fixes: [] });
  assert.deepEqual(
    checkCompletion('    cart.', 'tot', cartAt),
    { text: 'tot', checked: 1, fixes: [] },
    'an unfinished name that starts a valid one',
  );
});

async function completeWithServer(
  answer: string,
  mode: 'repair' | 'constrain' | 'off',
): Promise<{ text: string | undefined; check: unknown }> {
  const server = await startOllamaTestServer(() => Promise.resolve({ text: answer }), { models: ['qwen2.5-coder:1.5b-base'] });
  const typer = new ReceiverTyper(await fixtureKb('pyshop'), await parsers());
  try {
    const lines = readFileSync(join(fixturesDir, 'pyshop', 'app/main.py'), 'utf8').split('\n');
    const prefix = `${lines.slice(0, 18).join('\n')}\n    cart.`;
    const pipeline = createPipeline(resolveOptions({ check: { mode } }), {
      env: { repo: { retrievers: [], receivers: typer }, model: new OllamaClient({ host: server.url, model: 'qwen2.5-coder:1.5b-base' }) },
    });
    const r = await pipeline.complete({ filePath: 'app/main.py', lang: 'python', prefix, suffix: '\n' }, new AbortController().signal);
    return { text: r.items[0]?.text, check: r.trace.check };
  } finally {
    typer.dispose();
    await server.close();
  }
}

void test('a remote model answering a near-miss member after cart. gets it repaired; the trace says so', async () => {
  const r = await completeWithServer('ad(Product("a", "b", 1.0))', 'repair');
  assert.equal(r.text, 'add(Product("a", "b", 1.0))');
  assert.deepEqual(r.check, {
    mode: 'repair',
    checked: 1,
    fixes: [{ action: 'repaired', receiver: 'cart', wrote: 'ad', became: 'add', at: 0 }],
  });
});

void test('a remote model answering a member Cart does not have is cut (constrain mode checks remote answers too); off leaves it', async () => {
  const r = await completeWithServer('add_items(p)', 'constrain');
  assert.equal(r.text, undefined, 'nothing left to suggest');
  assert.deepEqual(r.check, { mode: 'constrain', checked: 1, fixes: [{ action: 'cut', receiver: 'cart', wrote: 'add_items', at: 0 }] });
  const off = await completeWithServer('add_items(p)', 'off');
  assert.equal(off.text, 'add_items(p)');
  assert.equal(off.check, undefined);
});

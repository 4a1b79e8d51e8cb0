import { test } from 'node:test';
import assert from 'node:assert/strict';
import { embeddedModelGenerate, startOllamaTestServer, type EmbeddedLM } from '../../helpers/ollamaServer';
import { ollamaReranker } from '../../../src/engine/rerank/LlmReranker';
import { buildRerankQuery } from '../../../src/engine/rerank/bestFitPrompt';

// A character-level stand-in with the CausalLM shape: it spells `<answer>[B]</answer>` and then
// stops; at the label position it puts 0.7 on B and 0.2 on A. It checks the adapter's decoding
// and logprob reporting; the lead backs the server with the real embedded LM through the same adapter.
const vocab = [...'<>/[]ABCanswer', '\u0000'];
const eosId = vocab.length - 1;
const target = '<answer>[B]</answer>';
const fakeLM: EmbeddedLM = {
  eosId,
  maxPositions: 4096,
  encode: (text) => [...text].map((c) => Math.max(0, vocab.indexOf(c))),
  decode: (ids) => ids.map((i) => (i === eosId ? '' : (vocab[i] ?? ''))).join(''),
  logitsNext: (batch) =>
    Promise.resolve(
      batch.map((ids) => {
        const generated = ids.length - promptLength;
        const logits = new Float32Array(vocab.length).fill(-20);
        const want = generated < target.length ? vocab.indexOf(target[generated]!) : eosId;
        if (generated === 9) {
          logits[vocab.indexOf('B')] = Math.log(0.7);
          logits[vocab.indexOf('A')] = Math.log(0.2);
          logits[vocab.indexOf('C')] = Math.log(0.1);
        } else logits[want] = 0;
        return logits;
      }),
    ),
};
let promptLength = 0;

void test('the embedded-model adapter answers through the test server with real per-token logprobs', async () => {
  const generate = embeddedModelGenerate(fakeLM);
  const server = await startOllamaTestServer(async (prompt, opts, signal) => {
    promptLength = fakeLM.encode(prompt).length;
    return generate(prompt, opts, signal);
  });
  try {
    const query = buildRerankQuery('a.py', 'x = 1');
    const window = [
      { id: 'a', text: 'A' },
      { id: 'b', text: 'B' },
      { id: 'c', text: 'C' },
    ];
    const pick = await ollamaReranker({ host: server.url }).pick(query, window, new AbortController().signal);
    assert.equal(pick.index, 1);
    assert.equal(pick.answer, '<answer>[B]</ans', 'a character-level model runs out of its 16 tokens');
    assert.ok(
      Math.abs(pick.scores![0]! - 0.2) < 1e-3 && Math.abs(pick.scores![1]! - 0.7) < 1e-3 && Math.abs(pick.scores![2]! - 0.1) < 1e-3,
    );
  } finally {
    await server.close();
  }
});

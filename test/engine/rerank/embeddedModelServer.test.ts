// The Ollama-compatible server backed by the project's embedded causal LM (models/coderag-lm):
// whatever the model answers, the reranker either picks an offered label or keeps retrieval order
// and records the model's actual answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { embeddedModelGenerate, startOllamaTestServer } from '../../helpers/ollamaServer';
import { repoRoot } from '../../helpers/paths';
import { ModelRegistry } from '../../../src/engine/models';
import { ollamaReranker } from '../../../src/engine/rerank/LlmReranker';
import { bestFitRerank } from '../../../src/engine/rerank/bestFitRerank';
import { buildRerankQuery } from '../../../src/engine/rerank/bestFitPrompt';

const modelsDir = join(repoRoot, 'models');
const shipped = existsSync(join(modelsDir, 'coderag-lm', 'onnx', 'decoder_model_merged.onnx'));

void test('a rerank through the server answered by the embedded LM', { skip: shipped ? false : 'models/coderag-lm is not built yet' }, async () => {
  const registry = new ModelRegistry({ modelsDir, threads: 2 });
  const lm = await registry.causalLM();
  const server = await startOllamaTestServer(embeddedModelGenerate(lm));
  try {
    const query = buildRerankQuery('app/main.py', 'from app.store import open_store\nstore = open_store(path)\nstore.save(');
    const docs = [
      { id: 'open', text: 'def open_store(path):\n    return Store(path)' },
      { id: 'save', text: 'class Store:\n    def save(self, record):\n        self.rows.append(record)' },
    ];
    const result = await bestFitRerank(query, docs, ollamaReranker({ host: server.url, maxTokens: 8 }), { topU: 2 }, new AbortController().signal);
    assert.equal(result.trace.calls.length, 1);
    assert.equal(server.requests.length, 1);
    const call = result.trace.calls[0]!;
    assert.equal(typeof call.answer, 'string', 'the model answer is kept in the trace');
    if (call.status === 'ok') assert.ok(call.picked >= 0 && call.picked < 2);
    else {
      assert.equal(call.status, 'fallback');
      assert.deepEqual(result.trace.after, ['open', 'save']);
    }
    process.stdout.write(`# embedded LM answered ${JSON.stringify(call.answer)} -> ${call.status}\n`);
  } finally {
    await server.close();
    await registry.dispose();
  }
});

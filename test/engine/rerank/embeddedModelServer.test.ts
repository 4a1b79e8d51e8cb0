// The Ollama-compatible server backed by the project's embedded causal LM (models/coderag-lm):
// a base code LM, decoded greedily (the reranker asks for temperature 0), does not answer the
// BestFit `<answer>[X]</answer>` format, so the one outcome is the documented degradation: the
// window keeps retrieval order and the trace records the model's actual answer and why.
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

void test(
  'a rerank through the server answered by the embedded LM',
  { skip: shipped ? false : 'models/coderag-lm is not built yet' },
  async () => {
    const registry = new ModelRegistry({ modelsDir, threads: 2 });
    const lm = await registry.causalLM(undefined, new AbortController().signal);
    const generate = embeddedModelGenerate(lm);
    const answers: string[] = [];
    const server = await startOllamaTestServer(async (prompt, options, signal) => {
      const answer = await generate(prompt, options, signal);
      answers.push(answer.text);
      return answer;
    });
    try {
      const query = buildRerankQuery('app/main.py', 'from app.store import open_store\nstore = open_store(path)\nstore.save(');
      const docs = [
        { id: 'open', text: 'def open_store(path):\n    return Store(path)' },
        { id: 'save', text: 'class Store:\n    def save(self, record):\n        self.rows.append(record)' },
      ];
      const result = await bestFitRerank(
        query,
        docs,
        ollamaReranker({ host: server.url, maxTokens: 8 }),
        { topU: 2 },
        new AbortController().signal,
      );
      assert.equal(result.trace.calls.length, 1);
      assert.equal(server.requests.length, 1);
      assert.equal(answers.length, 1, 'the model generated once');
      const call = result.trace.calls[0]!;
      assert.equal(call.status, 'fallback', `the base LM answered ${JSON.stringify(call.answer)}`);
      assert.equal(call.picked, 0);
      assert.match(call.reason ?? '', /^unparsable/, 'the answer is not <answer>[X]</answer>');
      assert.equal(call.answer, answers[0], "the trace keeps the model's actual answer");
      assert.deepEqual(result.trace.after, ['open', 'save'], 'retrieval order is kept');
      assert.match(result.trace.degraded ?? '', /1 of 1 windows kept retrieval order \(unparsable/);
      process.stdout.write(`# embedded LM answered ${JSON.stringify(call.answer)} -> ${call.status}\n`);
    } finally {
      await server.close();
      await registry.dispose();
    }
  },
);

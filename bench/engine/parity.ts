// Parity of the exported shipped LM: llama.cpp's next-token log-probabilities against
// onnxruntime's (the product's embedded path) on fixed Python and Java prompts, fed the same token
// ids; also whether both tokenizers split each prompt alike.
// Usage: node --import tsx bench/engine/parity.ts   (prints a table and one JSON summary line)
import { join } from 'node:path';
import { ModelRegistry } from '../../src/engine/models/ModelRegistry';
import { repoRoot, shippedLmGguf } from './models';

export const PARITY_PROMPTS: string[] = [
  'def main():\n    return',
  'import os\nimport sys\n\n\ndef read_file(path):\n    with open(path) as f:\n        return f.',
  'class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        self.items.',
  'for i in range(len(values)):\n    if values[i] ',
  'def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + ',
  'import json\n\ndata = json.loads(text)\nfor key, value in data.',
  'try:\n    result = compute()\nexcept ValueError as e:\n    ',
  'def __repr__(self):\n    return f"{self.__class__.',
  '    @property\n    def name(self):\n        return self._',
  'with open(filename, "w") as out:\n    out.write(',
  'parser = argparse.ArgumentParser()\nparser.add_argument("--',
  'public class Main {\n    public static void main(String[] args) {\n        System.out.',
  'import java.util.List;\nimport java.util.',
  'for (int i = 0; i < items.size(); i++) {\n    ',
  'public int getCount() {\n        return ',
  'private final Map<String, Integer> counts = new ',
  '    @Override\n    public String toString() {\n        return ',
  'if (value == null) {\n            throw new ',
  'StringBuilder sb = new StringBuilder();\n        sb.',
  'try {\n            reader.close();\n        } catch (IOException e) {\n            ',
];

/** Log-softmax of one row of logits. */
function logSoftmax(row: Float32Array): Float64Array {
  let max = -Infinity;
  for (const v of row) max = Math.max(max, v);
  let z = 0;
  for (const v of row) z += Math.exp(v - max);
  const lz = max + Math.log(z);
  return Float64Array.from(row, (v) => v - lz);
}

export interface ParityRow {
  prompt: string;
  sameTokens: boolean;
  onnxTop: number;
  llamaTop: number;
  maxAbs: number;
  meanAbs: number;
}

/** Per prompt: top-1 of both engines and |Δ log p| over onnxruntime's `topK` most likely tokens. */
export async function parity(prompts = PARITY_PROMPTS, topK = 10): Promise<ParityRow[]> {
  const lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 1 }).causalLM(undefined, new AbortController().signal);
  const nlc = (await import('node-llama-cpp')) as typeof import('node-llama-cpp');
  const llama = await nlc.getLlama({ gpu: false, build: 'never', logLevel: nlc.LlamaLogLevel.warn });
  const model = await llama.loadModel({ modelPath: await shippedLmGguf() });
  const context = await model.createContext({ contextSize: 512, threads: { ideal: 1, min: 1 }, sequences: 1, flashAttention: true });
  const sequence = context.getSequence();
  const rows: ParityRow[] = [];
  try {
    for (const prompt of prompts) {
      const ids = lm.encode(prompt);
      const [logits] = await lm.logitsNext([ids], new AbortController().signal);
      const onnx = logSoftmax(logits!);
      await sequence.clearHistory();
      let probs: Map<number, number> | undefined;
      for await (const step of sequence.evaluateWithMetadata(
        ids as import('node-llama-cpp').Token[],
        { probabilities: true },
        { temperature: 0 },
      )) {
        probs = step.probabilities as Map<number, number>;
        break;
      }
      const order = Array.from(onnx.keys()).sort((a, b) => onnx[b]! - onnx[a]!);
      const diffs = order.slice(0, topK).map((id) => Math.abs(Math.log(probs?.get(id) ?? 0) - onnx[id]!));
      rows.push({
        prompt,
        sameTokens: JSON.stringify(model.tokenize(prompt, true)) === JSON.stringify(ids),
        onnxTop: order[0]!,
        llamaTop: probs ? [...probs.keys()][0]! : -1,
        maxAbs: Math.max(...diffs),
        meanAbs: diffs.reduce((a, b) => a + b, 0) / diffs.length,
      });
    }
  } finally {
    await context.dispose();
    await model.dispose();
    await lm.dispose();
  }
  return rows;
}

async function main(): Promise<void> {
  const rows = await parity();
  for (const r of rows)
    console.log(
      `${r.onnxTop === r.llamaTop ? 'same ' : 'DIFF '} top ${String(r.onnxTop).padStart(5)}/${String(r.llamaTop).padStart(5)}  max|Δ| ${r.maxAbs.toFixed(4)}  mean|Δ| ${r.meanAbs.toFixed(4)}  tokens ${r.sameTokens ? 'same' : 'DIFFER'}  ${JSON.stringify(r.prompt.slice(-40))}`,
    );
  const summary = {
    prompts: rows.length,
    top1Agree: rows.filter((r) => r.onnxTop === r.llamaTop).length,
    sameTokenization: rows.filter((r) => r.sameTokens).length,
    maxAbsDeltaLogp: Math.max(...rows.map((r) => r.maxAbs)),
    meanAbsDeltaLogp: rows.reduce((a, r) => a + r.meanAbs, 0) / rows.length,
    over: 'the top 10 tokens of onnxruntime per prompt',
  };
  console.log(JSON.stringify(summary));
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
}

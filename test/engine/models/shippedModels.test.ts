// The shipped models in models/, loaded offline through the registry: tokenizer parity with the
// Python trainer, finite and deterministic logits (and parity with PyTorch), batched greedy
// probing, generation, and normalised embeddings.
import test, { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry, maxLogProb } from '../../../src/engine/models';
import type { CausalLM, Encoder } from '../../../src/engine/models';
import { CancellationError } from '../../../src/engine/util/errors';
import { repoRoot } from '../../helpers/paths';
import { loadOrt } from '../../../src/engine/models/onnxSession';
import { POOLED_OUTPUT } from '../../../src/engine/models/OnnxEncoder';

const modelsDir = join(repoRoot, 'models');
const fixtures = join(__dirname, 'fixtures');
const registry = new ModelRegistry({ modelsDir, threads: 2 });
let lm: CausalLM;
let encoder: Encoder;

before(async () => {
  [lm, encoder] = await Promise.all([
    registry.causalLM(undefined, new AbortController().signal),
    registry.encoder(undefined, new AbortController().signal),
  ]);
});
after(() => registry.dispose());

void test('every model listed in models/manifest.json has its files', () => {
  const manifest = JSON.parse(readFileSync(join(modelsDir, 'manifest.json'), 'utf8')) as { models: { name: string; files: string[] }[] };
  assert.ok(manifest.models.length >= 2);
  for (const m of manifest.models)
    for (const f of m.files) assert.ok(readFileSync(join(modelsDir, m.name, f)).length > 0, `${m.name}/${f}`);
});

void test('the registry caches loaded models and reports load and warm-up timings', async () => {
  assert.equal(await registry.causalLM(undefined, new AbortController().signal), lm);
  assert.equal(await registry.causalLM('coderag-lm', new AbortController().signal), lm);
  assert.ok(lm.timings.loadMs > 0 && lm.timings.warmupMs > 0);
  assert.ok(encoder.timings.loadMs > 0);
});

void test('tokenizer ids match the Python BPE trainer exactly', () => {
  const { cases } = JSON.parse(readFileSync(join(fixtures, 'tokenizer_parity.json'), 'utf8')) as {
    cases: { text: string; ids: number[] }[];
  };
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    assert.deepEqual(lm.encode(c.text), c.ids, JSON.stringify(c.text));
    assert.equal(lm.decode(c.ids), c.text);
  }
  assert.equal(lm.encode('<|endoftext|>')[0], lm.eosId);
});

void test('logits are finite, deterministic and match PyTorch', async () => {
  const ref = JSON.parse(readFileSync(join(fixtures, 'lm_reference.json'), 'utf8')) as {
    input_ids: number[];
    last_logits_head: number[];
    argmax: number;
  };
  const [a] = await lm.logitsNext([ref.input_ids], new AbortController().signal);
  const [b] = await lm.logitsNext([ref.input_ids], new AbortController().signal);
  assert.ok(a && b);
  assert.equal(a.length, lm.vocabSize);
  assert.ok(a.every(Number.isFinite));
  assert.deepEqual(a, b);
  ref.last_logits_head.forEach((v, i) => assert.ok(Math.abs(a[i]! - v) < 2e-3, `logit ${i}: ${a[i]} vs ${v}`));
  assert.equal(maxLogProb(a).id, ref.argmax);
});

void test('batched (left-padded) logits equal unbatched ones', async () => {
  const ids = [lm.encode('import os\n'), lm.encode('public class Main {\n    public static void main(String[] args) {')];
  const batched = await lm.logitsNext(ids, new AbortController().signal);
  for (let i = 0; i < ids.length; i++) {
    const [single] = await lm.logitsNext([ids[i]!], new AbortController().signal);
    const maxDiff = single!.reduce((m, v, k) => Math.max(m, Math.abs(v - batched[i]![k]!)), 0);
    assert.ok(maxDiff < 1e-3, `row ${i} differs by ${maxDiff}`);
  }
});

void test('greedyProbe returns per-step max log-probs equal to recomputed log-softmax maxima', async () => {
  const prompts = ['def read_config(path):\n', 'for (int i = 0; i < n; i++) {\n', 'x = 1\n'];
  const steps = 5;
  const probes = await lm.greedyProbe(prompts, steps, new AbortController().signal);
  assert.equal(probes.length, prompts.length);
  for (const [p, probe] of probes.entries()) {
    assert.equal(probe.tokens.length, steps);
    const prefix = lm.encode(prompts[p]!);
    const rows = probe.tokens.map((_, s) => [...prefix, ...probe.tokens.slice(0, s)]);
    const logits = await lm.logitsNext(rows, new AbortController().signal);
    logits.forEach((row, s) => {
      const { id, logProb } = maxLogProb(row);
      assert.equal(probe.tokens[s], id);
      assert.ok(Math.abs(probe.maxLogProbs[s]! - logProb) < 1e-3, `step ${s}: ${probe.maxLogProbs[s]} vs ${logProb}`);
      assert.ok(logProb <= 0);
    });
  }
});

void test('generate completes code greedily, deterministically, and honours stop strings', async () => {
  const prompt = 'import os\n\n\ndef list_files(directory):\n    """Return the names of the files in directory."""\n';
  const a = await lm.generate(prompt, { maxNewTokens: 24 }, new AbortController().signal);
  const b = await lm.generate(prompt, { maxNewTokens: 24 }, new AbortController().signal);
  assert.ok(a.length > 0);
  assert.equal(a, b);
  const stopped = await lm.generate(prompt, { maxNewTokens: 24, stop: ['\n'] }, new AbortController().signal);
  assert.ok(!stopped.includes('\n'));
  assert.ok(a.startsWith(stopped));
});

void test('an aborted signal cancels probing', async () => {
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(lm.greedyProbe(['x = 1\n'], 3, ac.signal), CancellationError);
});

void test('embeddings are L2-normalised, of the expected dimension, and independent of batching (up to int8 rounding)', async () => {
  const texts = ['def add(a, b):\n    return a + b\n', 'public int size() { return count; }', 'x'.repeat(5000), ''];
  const vs = await encoder.embed(texts, new AbortController().signal);
  assert.equal(vs.length, texts.length);
  for (const v of vs) {
    assert.equal(v.length, encoder.dim);
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    assert.ok(Math.abs(norm - 1) < 1e-4, `norm ${norm}`);
  }
  const [single] = await encoder.embed([texts[0]!], new AbortController().signal);
  // The int8 graph quantises activations per run, so a batch's other rows move a vector slightly
  // (cosine >= 0.9991 over 200 JDK items, models/coderag-encoder/README.md).
  const cosine = single!.reduce((s, x, i) => s + x * vs[0]![i]!, 0);
  assert.ok(cosine > 0.999, `cosine ${cosine}`);
});

void test('the shipped encoder graph pools itself: its sentence_embedding is the mean of its hidden states over the mask', async () => {
  const ort = await loadOrt();
  const session = await ort.InferenceSession.create(join(modelsDir, 'coderag-encoder', 'onnx', 'model.onnx'));
  try {
    assert.ok(session.outputNames.includes(POOLED_OUTPUT), `outputs ${session.outputNames.join(', ')}`);
    // Two rows of different lengths: the shorter one is padded, and its padding must not count.
    const rows = [
      [5, 100, 2000, 31, 7, 450, 12],
      [900, 33, 4],
    ];
    const width = Math.max(...rows.map((r) => r.length));
    const ids = new BigInt64Array(2 * width);
    const mask = new BigInt64Array(2 * width);
    rows.forEach((r, i) => r.forEach((t, s) => ((ids[i * width + s] = BigInt(t)), (mask[i * width + s] = 1n))));
    const out = await session.run(
      { input_ids: new ort.Tensor('int64', ids, [2, width]), attention_mask: new ort.Tensor('int64', mask, [2, width]) },
      ['last_hidden_state', POOLED_OUTPUT],
    );
    const hidden = out.last_hidden_state!.data as Float32Array;
    const pooled = out[POOLED_OUTPUT]!.data as Float32Array;
    const D = encoder.dim;
    assert.deepEqual(out[POOLED_OUTPUT]!.dims, [2, D]);
    rows.forEach((r, i) => {
      for (let d = 0; d < D; d++) {
        let sum = 0;
        for (let s = 0; s < r.length; s++) sum += hidden[(i * width + s) * D + d]!;
        assert.ok(Math.abs(sum / r.length - pooled[i * D + d]!) < 1e-4, `row ${i} dim ${d}: ${sum / r.length} vs ${pooled[i * D + d]}`);
      }
    });
  } finally {
    await session.release();
  }
});

void test('the encoder ranks a definition closer to its call site than an unrelated one', async () => {
  const [q, target, other] = await encoder.embed(
    [
      'files = list_files(',
      'def list_files(directory):\n    """Return the names of the files in directory."""\n    return os.listdir(directory)\n',
      'public void setColor(Color c) {\n        this.color = c;\n        repaint();\n    }\n',
    ],
    new AbortController().signal,
  );
  const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
  assert.ok(dot(q!, target!) > dot(q!, other!));
});

void test("a single text (a query) gets the same vector from the encoder's one-thread session as from its batch session", async () => {
  // The same encoder without the one-thread session embeds a single text on its batch session.
  const batchOnly = new ModelRegistry({ modelsDir, threads: 2, singleRowSession: false });
  try {
    const other = await batchOnly.encoder(undefined, new AbortController().signal);
    const texts = [
      '        for name, value in self.items():\n            result = env.getattr(value, name)\n',
      'String s = builder.toString();',
    ];
    for (const text of texts) {
      const [a] = await encoder.embed([text], new AbortController().signal);
      const [b] = await other.embed([text], new AbortController().signal);
      const cosine = a!.reduce((s, x, i) => s + x * b![i]!, 0);
      assert.ok(cosine > 0.99999, `cosine ${cosine}`);
    }
  } finally {
    await batchOnly.dispose();
  }
});

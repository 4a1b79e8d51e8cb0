// Smoke test of models/training: the whole pipeline (corpus, BPE, LM, encoder, ONNX export,
// fixtures) on a tiny corpus for a few steps, then the Node loader on what it exported.
// Runs where /usr/bin/python3 has torch, onnx, regex and numpy; skipped with the reason otherwise.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry } from '../../../src/engine/models';
import { repoRoot, tempDir } from '../../helpers/paths';

const python = '/usr/bin/python3';

function missingPython(): string | undefined {
  if (!existsSync(python)) return `${python} not found`;
  const r = spawnSync(python, ['-c', 'import torch, onnx, regex, numpy'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) return `${python} cannot import torch/onnx/regex/numpy (apt-get install python3-torch python3-onnx python3-regex): ${(r.stderr || '').trim().split('\n').pop()}`;
  return undefined;
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: join(repoRoot, 'models', 'training'), env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const reason = missingPython();
if (reason) console.log(`# skipping the training pipeline smoke test: ${reason}`);

void test('the training pipeline trains and exports tiny models that the Node loader runs', { skip: reason, timeout: 300_000 }, async () => {
  const tmp = tempDir('coderag-train-');
  try {
    const work = join(tmp.path, 'work');
    const models = join(tmp.path, 'models');
    const fixture = join(tmp.path, 'parity.json');
    const r = await run(python, ['pipeline.py', '--smoke', '--work', work, '--models', models, '--fixtures', fixture], 240_000);
    assert.equal(r.code, 0, r.output.slice(-3000));
    for (const stage of ['corpus', 'tokenizer', 'encode', 'lm', 'export-lm', 'encoder', 'export-encoder', 'fixtures']) {
      assert.match(r.output, new RegExp(`== ${stage} done`));
    }
    const results = JSON.parse(readFileSync(join(work, 'encoder', 'results.json'), 'utf8')) as { tfidf: { 'mrr@10': number }; encoder: { 'mrr@10': number } };
    assert.ok(results.tfidf['mrr@10'] >= 0 && results.encoder['mrr@10'] >= 0);

    const reg = new ModelRegistry({ modelsDir: models, threads: 1 });
    try {
      const lm = await reg.causalLM();
      const { cases } = JSON.parse(readFileSync(fixture, 'utf8')) as { cases: { text: string; ids: number[] }[] };
      for (const c of cases) assert.deepEqual(lm.encode(c.text), c.ids);
      const out = await lm.generate('def f(x):\n', { maxNewTokens: 5 }, new AbortController().signal);
      assert.equal(typeof out, 'string');
      const [probe] = await lm.greedyProbe(['import os\n'], 3, new AbortController().signal);
      assert.equal(probe!.maxLogProbs.length, 3);
      const enc = await reg.encoder();
      const [v] = await enc.embed(['class A: pass'], new AbortController().signal);
      assert.equal(v!.length, enc.dim);
    } finally {
      await reg.dispose();
    }
  } finally {
    tmp.cleanup();
  }
});

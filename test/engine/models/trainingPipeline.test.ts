// Smoke test of models/training: the whole pipeline (corpus, BPE, LM, encoder, ONNX export,
// fixtures) on a tiny corpus for a few steps, then the Node loader on what it exported.
// Runs where /usr/bin/python3 has torch, onnx, regex and numpy; skipped with the reason otherwise.
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry } from '../../../src/engine/models';
import { repoRoot, tempDir } from '../../helpers/paths';

const python = '/usr/bin/python3';

function missingPython(): string | undefined {
  if (!existsSync(python)) return `${python} not found`;
  const r = spawnSync(python, ['-c', 'import torch, onnx, regex, numpy'], { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0)
    return `${python} cannot import torch/onnx/regex/numpy (apt-get install python3-torch python3-onnx python3-regex): ${(r.stderr || '').trim().split('\n').pop()}`;
  return undefined;
}

/** Each vector of `a` points where the same one of `b` does (unit vectors: the cosine is the dot product). */
function assertSameDirections(a: Float32Array[], b: Float32Array[], minCosine: number): void {
  assert.equal(a.length, b.length);
  a.forEach((v, i) => {
    let cosine = 0;
    for (let d = 0; d < v.length; d++) cosine += v[d]! * b[i]![d]!;
    assert.ok(cosine > minCosine, `text ${i}: cosine ${cosine}`);
  });
}

function run(cmd: string, args: string[], timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return runEnv(cmd, args, {}, timeoutMs);
}

function runEnv(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: join(repoRoot, 'models', 'training'),
      env: { ...process.env, OMP_WAIT_POLICY: 'PASSIVE', ...env },
    });
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

void test(
  'the training pipeline trains and exports tiny models that the Node loader runs',
  { skip: reason, timeout: 600_000 },
  async () => {
    const tmp = tempDir('coderag-train-');
    try {
      const work = join(tmp.path, 'work');
      const models = join(tmp.path, 'models');
      const fixture = join(tmp.path, 'parity.json');
      const r = await run(python, ['pipeline.py', '--smoke', '--work', work, '--models', models, '--fixtures', fixture], 240_000);
      assert.equal(r.code, 0, r.output.slice(-3000));
      for (const stage of ['corpus', 'tokenizer', 'encode', 'rag', 'lm', 'export-lm', 'encoder', 'export-encoder', 'fixtures']) {
        assert.match(r.output, new RegExp(`== ${stage} done`));
      }
      // The retrieval-augmented examples were built and the LM trained on them (loss measured after their fragments).
      const rag = /rag train: (\d+) examples/.exec(r.output);
      assert.ok(rag && Number(rag[1]) > 0, r.output.slice(-3000));
      assert.match(r.output, /final rag \(held-out repositories, tokens after the fragments\): py \d/);
      const results = JSON.parse(readFileSync(join(work, 'encoder', 'results.json'), 'utf8')) as {
        tfidf: { 'mrr@10': number };
        encoder: { 'mrr@10': number };
      };
      assert.ok(results.tfidf['mrr@10'] >= 0 && results.encoder['mrr@10'] >= 0);

      const reg = new ModelRegistry({ modelsDir: models, threads: 1 });
      try {
        const lm = await reg.causalLM(undefined, new AbortController().signal);
        const { cases } = JSON.parse(readFileSync(fixture, 'utf8')) as { cases: { text: string; ids: number[] }[] };
        for (const c of cases) assert.deepEqual(lm.encode(c.text), c.ids);
        const out = await lm.generate('def f(x):\n', { maxNewTokens: 5 }, new AbortController().signal);
        assert.equal(typeof out, 'string');
        const [probe] = await lm.greedyProbe(['import os\n'], 3, new AbortController().signal);
        assert.equal(probe!.maxLogProbs.length, 3);
        const enc = await reg.encoder(undefined, new AbortController().signal);
        const [v] = await enc.embed(['class A: pass'], new AbortController().signal);
        assert.equal(v!.length, enc.dim);
      } finally {
        await reg.dispose();
      }

      // The shallower encoder distilled from the exported one (the shipped encoder's recipe), exported
      // as the encoder is and run by the same loader.
      const distilled = join(work, 'encoder-distilled');
      const d = await run(
        python,
        [
          'distill_encoder.py',
          '--work',
          work,
          '--teacher',
          join(models, 'coderag-encoder', 'onnx', 'model.onnx'),
          '--out',
          distilled,
          '--layers',
          '1',
          '--blocks',
          '0',
          '--max-steps',
          '2',
          '--batch',
          '4',
          '--max-len',
          '64',
          '--max-files',
          '10',
          '--eval-max-files',
          '3',
        ],
        180_000,
      );
      assert.equal(d.code, 0, d.output.slice(-3000));
      const dres = JSON.parse(readFileSync(join(distilled, 'results.json'), 'utf8')) as {
        teacher: { 'mrr@10': number };
        student: { 'mrr@10': number };
        steps: number;
      };
      assert.ok(dres.teacher['mrr@10'] >= 0 && dres.student['mrr@10'] >= 0 && dres.steps === 2, JSON.stringify(dres));
      const studentModels = join(tmp.path, 'student-models');
      const se = await run(
        python,
        [
          'export_encoder.py',
          '--work',
          work,
          '--ckpt',
          join(distilled, 'encoder.pt'),
          '--out',
          join(studentModels, 'coderag-encoder'),
          '--max-length',
          '64',
        ],
        120_000,
      );
      assert.equal(se.code, 0, se.output.slice(-2000));
      const reg3 = new ModelRegistry({ modelsDir: studentModels, threads: 1 });
      // fuse_encoder.py (the shipped graph's last step): the graph pools itself, and the loader's
      // vectors from it are the ones it pooled in JavaScript before, for a padded batch too.
      const fusedModels = join(tmp.path, 'fused-models');
      cpSync(join(studentModels, 'coderag-encoder'), join(fusedModels, 'coderag-encoder'), { recursive: true });
      const fusedGraph = join(fusedModels, 'coderag-encoder', 'onnx', 'model.onnx');
      const fu = await run(
        python,
        ['fuse_encoder.py', '--model', join(studentModels, 'coderag-encoder', 'onnx', 'model.onnx'), '--out', fusedGraph],
        60_000,
      );
      assert.equal(fu.code, 0, fu.output.slice(-2000));
      const reg4 = new ModelRegistry({ modelsDir: fusedModels, threads: 1 });
      try {
        const enc = await reg3.encoder(undefined, new AbortController().signal);
        const texts = ['class A: pass', 'def area(self):\n    return self.width * self.height\n', 'x = 1'];
        const plain = await enc.embed(texts, new AbortController().signal);
        assert.equal(plain[0]!.length, enc.dim);
        const fused = await (await reg4.encoder(undefined, new AbortController().signal)).embed(texts, new AbortController().signal);
        assertSameDirections(plain, fused, 0.99999);
      } finally {
        await reg3.dispose();
        await reg4.dispose();
      }
      // A student trained further starts from a graph's weights (--init; the shipped one is int8):
      // with no step taken, the graph exported from it gives the vectors of the graph it started from.
      const again = join(work, 'encoder-distilled-again');
      const d2 = await run(
        python,
        [
          'distill_encoder.py',
          '--work',
          work,
          '--teacher',
          join(models, 'coderag-encoder', 'onnx', 'model.onnx'),
          '--out',
          again,
          '--init',
          fusedGraph,
          '--item-len',
          '32',
          '--max-steps',
          '0',
          '--batch',
          '4',
          '--max-len',
          '64',
          '--max-files',
          '10',
          '--eval-max-files',
          '3',
        ],
        180_000,
      );
      assert.equal(d2.code, 0, d2.output.slice(-3000));
      const againModels = join(tmp.path, 'again-models');
      const se2 = await run(
        python,
        [
          'export_encoder.py',
          '--work',
          work,
          '--ckpt',
          join(again, 'encoder.pt'),
          '--out',
          join(againModels, 'coderag-encoder'),
          '--max-length',
          '64',
        ],
        120_000,
      );
      assert.equal(se2.code, 0, se2.output.slice(-2000));
      const reg5 = new ModelRegistry({ modelsDir: fusedModels, threads: 1 });
      const reg6 = new ModelRegistry({ modelsDir: againModels, threads: 1 });
      try {
        const texts = ['class A: pass', 'def area(self):\n    return self.width * self.height\n'];
        const from = await (await reg5.encoder(undefined, new AbortController().signal)).embed(texts, new AbortController().signal);
        const back = await (await reg6.encoder(undefined, new AbortController().signal)).embed(texts, new AbortController().signal);
        assertSameDirections(from, back, 0.999);
      } finally {
        await reg5.dispose();
        await reg6.dispose();
      }

      // Resumable: a second run with --resume continues from the checkpoint's step.
      const tiny = ['--layers', '1', '--d', '32', '--heads', '2', '--ctx', '128', '--batch', '2', '--eval-tokens', '512'];
      const resumed = await run(python, ['train_lm.py', '--work', work, '--resume', '--max-steps', '5', ...tiny], 120_000);
      assert.equal(resumed.code, 0, resumed.output.slice(-2000));
      assert.match(resumed.output, /resumed at step 3/);
      assert.match(resumed.output, /final step 5:/);
      // The warm start reads the exported model back (the shipped model's case), on --device auto.
      const warm = await run(
        python,
        [
          'train_lm.py',
          '--work',
          work,
          '--out',
          join(work, 'lm-warm'),
          '--init-onnx',
          join(models, 'coderag-lm'),
          '--device',
          'auto',
          '--max-steps',
          '2',
          '--batch',
          '2',
          '--eval-tokens',
          '512',
        ],
        120_000,
      );
      assert.equal(warm.code, 0, warm.output.slice(-2000));
      assert.match(warm.output, new RegExp(`from ${join(models, 'coderag-lm').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      // Bits per character of the exported model on the held-out split, per language.
      const bpc = await run(python, ['eval_lm.py', '--work', work, '--onnx', join(models, 'coderag-lm')], 120_000);
      assert.equal(bpc.code, 0, bpc.output.slice(-2000));
      const res = JSON.parse(bpc.output.trim().split('\n').pop()!) as Record<string, { bits_per_char: number; chars: number }>;
      assert.ok(res.python!.chars > 0 && res.python!.bits_per_char > 0 && Number.isFinite(res.python!.bits_per_char), bpc.output);

      // The GPU recipe, rehearsed on CPU at tiny size: pack the corpus, run the device job, bring
      // the weights back in files the device tool returns (at most 8, each under 16 MiB), export.
      const carry = join(tmp.path, 'carry');
      const packed = await run('bash', ['gpu_carry.sh', work, carry], 60_000);
      assert.equal(packed.code, 0, packed.output);
      const out = join(tmp.path, 'out');
      mkdirSync(out);
      const job = await runEnv(
        'bash',
        ['gpu_job.sh'],
        {
          CARRY: carry,
          OUT: out,
          DEVICE: 'cpu',
          SIZE: 'tiny',
          MINUTES: '1',
          BATCH: '2',
          GPU_WORK: join(tmp.path, 'gpu-work'),
          PYTHON: python,
          EXTRA: '--max-steps 3 --eval-tokens 512',
          CTX: '128',
          RAG_SPLIT: 'train=40,val=8',
          RAG_FRAG_SHARE: '0.6',
        },
        180_000,
      );
      assert.equal(job.code, 0, job.output.slice(-3000));
      // The device job builds the retrieval-augmented examples there and trains on them too.
      assert.match(readFileSync(join(out, 'train.log'), 'utf8'), /final rag \(held-out repositories/);
      const back = readdirSync(out);
      assert.ok(
        back.length <= 8 && back.every((f) => statSync(join(out, f)).size < 16 * 2 ** 20 && /^[A-Za-z0-9._-]+$/.test(f)),
        back.join(' '),
      );
      const ckpt = join(tmp.path, 'lm-gpu', 'best.pt');
      const joined = await run(python, ['shard_weights.py', 'join', '--shards', out, '--ckpt', ckpt], 60_000);
      assert.equal(joined.code, 0, joined.output);
      const gpuModels = join(tmp.path, 'gpu-models', 'coderag-lm');
      const exported = await run(
        python,
        ['export_lm.py', '--work', join(tmp.path, 'gpu-work'), '--ckpt', ckpt, '--out', gpuModels],
        120_000,
      );
      assert.equal(exported.code, 0, exported.output);
      const reg2 = new ModelRegistry({ modelsDir: join(tmp.path, 'gpu-models'), threads: 1 });
      try {
        const lm = await reg2.causalLM(undefined, new AbortController().signal);
        assert.equal(typeof (await lm.generate('def f(x):\n', { maxNewTokens: 3 }, new AbortController().signal)), 'string');
      } finally {
        await reg2.dispose();
      }
    } finally {
      tmp.cleanup();
    }
  },
);

function tarball(dir: string, name: string, files: Record<string, string>): void {
  const root = join(dir, 'build', name);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  const r = spawnSync(
    'tar',
    ['--sort=name', '-czf', join(dir, 'src', `${name.replace('-', '_')}.orig.tar.gz`), '-C', join(dir, 'build'), name],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
}

function javaClass(name: string, methods: number, variant = ''): string {
  const body = Array.from(
    { length: methods },
    (_, i) => `    public int method${i}(int value) {\n        return ${name.toLowerCase()}Scale(value, ${i});\n    }\n`,
  ).join('');
  return `package org.example;\n\npublic class ${name} {\n${body}${variant}}\n`;
}

void test(
  'the corpus drops exact and near copies, refuses dev-repository sources and holds out whole repositories',
  { skip: reason, timeout: 120_000 },
  async () => {
    const tmp = tempDir('coderag-corpus-');
    try {
      const deb = join(tmp.path, 'debian');
      mkdirSync(join(deb, 'src'), { recursive: true });
      const original = javaClass('Widget', 12);
      tarball(deb, 'heldout-1.0', { 'src/Held.java': javaClass('Held', 10) });
      tarball(deb, 'library-2.0', {
        'src/org/example/Widget.java': original,
        // the same file reformatted: an exact copy once whitespace is ignored
        'src/org/example/copy/Widget.java': original.replace(/\n {4}/g, '\n\t'),
        // one method more: a near copy (Jaccard over lines well above 0.7)
        'src/org/example/fork/Widget.java': javaClass('Widget', 12, '    public void extra() {}\n'),
        // a near copy of the held-out repository's file: must not train
        'src/org/example/Held.java': javaClass('Held', 10, '    // local change\n'),
        // a repackaged dev repository (commons-codec): refused by path
        'src/org/apache/commons/codec/Codec.java': javaClass('Codec', 3),
        'src/org/example/Other.java':
          'package org.example;\n\nclass Other {\n    String name() { return "other"; }\n    int size() { return 3; }\n    boolean empty() { return false; }\n    long id() { return 7L; }\n    double ratio() { return 0.5; }\n}\n',
      });
      const work = join(tmp.path, 'work');
      const r = await run(
        python,
        ['corpus.py', '--work', work, '--debian', deb, '--val-repos', 'heldout', '--max-java-mb', '0', '--max-python-files', '0'],
        60_000,
      );
      assert.equal(r.code, 0, r.output);
      const read = (split: string) =>
        readFileSync(join(work, 'corpus', `${split}.jsonl`), 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { path: string; repo: string });
      const train = read('train')
        .map((d) => d.path)
        .sort();
      const val = read('val');
      assert.deepEqual(
        val.map((d) => d.repo),
        ['heldout'],
      );
      assert.deepEqual(train, ['library/src/org/example/Other.java', 'library/src/org/example/Widget.java']);
      const stats = JSON.parse(readFileSync(join(work, 'corpus', 'stats.json'), 'utf8')) as { dropped: Record<string, number> };
      assert.deepEqual([stats.dropped.exact, stats.dropped.near, stats.dropped.dev_path], [1, 2, 1]);
    } finally {
      tmp.cleanup();
    }
  },
);

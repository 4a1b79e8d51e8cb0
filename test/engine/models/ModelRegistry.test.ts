// Registry resolution and its typed errors: missing and corrupt models, wrong configs, and the
// Hugging Face download path (a local server standing in for the hub, and an unreachable hub).
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ModelRegistry, isModelError } from '../../../src/engine/models';
import type { DownloadProgress, ModelErrorCode } from '../../../src/engine/models';
import { repoRoot, tempDir } from '../../helpers/paths';

const modelsDir = join(repoRoot, 'models');
const tmp = tempDir('coderag-models-');
after(() => tmp.cleanup());

function expectModelError(code: ModelErrorCode, pattern?: RegExp) {
  return (e: unknown): boolean => {
    assert.ok(isModelError(e), `expected a ModelError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    if (pattern) assert.match(e.message, pattern);
    return true;
  };
}

/** A copy of a shipped model folder under the temp dir, to damage. */
function copyModel(name: string, as: string): string {
  const dir = join(tmp.path, 'user', as);
  cpSync(join(modelsDir, name), dir, { recursive: true });
  return dir;
}

void test('an unknown model name is a "missing" error naming the folders searched', async () => {
  const reg = new ModelRegistry({ modelsDir, warmup: false });
  await assert.rejects(
    reg.causalLM('no-such-model', new AbortController().signal),
    expectModelError('missing', /no-such-model.*not found/),
  );
  await assert.rejects(reg.encoder(join(tmp.path, 'nowhere'), new AbortController().signal), expectModelError('missing', /does not exist/));
  await reg.dispose();
});

void test('a model folder without its .onnx file is "missing"; an empty one is "corrupt"', async () => {
  const gone = copyModel('coderag-lm', 'no-onnx');
  rmSync(join(gone, 'onnx'), { recursive: true });
  const empty = copyModel('coderag-lm', 'empty-onnx');
  writeFileSync(join(empty, 'onnx', 'decoder_model_merged.onnx'), '');
  const reg = new ModelRegistry({ modelsDir, userModelsDir: join(tmp.path, 'user'), warmup: false });
  await assert.rejects(
    reg.causalLM('no-onnx', new AbortController().signal),
    expectModelError('missing', /missing onnx\/decoder_model_merged.onnx/),
  );
  await assert.rejects(reg.causalLM('empty-onnx', new AbortController().signal), expectModelError('corrupt', /empty/));
  await reg.dispose();
});

void test('a truncated .onnx is a "corrupt" error, and the registry stays usable', async () => {
  const dir = copyModel('coderag-lm', 'truncated-lm');
  const file = join(dir, 'onnx', 'decoder_model_merged.onnx');
  truncateSync(file, Math.floor(statSync(file).size / 2));
  const encDir = copyModel('coderag-encoder', 'truncated-encoder');
  truncateSync(join(encDir, 'onnx', 'model.onnx'), 1000);
  const reg = new ModelRegistry({ modelsDir, userModelsDir: join(tmp.path, 'user'), warmup: false });
  await assert.rejects(
    reg.causalLM('truncated-lm', new AbortController().signal),
    expectModelError('corrupt', /not a loadable ONNX model/),
  );
  await assert.rejects(reg.encoder(encDir, new AbortController().signal), expectModelError('corrupt'));
  // a failed load is not cached: the same registry still loads good models
  const lm = await reg.causalLM(undefined, new AbortController().signal);
  assert.ok(lm.vocabSize > 0);
  await reg.dispose();
});

void test('a wrong or unreadable config.json is a "config" / "corrupt" error', async () => {
  const wrongType = copyModel('coderag-lm', 'wrong-type');
  const cfg = JSON.parse(readFileSync(join(wrongType, 'config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(wrongType, 'config.json'), JSON.stringify({ ...cfg, model_type: 'bert' }));
  const wrongLayers = copyModel('coderag-lm', 'wrong-layers');
  writeFileSync(join(wrongLayers, 'config.json'), JSON.stringify({ ...cfg, n_layer: (cfg.n_layer as number) + 2 }));
  const wrongVocab = copyModel('coderag-lm', 'wrong-vocab');
  writeFileSync(join(wrongVocab, 'config.json'), JSON.stringify({ ...cfg, vocab_size: 123 }));
  const badJson = copyModel('coderag-encoder', 'bad-json');
  writeFileSync(join(badJson, 'config.json'), '{"model_type": "bert", ');
  const reg = new ModelRegistry({ modelsDir, userModelsDir: join(tmp.path, 'user') });
  await assert.rejects(reg.causalLM('wrong-type', new AbortController().signal), expectModelError('config', /model_type/));
  await assert.rejects(reg.causalLM('wrong-layers', new AbortController().signal), expectModelError('config', /past_key_values/));
  await assert.rejects(reg.causalLM('wrong-vocab', new AbortController().signal), expectModelError('config', /vocab_size/));
  await assert.rejects(reg.encoder('bad-json', new AbortController().signal), expectModelError('corrupt', /not valid JSON/));
  await reg.dispose();
});

void test('a Hugging Face id downloads into the cache with progress, then loads offline from it', async () => {
  const served: string[] = [];
  const server = createServer((req, res) => {
    const m = /^\/acme\/tiny-encoder\/resolve\/main\/(.+)$/.exec(req.url ?? '');
    const file = m ? join(modelsDir, 'coderag-encoder', m[1]!) : '';
    try {
      const body = readFileSync(file);
      served.push(m![1]!);
      res.writeHead(200, { 'content-length': body.length });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const progress: DownloadProgress[] = [];
  const cacheDir = join(tmp.path, 'cache');
  try {
    const reg = new ModelRegistry({ modelsDir, cacheDir, hubUrl, onDownloadProgress: (p) => progress.push(p), warmup: false });
    const enc = await reg.encoder('acme/tiny-encoder', new AbortController().signal);
    assert.equal((await enc.embed(['def f(): pass'], new AbortController().signal))[0]!.length, enc.dim);
    assert.deepEqual(served.sort(), ['config.json', 'onnx/model.onnx', 'tokenizer.json', 'tokenizer_config.json']);
    const done = progress.filter((p) => p.done).map((p) => p.file);
    assert.equal(done.length, 4);
    const onnxEvents = progress.filter((p) => p.file === 'onnx/model.onnx');
    assert.equal(onnxEvents.at(-1)!.loadedBytes, onnxEvents.at(-1)!.totalBytes);
    await reg.dispose();
    // a second registry finds everything in the cache and fetches nothing
    served.length = 0;
    const again = new ModelRegistry({ modelsDir, cacheDir, hubUrl: 'http://127.0.0.1:9', warmup: false });
    await again.encoder('acme/tiny-encoder', new AbortController().signal);
    assert.equal(served.length, 0);
    await assert.rejects(
      again.causalLM('acme/missing-model', new AbortController().signal),
      expectModelError('download', /Could not download/),
    );
    await again.dispose();
  } finally {
    server.close();
  }
});

void test('an unreachable hub is a "download" error, not a hang', async () => {
  const reg = new ModelRegistry({
    modelsDir,
    cacheDir: join(tmp.path, 'cache2'),
    hubUrl: 'http://127.0.0.1:9',
    downloadStallTimeoutMs: 5000,
  });
  const t0 = Date.now();
  await assert.rejects(
    reg.causalLM('someone/some-model', new AbortController().signal),
    expectModelError('download', /someone\/some-model/),
  );
  assert.ok(Date.now() - t0 < 6000);
  await reg.dispose();
});

void test('a stalled download times out with a "download" error', async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': 1000 });
    res.write('{');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const reg = new ModelRegistry({ modelsDir, cacheDir: join(tmp.path, 'cache3'), hubUrl, downloadStallTimeoutMs: 300 });
    await assert.rejects(reg.encoder('slow/model', new AbortController().signal), expectModelError('download', /no data for 300 ms/));
    await reg.dispose();
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

void test('an encoder build has a fingerprint: a byte-identical copy shares it, changed settings do not', async () => {
  const same = copyModel('coderag-encoder', 'enc-same');
  const changed = copyModel('coderag-encoder', 'enc-changed');
  const configPath = join(changed, 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as { coderag?: Record<string, unknown> };
  writeFileSync(configPath, JSON.stringify({ ...config, coderag: { ...config.coderag, max_length: 64 } }));
  const reg = new ModelRegistry({ modelsDir, userModelsDir: join(tmp.path, 'user'), warmup: false });
  try {
    const [shipped, copy, other] = await Promise.all([
      reg.encoder(undefined, new AbortController().signal),
      reg.encoder(same, new AbortController().signal),
      reg.encoder(changed, new AbortController().signal),
    ]);
    assert.match(shipped.fingerprint ?? '', /^[0-9a-f]{16}$/);
    assert.equal(copy.fingerprint, shipped.fingerprint, 'where the folder lives does not matter');
    assert.notEqual(other.fingerprint, shipped.fingerprint, 'vectors truncated at 64 tokens are different vectors');
  } finally {
    await reg.dispose();
  }
});

// The execution-provider choice (coderag.models.device, --device): parsing, the plan per platform,
// and real shipped models asked for CUDA on a machine without its provider: they run on the CPU
// and the placement records a clear error.
import test, { after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry } from '../../../src/engine/models';
import {
  fallbackPlacement,
  isModelDevice,
  MODEL_DEVICES,
  parseModelDevice,
  platformAccelerator,
  probeProviders,
  providerPlan,
  providerUnavailable,
  type ProviderProbe,
} from '../../../src/engine/models/device';
import { loadOrt } from '../../../src/engine/models/onnxSession';
import { DEFAULT_RERANKER, loadDistilledReranker } from '../../../src/engine/rerank/DistilledReranker';
import { repoRoot, tempDir } from '../../helpers/paths';

const modelsDir = join(repoRoot, 'models');
const tmp = tempDir('coderag-device-');
after(() => tmp.cleanup());

const LINUX: ProviderProbe = {
  platform: 'linux',
  bindingDir: join(tmp.path, 'no-cuda'),
  backends: [
    { name: 'cpu', bundled: true },
    { name: 'webgpu', bundled: true },
    { name: 'cuda', bundled: false },
    { name: 'tensorrt', bundled: false },
  ],
};
const WINDOWS: ProviderProbe = {
  platform: 'win32',
  backends: [
    { name: 'cpu', bundled: true },
    { name: 'dml', bundled: true },
    { name: 'cuda', bundled: false },
  ],
};
const MAC: ProviderProbe = {
  platform: 'darwin',
  backends: [
    { name: 'cpu', bundled: true },
    { name: 'coreml', bundled: true },
  ],
};

void test('device values parse case-insensitively; empty is auto; anything else is an error naming the choices', () => {
  assert.deepEqual([...MODEL_DEVICES], ['auto', 'cpu', 'cuda', 'dml', 'coreml']);
  for (const d of MODEL_DEVICES) assert.equal(parseModelDevice(d), d);
  assert.equal(parseModelDevice('CUDA'), 'cuda');
  assert.equal(parseModelDevice(' cpu '), 'cpu');
  assert.equal(parseModelDevice(undefined), 'auto');
  assert.equal(parseModelDevice(''), 'auto');
  assert.throws(() => parseModelDevice('gpu'), /device must be one of auto, cpu, cuda, dml, coreml \(got "gpu"\)/);
  assert.throws(() => parseModelDevice(1), RangeError);
  assert.equal(isModelDevice('rocm'), false);
});

void test('auto tries the platform accelerator only where its provider is present', () => {
  assert.equal(platformAccelerator('linux', 'x64'), 'cuda');
  assert.equal(platformAccelerator('linux', 'arm64'), undefined);
  assert.equal(platformAccelerator('win32', 'x64'), 'dml');
  assert.equal(platformAccelerator('darwin', 'arm64'), 'coreml');

  const linux = providerPlan('auto', LINUX);
  assert.equal(linux.tryFirst, undefined);
  assert.equal(linux.placement.provider, 'cpu');
  assert.equal(linux.placement.error, undefined, 'auto falling back is not an error');
  assert.match(linux.placement.note ?? '', /CUDA execution provider is not installed .*--onnxruntime-node-install=cuda12/);

  assert.equal(providerPlan('auto', WINDOWS).tryFirst, 'dml');
  assert.equal(providerPlan('auto', MAC).tryFirst, 'coreml');

  // Once the CUDA libraries are installed next to the binding, auto and cuda try CUDA.
  const installed = join(tmp.path, 'cuda');
  mkdirSync(installed, { recursive: true });
  writeFileSync(join(installed, 'libonnxruntime_providers_cuda.so'), '');
  const withCuda = { ...LINUX, bindingDir: installed };
  assert.equal(providerUnavailable('cuda', withCuda), undefined);
  assert.equal(providerPlan('auto', withCuda).tryFirst, 'cuda');
  assert.equal(providerPlan('cuda', withCuda).tryFirst, 'cuda');
});

void test('an explicit provider that cannot be used is an error, and the model goes to the CPU', () => {
  const cpu = providerPlan('cpu', LINUX);
  assert.deepEqual(cpu, { placement: { device: 'cpu', provider: 'cpu' } });

  const cuda = providerPlan('cuda', LINUX);
  assert.equal(cuda.tryFirst, undefined);
  assert.equal(cuda.placement.provider, 'cpu');
  assert.match(cuda.placement.error ?? '', /^CUDA was asked for \(device "cuda"\) but the CUDA execution provider is not installed/);

  assert.match(
    providerPlan('dml', LINUX).placement.error ?? '',
    /DirectML execution provider is not part of onnxruntime-node on linux \(it is for Windows\)/,
  );
  assert.match(providerPlan('coreml', WINDOWS).placement.error ?? '', /CoreML .* \(it is for macOS\)/);

  // A provider that is present but fails to create the session.
  const failed = fallbackPlacement('cuda', 'cuda', 'CUDA driver version is insufficient');
  assert.equal(failed.provider, 'cpu');
  assert.match(failed.error ?? '', /CUDA execution provider did not load \(CUDA driver version is insufficient\); running on the CPU/);
  const autoFailed = fallbackPlacement('auto', 'dml', 'no adapter');
  assert.equal(autoFailed.error, undefined);
  assert.match(autoFailed.note ?? '', /DirectML execution provider did not load \(no adapter\)/);
});

void test('this onnxruntime-node lists its providers; the CPU is always usable', async () => {
  const probe = probeProviders(await loadOrt());
  assert.ok(probe.backends.some((b) => b.name === 'cpu'));
  assert.equal(providerUnavailable('cpu', probe), undefined);
});

void test('shipped models asked for cpu run on the CPU with nothing to report', async () => {
  const registry = new ModelRegistry({ modelsDir, threads: 1, warmup: false, device: 'cpu' });
  try {
    const lm = await registry.causalLM(undefined, new AbortController().signal);
    assert.deepEqual(lm.placement, { device: 'cpu', provider: 'cpu' });
    assert.deepEqual(registry.placements(), [{ kind: 'causalLM', name: 'coderag-lm', placement: { device: 'cpu', provider: 'cpu' } }]);
  } finally {
    await registry.dispose();
  }
});

void test('shipped models asked for cuda where CUDA cannot load: they run on the CPU, the error is recorded, results are unchanged', async (t) => {
  const probe = probeProviders(await loadOrt());
  if (providerUnavailable('cuda', probe) === undefined) {
    t.skip('the CUDA provider is installed here');
    return;
  }
  const onCpu = new ModelRegistry({ modelsDir, threads: 1, warmup: false, device: 'cpu' });
  const onCuda = new ModelRegistry({ modelsDir, threads: 1, warmup: false, device: 'cuda' });
  try {
    const lm = await onCuda.causalLM(undefined, new AbortController().signal);
    const encoder = await onCuda.encoder(undefined, new AbortController().signal);
    for (const m of [lm, encoder]) {
      assert.equal(m.placement?.device, 'cuda');
      assert.equal(m.placement?.provider, 'cpu');
      assert.match(m.placement?.error ?? '', /CUDA was asked for .*; running on the CPU/);
    }
    assert.deepEqual(
      onCuda.placements().map((p) => [p.kind, p.name, p.placement.provider, p.placement.error !== undefined]),
      [
        ['causalLM', 'coderag-lm', 'cpu', true],
        ['encoder', 'coderag-encoder', 'cpu', true],
      ],
    );
    const ids = lm.encode('def add(a, b):\n    return');
    const [fallback] = await lm.logitsNext([ids], new AbortController().signal);
    const [reference] = await (
      await onCpu.causalLM(undefined, new AbortController().signal)
    ).logitsNext([ids], new AbortController().signal);
    assert.deepEqual(fallback, reference);

    const { scorer } = await loadDistilledReranker(join(modelsDir, DEFAULT_RERANKER), DEFAULT_RERANKER, { threads: 1, device: 'cuda' });
    try {
      assert.equal(scorer.placement.provider, 'cpu');
      assert.match(scorer.placement.error ?? '', /CUDA was asked for/);
    } finally {
      await scorer.dispose();
    }
  } finally {
    await onCuda.dispose();
    await onCpu.dispose();
  }
});

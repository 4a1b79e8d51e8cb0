// `coderag models` and the global --device flag: the shipped models, their files and the provider
// each loads on; an explicit device that cannot load is reported and the models load on the CPU.
import test from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { formatModelsReport, modelsReport } from '../../src/cli/commands/models';
import { modelDevice, takeDeviceOption } from '../../src/cli/context';
import { UsageError } from '../../src/cli/command';
import { repoRoot } from '../helpers/paths';

const modelsDir = join(repoRoot, 'models');

void test('--device is taken out of any command line, validated, and remembered for the models', () => {
  assert.equal(modelDevice(), 'auto');
  assert.deepEqual(takeDeviceOption(['repo', 'a.py:3', '--device', 'cpu', '--json']), ['repo', 'a.py:3', '--json']);
  assert.equal(modelDevice(), 'cpu');
  assert.deepEqual(takeDeviceOption(['--device=CUDA']), []);
  assert.equal(modelDevice(), 'cuda');
  assert.deepEqual(takeDeviceOption(['--', '--device', 'x']), ['--', '--device', 'x']);
  assert.throws(
    () => takeDeviceOption(['--device', 'gpu']),
    (e) => e instanceof UsageError && /--device must be one of auto, cpu, cuda, dml, coreml/.test(e.message),
  );
  assert.throws(() => takeDeviceOption(['--device']), UsageError);
  takeDeviceOption(['--device', 'auto']);
});

void test('models --device cpu: every shipped model, its files, and the CPU', async () => {
  const report = await modelsReport(modelsDir, 'cpu', new AbortController().signal);
  assert.equal(report.device, 'cpu');
  assert.deepEqual(
    report.models.map((m) => [m.name, m.role, m.placement?.provider]),
    [
      ['coderag-lm', 'causalLM', 'cpu'],
      ['coderag-encoder', 'encoder', 'cpu'],
      ['coderag-reranker', 'reranker', 'cpu'],
    ],
  );
  for (const m of report.models) {
    assert.equal(m.loadError, undefined);
    assert.equal(m.placement?.error, undefined);
    const onnx = m.files.find((f) => f.path.endsWith('.onnx'));
    assert.ok(onnx && onnx.bytes > 0, `${m.name} lists its .onnx file with its size`);
  }
  assert.ok(report.providers.find((p) => p.provider === 'cpu')?.available);
  const text = formatModelsReport(report);
  assert.match(text, /coderag-lm — probing LM \(CodeRAG query\) and embedded generator: runs on cpu/);
  assert.match(text, /onnx\/decoder_model_merged\.onnx {2}\d+\.\d MB/);
  // The JSON form round-trips (what `coderag models --json` prints).
  assert.deepEqual(JSON.parse(JSON.stringify(report)), report);
});

void test('models --device cuda without the CUDA provider: each model on the CPU with the error', async (t) => {
  const report = await modelsReport(modelsDir, 'cuda', new AbortController().signal);
  const cuda = report.providers.find((p) => p.provider === 'cuda');
  if (cuda?.available) {
    t.skip('the CUDA provider is installed here');
    return;
  }
  for (const m of report.models) {
    assert.equal(m.placement?.provider, 'cpu', m.name);
    assert.match(m.placement?.error ?? '', /CUDA was asked for \(device "cuda"\)/, m.name);
  }
  assert.match(formatModelsReport(report), /error: CUDA was asked for/);
});

// coderag.models.device: validated like the setting's enum in package.json; a bad value is
// reported and the models stay on auto.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_CONFIG, mergeConfig } from '../../src/server/config';
import { MODEL_DEVICES } from '../../src/engine/models/device';
import { PIPELINE_DEFAULTS } from '../../src/engine/pipeline/defaults';
import { repoRoot } from '../helpers/paths';

void test('coderag.models.device defaults to auto and takes each device of the setting enum', () => {
  assert.equal(DEFAULT_CONFIG.models.device, 'auto');
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    contributes: { configuration: Array<{ properties: Record<string, { enum?: string[]; default?: unknown }> }> };
  };
  const setting = manifest.contributes.configuration.find((section) => 'coderag.models.device' in section.properties)?.properties[
    'coderag.models.device'
  ];
  assert.deepEqual(setting?.enum, [...MODEL_DEVICES]);
  assert.equal(setting?.default, 'auto');
  for (const device of MODEL_DEVICES) {
    const { config, problems } = mergeConfig({ models: { device } });
    assert.equal(config.models.device, device);
    assert.deepEqual(problems, []);
  }
  assert.equal(mergeConfig({ models: { device: 'CUDA' } }).config.models.device, 'cuda');
});

void test('an unknown or mistyped device is reported and falls back to auto', () => {
  const bad = mergeConfig({ models: { device: 'gpu' } });
  assert.equal(bad.config.models.device, 'auto');
  assert.deepEqual(bad.problems, ['coderag.models.device must be one of auto, cpu, cuda, dml, coreml (got "gpu"); using auto']);
  const wrongType = mergeConfig({ models: { device: 1 } });
  assert.equal(wrongType.config.models.device, 'auto');
  assert.deepEqual(wrongType.problems, ['coderag.models.device must be a string']);
  // A later layer overrides an earlier one.
  assert.equal(mergeConfig({ models: { device: 'cpu' } }, { models: { device: 'cuda' } }).config.models.device, 'cuda');
});

void test('coderag.experimental.query.strategy: the setting, the server and the engine share one default, the last three lines', () => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    contributes: { configuration: Array<{ properties: Record<string, { enum?: string[]; default?: unknown }> }> };
  };
  const key = 'coderag.experimental.query.strategy';
  const setting = manifest.contributes.configuration.find((section) => key in section.properties)?.properties[key];
  assert.equal(setting?.default, 'last3');
  assert.equal(DEFAULT_CONFIG.query.strategy, 'last3');
  assert.equal(PIPELINE_DEFAULTS.query.strategy, 'last3');
  // Probing stays selectable.
  assert.ok(setting?.enum?.includes('probe'));
  assert.equal(mergeConfig({ experimental: { query: { strategy: 'probe' } } }).config.query.strategy, 'probe');
});

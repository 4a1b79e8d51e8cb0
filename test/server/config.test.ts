// The server's configuration layers: a value outside a setting's list is reported and the default kept.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveOptions, type PipelineOptions } from '../../src/engine/pipeline';
import { DEFAULT_CONFIG, mergeConfig, NUMBER_RANGES, pipelineSettings, type ServerConfig } from '../../src/server/config';
import { repoRoot } from '../helpers/paths';

/** The pipeline's options the server builds from `config`. */
const serverOptions = (config: ServerConfig): PipelineOptions => resolveOptions(pipelineSettings(config));

void test('enum settings reject values outside their list: each is a problem, the default stays', () => {
  const { config, problems } = mergeConfig({
    model: { provider: 'gpt-cloud', family: 'llama9' },
    rerank: { kind: 'magic' },
    experimental: { query: { strategy: 'random' } },
  });
  assert.equal(config.model.provider, DEFAULT_CONFIG.model.provider);
  assert.equal(config.model.family, DEFAULT_CONFIG.model.family);
  assert.equal(config.rerank.kind, DEFAULT_CONFIG.rerank.kind);
  assert.equal(config.query.strategy, DEFAULT_CONFIG.query.strategy);
  assert.deepEqual(problems, [
    'coderag.model.provider must be one of auto, ollama, openai, embedded, local (got "gpt-cloud")',
    'coderag.model.family must be one of auto, qwen2.5-coder, starcoder2, codellama, deepseek-coder, plain (got "llama9")',
    'coderag.rerank.kind must be one of llm, distilled, none (got "magic")',
    'coderag.experimental.query.strategy must be one of probe, last3, last10, jaccard (got "random")',
  ]);
});

void test("a valid enum value in a later layer applies; an invalid one keeps the earlier layer's value", () => {
  const { config, problems } = mergeConfig(
    { model: { provider: 'openai' }, rerank: { kind: 'llm' } },
    { model: { provider: 'nonsense' }, rerank: { kind: 'none' } },
  );
  assert.equal(config.model.provider, 'openai');
  assert.equal(config.rerank.kind, 'none');
  assert.equal(problems.length, 1);
});

void test('coderag.experimental.check.mode: constrain, repair or off (default constrain) reaches the pipeline options; another value is a problem', () => {
  assert.equal(DEFAULT_CONFIG.check.mode, 'constrain');
  const ok = mergeConfig({ experimental: { check: { mode: 'off' } } });
  assert.equal(serverOptions(ok.config).check.mode, 'off');
  const bad = mergeConfig({ experimental: { check: { mode: 'strict' } } });
  assert.equal(bad.config.check.mode, 'constrain');
  assert.deepEqual(bad.problems, ['coderag.experimental.check.mode must be one of constrain, repair, off (got "strict")']);
});

void test("coderag.experimental.body.knowledge (default on) reaches the body mode's options; a non-boolean is a problem", () => {
  assert.equal(serverOptions(DEFAULT_CONFIG).body.knowledge, true);
  assert.equal(serverOptions(mergeConfig({ experimental: { body: { knowledge: false } } }).config).body.knowledge, false);
  const bad = mergeConfig({ experimental: { body: { knowledge: 'yes' } } });
  assert.equal(bad.config.body.knowledge, true);
  assert.ok(
    bad.problems.some((p) => p.includes('coderag.experimental.body.knowledge')),
    bad.problems.join('; '),
  );
});

void test('a research knob is read only under coderag.experimental; a user-facing setting there is not read', () => {
  const set = mergeConfig({ experimental: { rerank: { topU: 4 }, prompt: { budgetTokens: 512 } } });
  assert.equal(set.config.rerank.topU, 4);
  assert.equal(serverOptions(set.config).prompt.budgetTokens, 512);
  assert.deepEqual(set.problems, []);
  // A later layer beats an earlier layer (initializationOptions < settings).
  assert.equal(mergeConfig({ experimental: { rerank: { topU: 7 } } }, { experimental: { rerank: { topU: 3 } } }).config.rerank.topU, 3);
  // The knob's name outside coderag.experimental is no setting.
  assert.equal(mergeConfig({ rerank: { topU: 4 }, prompt: { budgetTokens: 512 } }).config.rerank.topU, DEFAULT_CONFIG.rerank.topU);
  assert.equal(mergeConfig({ cache: { size: 5 } }).config.cache.size, DEFAULT_CONFIG.cache.size);
  assert.equal(mergeConfig({ experimental: { enable: false, model: { provider: 'embedded' } } }).config.enable, true);
  assert.equal(mergeConfig({ experimental: { model: { provider: 'embedded' } } }).config.model.provider, 'auto');
});

void test("numeric settings outside their range are refused with the value used instead; the ranges are package.json's", () => {
  const { config, problems } = mergeConfig({
    maxFiles: 0,
    experimental: { model: { maxNewTokens: -5, temperature: 9 }, prompt: { budgetTokens: 1e12 } },
  });
  assert.equal(config.model.maxNewTokens, DEFAULT_CONFIG.model.maxNewTokens);
  assert.equal(config.model.temperature, DEFAULT_CONFIG.model.temperature);
  assert.equal(config.prompt.budgetTokens, DEFAULT_CONFIG.prompt.budgetTokens);
  assert.equal(config.maxFiles, DEFAULT_CONFIG.maxFiles);
  assert.deepEqual([...problems].sort(), [
    'coderag.experimental.model.maxNewTokens must be between 1 and 512 (got -5); 48 is used',
    'coderag.experimental.model.temperature must be between 0 and 2 (got 9); 0 is used',
    'coderag.experimental.prompt.budgetTokens must be between 128 and 131072 (got 1000000000000); 8192 is used',
    'coderag.maxFiles must be between 1 and 10000000 (got 0); 50000 is used',
  ]);
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    contributes: { configuration: Array<{ properties: Record<string, { type: string; minimum?: number; maximum?: number }> }> };
  };
  const numeric = manifest.contributes.configuration
    .flatMap((c) => Object.entries(c.properties))
    .filter(([, p]) => p.type === 'number' || p.type === 'integer')
    .map(([name, p]) => [name.replace(/^coderag\.experimental\./, 'coderag.'), { min: p.minimum, max: p.maximum }] as const);
  assert.deepEqual(Object.fromEntries(numeric), NUMBER_RANGES, 'every numeric setting has a range, the same in both');
});

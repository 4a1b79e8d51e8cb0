// The extension manifest against the code: every command the client registers is contributed
// (and the reverse), every `coderag.*` setting is a key of the server's typed configuration with
// the same default, and activation/trust fields are what the client expects.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths';
import { DEFAULT_CONFIG, EXPERIMENTAL_KEYS, mergeConfig } from '../../src/server/config';

interface Manifest {
  main: string;
  activationEvents: string[];
  capabilities: { untrustedWorkspaces: { supported: string | boolean } };
  contributes: {
    commands: Array<{ command: string; title: string; category?: string }>;
    configuration: Array<{ title: string; properties: Record<string, Setting> }>;
  };
}

interface Setting {
  default: unknown;
  type: string;
  scope?: string;
  markdownDescription?: string;
  tags?: string[];
}

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Manifest;
const clientSource = readFileSync(join(repoRoot, 'src', 'client', 'extension.ts'), 'utf8');
const sections = manifest.contributes.configuration;
const userSection = sections[0];
const experimentalSection = sections.find((s) => s.title === 'CodeRAG: Experimental');
const allSettings: Record<string, Setting> = Object.assign({}, ...sections.map((s) => s.properties)) as Record<string, Setting>;

function flatten(obj: Record<string, unknown>, prefix = 'coderag'): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (typeof v === 'object' && v !== null && !Array.isArray(v))
      Object.assign(out, flatten(v as Record<string, unknown>, `${prefix}.${k}`));
    else out[`${prefix}.${k}`] = v;
  }
  return out;
}

void test('the commands the client registers are the ones package.json contributes', () => {
  const registered = [...clientSource.matchAll(/command\('(coderag\.[A-Za-z]+)'/g)].map((m) => m[1]).sort();
  const contributed = manifest.contributes.commands.map((c) => c.command).sort();
  assert.deepEqual(registered, contributed);
  const titles = manifest.contributes.commands.map((c) => `${c.category}: ${c.title}`);
  for (const t of [
    'CodeRAG: Rebuild Repository Index',
    'CodeRAG: Toggle Reranker (LLM / Distilled)',
    'CodeRAG: Explain Last Completion',
    'CodeRAG: Enable/Disable Completions',
  ])
    assert.ok(titles.includes(t), t);
});

void test('every coderag.* setting is a server configuration key with the same default, and every key but the secret has a setting', () => {
  const server = flatten(DEFAULT_CONFIG as unknown as Record<string, unknown>);
  delete server['coderag.openai.apiKey'];
  const asConfigKey = (setting: string): string => setting.replace(/^coderag\.experimental\./, 'coderag.');
  assert.deepEqual(Object.keys(allSettings).map(asConfigKey).sort(), Object.keys(server).sort());
  for (const [key, spec] of Object.entries(allSettings)) assert.deepEqual(spec.default, server[asConfigKey(key)], key);
});

void test('at most 16 settings a user sees first, each saying what it is for; the research knobs are under coderag.experimental.*', () => {
  assert.equal(userSection?.title, 'CodeRAG');
  const user = Object.keys(userSection?.properties ?? {});
  // 15, and the one setting of how many suggestions to show (coderag.suggestions.show).
  assert.ok(user.length <= 16, `${user.length} user-facing settings`);
  for (const key of user) {
    assert.ok(!key.startsWith('coderag.experimental.'), key);
    assert.ok((userSection!.properties[key]!.markdownDescription ?? '').length >= 40, `${key} has a description`);
  }
  assert.equal(experimentalSection?.title, 'CodeRAG: Experimental');
  assert.deepEqual(
    Object.keys(experimentalSection?.properties ?? {}).sort(),
    EXPERIMENTAL_KEYS.map((k) => `coderag.experimental.${k}`).sort(),
  );
  for (const spec of Object.values(experimentalSection!.properties)) assert.deepEqual(spec.tags, ['experimental']);
  // Learning is what the `bandit` similar-code mode does, not a toggle of its own; the plain API key is not offered.
  assert.equal(allSettings['coderag.learning.enable'], undefined);
  assert.equal(allSettings['coderag.openai.apiKey'], undefined);
});

void test('settings merge in layers over the defaults; wrong types are reported and ignored', () => {
  const { config, problems } = mergeConfig(
    { debounceMs: 120, model: { provider: 'ollama' } },
    { model: { timeoutMs: 'fast' }, unknown: 1, rerank: { kind: 'llm' } },
  );
  assert.equal(config.debounceMs, 120);
  assert.equal(config.model.provider, 'ollama');
  assert.equal(config.model.timeoutMs, DEFAULT_CONFIG.model.timeoutMs);
  assert.equal(config.rerank.kind, 'llm');
  assert.deepEqual(problems, ['coderag.model.timeoutMs must be a number']);
});

void test('activation on Python and Java, the bundled client as main, limited support in untrusted workspaces', () => {
  assert.deepEqual(manifest.activationEvents.sort(), ['onLanguage:java', 'onLanguage:python']);
  assert.equal(manifest.main, './dist/client.js');
  assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
});

void test("the settings that choose where code is sent and which model file is downloaded are machine-scoped (a repository's settings cannot set them); the API key is kept in secret storage", () => {
  for (const key of ['coderag.ollama.host', 'coderag.openai.baseUrl', 'coderag.local.downloadUrl', 'coderag.local.downloadSha256'])
    assert.equal(allSettings[key]?.scope, 'machine', key);
  assert.ok(
    manifest.contributes.commands.some(
      (c) => c.command === 'coderag.setOpenAiApiKey' && `${c.category}: ${c.title}` === 'CodeRAG: Set OpenAI-compatible API Key',
    ),
  );
  assert.match(clientSource, /secrets\.store\(API_KEY_SECRET/);
});

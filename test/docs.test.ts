// The documents a user and a contributor read: the README is a short marketplace page with the
// two commands, every relative link in the documents opens a file of the repository, and nothing
// outside the code cites material outside the repository.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { repoRoot } from './helpers/paths';

const DOCS = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function filesUnder(dir: string): string[] {
  return readdirSync(join(repoRoot, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (['.work', '.gpu-carry', '__pycache__', 'onnx'].includes(name)) return [];
    return statSync(join(repoRoot, rel)).isDirectory() ? filesUnder(rel) : [rel];
  });
}

void test('the README is a page for users: at most 250 lines, with the two commands a developer needs', () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  assert.ok(readme.split('\n').length <= 250, `${readme.split('\n').length} lines`);
  for (const command of ['npm ci && npm run demo', 'npm test', 'code --install-extension', 'ollama pull qwen2.5-coder:1.5b-base'])
    assert.ok(readme.includes(command), command);
});

void test('every relative link in the documents opens a file or folder of the repository', () => {
  for (const doc of DOCS) {
    const text = readFileSync(join(repoRoot, doc), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!target || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
      const path = join(repoRoot, dirname(doc), target.split('#')[0]!);
      assert.ok(existsSync(path), `${doc} links ${target}, which is not in the repository (${relative(repoRoot, path)})`);
    }
  }
});

void test('the documents, scripts, training recipe, CI and e2e stage cite nothing outside the repository', () => {
  const files = [
    ...DOCS,
    'test/e2e/README.md',
    'test/e2e/run.mjs',
    '.ci/run',
    ...filesUnder('scripts'),
    ...filesUnder('models').filter((f) => /\.(md|py|sh|ts)$/.test(f)),
  ];
  for (const file of files) assert.doesNotMatch(readFileSync(join(repoRoot, file), 'utf8'), /\.\.\/shared\b/, file);
});

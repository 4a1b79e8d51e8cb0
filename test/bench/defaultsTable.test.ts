// The last defaults table (npm run bench:defaults) was measured with the model files that ship:
// a model changed without a new table fails here, so CI catches defaults chosen for another model.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultsRow, formatDefaultsMarkdown, modelHashes, type DefaultsTable } from '../../src/bench/defaultsTable';
import { repoRoot, tempDir } from '../helpers/paths';
import { cpSync, writeFileSync } from 'node:fs';

const latest = (): DefaultsTable => JSON.parse(readFileSync(join(repoRoot, 'bench', 'defaults', 'latest.json'), 'utf8')) as DefaultsTable;

void test('the shipped model files are the ones the last defaults table was measured with (else: npm run bench:defaults)', () => {
  assert.deepEqual(
    modelHashes(join(repoRoot, 'models')),
    latest().models,
    'models/ changed since bench/defaults/latest.json: re-run npm run bench:defaults',
  );
});

void test('a changed model file changes the hashes; its README does not', () => {
  const dir = tempDir();
  try {
    cpSync(join(repoRoot, 'models'), dir.path, { recursive: true, filter: (src) => !src.includes('training') });
    const before = modelHashes(dir.path);
    writeFileSync(join(dir.path, 'coderag-lm', 'README.md'), 'edited\n');
    assert.deepEqual(modelHashes(dir.path), before);
    writeFileSync(join(dir.path, 'coderag-reranker', 'config.json'), '{}\n');
    assert.notEqual(modelHashes(dir.path)['coderag-reranker/config.json'], before['coderag-reranker/config.json']);
  } finally {
    dir.cleanup();
  }
});

void test('the table puts both languages of an alternative on one row, with the model hashes', () => {
  const s = {
    n: 2,
    em: 50,
    es: 70,
    id_em: 50,
    id_f1: 60,
    nim: 40,
    unknown_member_rate: 0,
    recall: 0.5,
    coverage: 0.5,
    full_recall: 0.5,
    n_recall: 2,
    missing: 0,
    rel: 0,
    shown_share: 1,
    em_shown: 50,
    es_shown: 70,
    junk_rate: 0,
    junk: {},
  };
  const md = formatDefaultsMarkdown({
    date: '2026-12-03',
    models: { 'coderag-lm/config.json': 'abc' },
    command: 'npm run bench:defaults',
    cases: { 'python line': 2 },
    rows: [defaultsRow('product', 'line', 'python', s, 400), defaultsRow('product', 'line', 'java', { ...s, es: 60 }, 500)],
  });
  assert.match(md, /\| product \| 70\.00 \| 50\.00 \| 60\.00 \| 0\.000 \| 1\.000 \| 70\.00 \| 0\.500 \| 400 \| 60\.00 \|/);
  assert.match(md, /`coderag-lm\/config.json` abc/);
});

// The Java case miner resolves call receivers through declared types (scoped), return and field
// types, casts, `new` and inherited members, and never guesses by name when the type is known.
import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KnowledgeBase } from '../../src/engine/kb/KnowledgeBase';
import { analyzeFile, CrossfileSymbols } from '../../src/bench/crossfile';
import { parsers } from './mineHelpers';
import { fixturesDir } from '../helpers/paths';

void test('minijava: Java receivers resolve through declared types, return types, field types, casts, new and inheritance', async () => {
  const root = join(fixturesDir, 'benchrepos', 'minijava');
  const expected = JSON.parse(readFileSync(join(fixturesDir, 'benchrepos', 'minijava.receivers.expected.json'), 'utf8')) as {
    file: string;
    rows: Record<string, string[]>;
  };
  const p = await parsers();
  const kb = await KnowledgeBase.open({ repoRoot: root, parsers: p });
  await kb.index(undefined, new AbortController().signal);
  try {
    const text = readFileSync(join(root, expected.file), 'utf8');
    const analysis = analyzeFile(new CrossfileSymbols(kb), kb, p, expected.file, 'java', text);
    const rows: Record<string, string[]> = {};
    for (const [row, defs] of [...analysis.defsByRow].sort((a, b) => a[0] - b[0]))
      rows[String(row)] = defs.map((d) => `${d.kind} ${d.name} ${d.file}`).sort();
    const want: Record<string, string[]> = {};
    for (const [row, defs] of Object.entries(expected.rows)) want[row] = [...defs].sort();
    assert.deepEqual(rows, want);
  } finally {
    kb.dispose();
  }
});

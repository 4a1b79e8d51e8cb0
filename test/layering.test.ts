// docs/ARCHITECTURE.md layer rules, checked on the source text (lint checks them too).
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './helpers/paths';

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1] ?? '');
}

test('src/engine imports neither vscode nor the LSP libraries', () => {
  const offenders = sources(join(repoRoot, 'src', 'engine')).flatMap((f) =>
    importsOf(f)
      .filter((m) => m === 'vscode' || m.startsWith('vscode-languageserver') || m.startsWith('vscode-languageclient'))
      .map((m) => `${relative(repoRoot, f)} imports ${m}`),
  );
  assert.deepEqual(offenders, []);
});

test('src/engine imports nothing from the bench, server, client or cli layers', () => {
  const offenders = sources(join(repoRoot, 'src', 'engine')).flatMap((f) =>
    importsOf(f)
      .filter((m) => /(^|\/)(bench|server|client|cli)(\/|$)/.test(m) && m.startsWith('.'))
      .map((m) => `${relative(repoRoot, f)} imports ${m}`),
  );
  assert.deepEqual(offenders, []);
});

test('src/cli imports nothing from the server or client layers (serve starts the server bundle)', () => {
  const offenders = sources(join(repoRoot, 'src', 'cli')).flatMap((f) =>
    importsOf(f)
      .filter((m) => /(^|\/)(server|client)(\/|$)/.test(m) && m.startsWith('.'))
      .map((m) => `${relative(repoRoot, f)} imports ${m}`),
  );
  assert.deepEqual(offenders, []);
});

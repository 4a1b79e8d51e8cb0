// Locations the tests share: the repository root, its grammars, fixtures, and temp folders.
import { mkdtempSync, rmSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const repoRoot = resolve(__dirname, '..', '..');
export const grammarsDir = join(repoRoot, 'grammars');
export const fixturesDir = join(repoRoot, 'test', 'fixtures');
export const cliPath = join(repoRoot, 'bin', 'coderag.js');

/** A fresh temp folder, removed by the returned cleanup. */
export function tempDir(prefix = 'coderag-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}

/** Copy a fixture repository into a temp folder (so a test may edit it). */
export function copyFixture(name: string): { path: string; cleanup: () => void } {
  const dir = tempDir(`coderag-${name}-`);
  const path = join(dir.path, name);
  cpSync(join(fixturesDir, name), path, { recursive: true });
  return { path, cleanup: dir.cleanup };
}

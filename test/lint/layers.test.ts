// `npm run lint` enforces docs/ARCHITECTURE.md's layers: it fails on an import cycle in src/ (type-only
// imports included) and on src/engine importing src/bench. Checked with the project's own
// eslint.config.mjs on small fixture files written into src/ for the test and removed after it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { repoRoot } from '../helpers/paths';

const fixtureFiles: Record<string, string> = {
  // A type-only cycle of two files.
  'a.ts': "import type { B } from './b';\nexport interface A { b?: B }\n",
  'b.ts': "import type { A } from './a';\nexport interface B { a?: A }\n",
  // A cycle of three through a folder's index.ts.
  'p.ts': "import { q } from './q';\nexport const p = (): number => q() + 1;\n",
  'q/index.ts': "import { r } from '../r';\nexport const q = (): number => r() + 1;\n",
  'r.ts': "import { p } from './p';\nexport const r = (): number => p() + 1;\n",
  // A clean pair.
  'c.ts': "import { d } from './d';\nexport const c = d + 1;\n",
  'd.ts': 'export const d = 1;\n',
  // The engine importing the bench layer (a type import counts too).
  'x.ts': "import type { Whatever } from '../../bench/whatever';\nexport type X = Whatever;\n",
};

function writeFixture(dir: string): void {
  for (const [name, text] of Object.entries(fixtureFiles)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
}

/** `file` -> its messages as `ruleId: message`. */
function messagesByFile(results: ESLint.LintResult[], dir: string): Map<string, string[]> {
  return new Map(
    results.map((r) => [relative(dir, r.filePath).split('\\').join('/'), r.messages.map((m) => `${m.ruleId ?? 'fatal'}: ${m.message}`)]),
  );
}

test('npm run lint reports an import cycle in src/ and src/engine importing src/bench, and passes a clean pair', async () => {
  const dir = mkdtempSync(join(repoRoot, 'src', 'engine', '__lintfixture_'));
  const rel = `src/engine/${basename(dir)}`;
  try {
    writeFixture(dir);
    const eslint = new ESLint({ cwd: repoRoot, overrideConfigFile: join(repoRoot, 'eslint.config.mjs') });
    const byFile = messagesByFile(await eslint.lintFiles([dir]), dir);

    const cycle = (...files: string[]): string =>
      `layers/no-import-cycles: Import cycle: ${files.map((f) => `${rel}/${f}`).join(' -> ')} (docs/ARCHITECTURE.md: no import cycles, type-only imports included).`;
    assert.deepEqual(byFile.get('a.ts'), [cycle('a.ts', 'b.ts', 'a.ts')]);
    assert.deepEqual(byFile.get('b.ts'), [cycle('b.ts', 'a.ts', 'b.ts')]);
    assert.deepEqual(byFile.get('p.ts'), [cycle('p.ts', 'q/index.ts', 'r.ts', 'p.ts')]);
    assert.deepEqual(byFile.get('q/index.ts'), [cycle('q/index.ts', 'r.ts', 'p.ts', 'q/index.ts')]);
    assert.deepEqual(byFile.get('r.ts'), [cycle('r.ts', 'p.ts', 'q/index.ts', 'r.ts')]);

    assert.deepEqual(byFile.get('c.ts'), []);
    assert.deepEqual(byFile.get('d.ts'), []);

    const x = byFile.get('x.ts') ?? [];
    assert.equal(x.length, 1, x.join('\n'));
    assert.match(
      x[0] ?? '',
      /^no-restricted-imports: '\.\.\/\.\.\/bench\/whatever' import is restricted .*src\/engine imports nothing above it: not src\/bench.*ARCHITECTURE\.md/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the cycle rule ignores files outside its root (src/)', async () => {
  const layers = ((await import(pathToFileURL(join(repoRoot, 'scripts', 'eslint-layers.mjs')).href)) as { default: ESLint.Plugin }).default;
  mkdirSync(join(repoRoot, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(repoRoot, '.tmp', '__lintfixture_'));
  try {
    writeFixture(dir);
    const lintWithRoot = async (root: string): Promise<Map<string, string[]>> => {
      const eslint = new ESLint({
        cwd: repoRoot,
        overrideConfigFile: true,
        ignore: false,
        overrideConfig: {
          files: ['**/*.ts'],
          languageOptions: { parser: tseslint.parser as never },
          plugins: { layers },
          rules: { 'layers/no-import-cycles': ['error', { root }] },
        },
      });
      return messagesByFile(await eslint.lintFiles([dir]), dir);
    };
    const outside = await lintWithRoot('src');
    assert.equal(outside.size, Object.keys(fixtureFiles).length);
    assert.deepEqual([...outside.values()].flat(), []);
    // The same files under the rule's root: the two cycles are found.
    const inside = await lintWithRoot('.tmp');
    assert.deepEqual(
      [...inside]
        .filter(([, m]) => m.length > 0)
        .map(([f]) => f)
        .sort(),
      ['a.ts', 'b.ts', 'p.ts', 'q/index.ts', 'r.ts'],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// `npm run lint` fails on a cycle among src/engine's folders (a folder imports another when any file
// in it does, type-only imports included; a sub-folder counts as its first-level folder). Checked
// through ESLint's API with the project's rule on small trees written for the test and removed after it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { repoRoot } from '../helpers/paths';

type Tree = Record<string, string>;

// kb -> symbols -> flow -> kb: no file imports itself back (the file-level rule is silent), but the folders loop.
// flow's import sits in a sub-folder (flow/deep), which counts as flow.
const looping: Tree = {
  'kb/base.ts': "import type { Table } from '../symbols/table';\nexport interface Base { table?: Table }\n",
  'kb/types.ts': 'export type Lang = "python" | "java";\n',
  'symbols/table.ts': "import { walk } from '../flow/walk';\nexport class Table { n = walk(); }\n",
  'flow/walk.ts': 'export const walk = (): number => 1;\n',
  'flow/deep/graph.ts': "import type { Lang } from '../../kb/types';\nexport type Graph = { lang: Lang };\n",
  // Not in the loop: it imports kb, and nothing imports it.
  'pipeline/run.ts': "import type { Base } from '../kb/base';\nexport type Run = Base;\n",
};

// The same folders without the edge back into kb; a sub-folder importing its parent is no folder cycle.
const layered: Tree = {
  'kb/base.ts': "import type { Lang } from './types';\nexport interface Base { lang?: Lang }\n",
  'kb/types.ts': 'export type Lang = "python" | "java";\n',
  'kb/extract/read.ts': "import type { Base } from '../base';\nexport type Read = Base;\n",
  'symbols/table.ts':
    "import { walk } from '../flow/walk';\nimport type { Base } from '../kb/base';\nexport class Table { n = walk(); b?: Base; }\n",
  'flow/walk.ts': "import type { Lang } from '../kb/types';\nexport const walk = (l?: Lang): number => (l ? 1 : 0);\n",
  'pipeline/run.ts':
    "import type { Table } from '../symbols/table';\nimport type { Read } from '../kb/extract/read';\nexport type Run = Table | Read;\n",
};

async function lintTree(tree: Tree): Promise<{ rel: string; byFile: Map<string, string[]> }> {
  const layers = ((await import(pathToFileURL(join(repoRoot, 'scripts', 'eslint-layers.mjs')).href)) as { default: ESLint.Plugin }).default;
  mkdirSync(join(repoRoot, '.tmp'), { recursive: true });
  const dir = mkdtempSync(join(repoRoot, '.tmp', '__foldercycles_'));
  const rel = relative(repoRoot, dir).split('\\').join('/');
  try {
    for (const [name, text] of Object.entries(tree)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const eslint = new ESLint({
      cwd: repoRoot,
      overrideConfigFile: true,
      ignore: false,
      overrideConfig: {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser as never },
        plugins: { layers },
        rules: { 'layers/no-folder-cycles': ['error', { root: rel }], 'layers/no-import-cycles': ['error', { root: rel }] },
      },
    });
    const results = await eslint.lintFiles([dir]);
    const byFile = new Map(
      results.map((r) => [relative(dir, r.filePath).split('\\').join('/'), r.messages.map((m) => `${m.ruleId ?? 'fatal'}: ${m.message}`)]),
    );
    return { rel, byFile };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a loop of folders is reported at each import that closes it, with its folders and one import per edge', async () => {
  const { rel, byFile } = await lintTree(looping);
  const message = (folders: string[], imports: Array<[string, string]>): string =>
    `layers/no-folder-cycles: Folder import cycle in ${rel}: ${folders.join(' -> ')}, through ${imports
      .map(([from, to]) => `${rel}/${from} imports ${rel}/${to}`)
      .join(', ')} (a sub-folder counts as its first-level folder; type-only imports included).`;
  assert.deepEqual(byFile.get('kb/base.ts'), [
    message(
      ['kb', 'symbols', 'flow', 'kb'],
      [
        ['kb/base.ts', 'symbols/table.ts'],
        ['symbols/table.ts', 'flow/walk.ts'],
        ['flow/deep/graph.ts', 'kb/types.ts'],
      ],
    ),
  ]);
  assert.deepEqual(byFile.get('symbols/table.ts'), [
    message(
      ['symbols', 'flow', 'kb', 'symbols'],
      [
        ['symbols/table.ts', 'flow/walk.ts'],
        ['flow/deep/graph.ts', 'kb/types.ts'],
        ['kb/base.ts', 'symbols/table.ts'],
      ],
    ),
  ]);
  assert.deepEqual(byFile.get('flow/deep/graph.ts'), [
    message(
      ['flow', 'kb', 'symbols', 'flow'],
      [
        ['flow/deep/graph.ts', 'kb/types.ts'],
        ['kb/base.ts', 'symbols/table.ts'],
        ['symbols/table.ts', 'flow/walk.ts'],
      ],
    ),
  ]);
  for (const clean of ['kb/types.ts', 'flow/walk.ts', 'pipeline/run.ts']) assert.deepEqual(byFile.get(clean), [], clean);
});

test('folders that import one way only, and a sub-folder importing its parent, pass', async () => {
  const { byFile } = await lintTree(layered);
  assert.equal(byFile.size, Object.keys(layered).length);
  assert.deepEqual([...byFile.values()].flat(), []);
});

test('the project lints src/engine with the folder rule and src/engine, src/server with the 120-line function limit', async () => {
  const eslint = new ESLint({ cwd: repoRoot, overrideConfigFile: join(repoRoot, 'eslint.config.mjs') });
  const rules = async (file: string): Promise<Record<string, unknown>> =>
    ((await eslint.calculateConfigForFile(join(repoRoot, file))) as { rules: Record<string, unknown> }).rules;
  const engine = await rules('src/engine/kb/KnowledgeBase.ts');
  assert.deepEqual(engine['layers/no-folder-cycles'], [2, { root: 'src/engine' }]);
  const limit = [2, { max: 120, skipBlankLines: false, skipComments: false }];
  assert.deepEqual(engine['max-lines-per-function'], limit);
  assert.deepEqual((await rules('src/server/Server.ts'))['max-lines-per-function'], limit);
  assert.equal((await rules('src/client/extension.ts'))['layers/no-folder-cycles'], undefined);
});

// Lint: strict promise handling and the layer rules of docs/ARCHITECTURE.md.
import tseslint from 'typescript-eslint';
import layers from './scripts/eslint-layers.mjs';

// docs/ARCHITECTURE.md layers: client -> protocol; server -> protocol, engine; bench -> engine;
// cli -> engine, bench, protocol; engine -> nothing above it. Type-only imports count too.
const layer = (...names) => names.flatMap((n) => [`**/${n}`, `**/${n}/**`]);
const editorModules = ['vscode', 'vscode-languageserver', 'vscode-languageserver/*', 'vscode-languageserver-*', 'vscode-languageclient', 'vscode-languageclient/*'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'models/**', 'grammars/**', '.tmp/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // node:test's test()/describe() return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: [{ from: 'package', name: ['test', 'describe', 'it', 'suite'], package: 'node:test' }] }],
      '@typescript-eslint/no-misused-promises': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: editorModules, message: 'src/engine must not import the editor or LSP libraries (docs/ARCHITECTURE.md).' },
          { group: layer('bench', 'server', 'client', 'cli'), message: 'src/engine imports nothing above it: not src/bench, src/server, src/client or src/cli (docs/ARCHITECTURE.md layers).' },
        ],
      }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/engine/**', '**/server/**', ...layer('bench', 'cli')], message: 'The client talks to the server only through src/protocol.' }] }],
    },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/engine/**', '**/server/**', '**/client/**', 'vscode'], message: 'src/protocol holds shared types only.' }] }],
    },
  },
  {
    files: ['src/bench/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: layer('server', 'client', 'cli'), message: 'src/bench imports the engine only, not src/server, src/client or src/cli (docs/ARCHITECTURE.md layers).' }] }],
    },
  },
  {
    files: ['src/server/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: layer('bench', 'client', 'cli'), message: 'src/server imports src/protocol and src/engine only, not src/bench, src/client or src/cli (docs/ARCHITECTURE.md layers).' }] }],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: layer('server', 'client'), message: 'src/cli imports src/engine, src/bench and src/protocol only, not src/server or src/client (docs/ARCHITECTURE.md layers).' }] }],
    },
  },
  {
    // Issue 47 item 7: no line of src/ over 140 characters (Prettier's printWidth; it cannot split a long regex or template literal).
    files: ['src/**/*.ts'],
    rules: { 'max-len': ['error', { code: 140, tabWidth: 2 }] },
  },
  {
    // No import cycle anywhere in src/ (the graph is read from disk; see scripts/eslint-layers.mjs).
    files: ['src/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/no-import-cycles': ['error', { root: 'src' }] },
  },
  {
    // No cycle among the engine's folders (kb, symbols, similar, generate, pipeline, ...; a sub-folder counts as its parent).
    files: ['src/engine/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/no-folder-cycles': ['error', { root: 'src/engine' }] },
  },
  {
    // No function over 120 lines in the engine or the server, blank lines and comments counted.
    files: ['src/engine/**/*.ts', 'src/server/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false }] },
  },
);

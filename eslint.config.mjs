// Lint: strict promise handling and the layer rules of ARCHITECTURE.md.
import tseslint from 'typescript-eslint';

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
      'no-restricted-imports': ['error', { patterns: [{ group: editorModules, message: 'src/engine must not import the editor or LSP libraries (ARCHITECTURE.md).' }] }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/client/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/engine/**', '**/server/**'], message: 'The client talks to the server only through src/protocol.' }] }],
    },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/engine/**', '**/server/**', '**/client/**', 'vscode'], message: 'src/protocol holds shared types only.' }] }],
    },
  },
);

// Bundles the three entry points (VS Code client, language server, CLI) and copies assets.
// Assets (.wasm, .onnx, tokenizer files) are copied, never inlined; a missing one fails the build.
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, statSync, copyFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');

/** Grammar assets: [source in node_modules, name in grammars/]. */
const grammarSources = [
  ['node_modules/web-tree-sitter/tree-sitter.wasm', 'tree-sitter.wasm'],
  ['node_modules/tree-sitter-python/tree-sitter-python.wasm', 'tree-sitter-python.wasm'],
  ['node_modules/tree-sitter-java/tree-sitter-java.wasm', 'tree-sitter-java.wasm'],
];

function fail(message) {
  console.error(`build failed: ${message}`);
  process.exit(1);
}

function copyGrammars() {
  mkdirSync(join(root, 'grammars'), { recursive: true });
  for (const [source, name] of grammarSources) {
    const from = join(root, source);
    const to = join(root, 'grammars', name);
    if (existsSync(from)) copyFileSync(from, to);
    if (!existsSync(to)) fail(`grammar asset missing: ${source} (run npm ci)`);
  }
}

/** Every file a shipped model's manifest names must exist (models/manifest.json, when present). */
function checkModels() {
  const manifestPath = join(root, 'models', 'manifest.json');
  if (!existsSync(manifestPath)) return;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  for (const model of manifest.models ?? []) {
    for (const file of model.files ?? []) {
      const p = join(root, 'models', model.name, file);
      if (!existsSync(p) || statSync(p).size === 0) fail(`model asset missing: models/${model.name}/${file}`);
    }
  }
}

function copyAssets() {
  for (const dir of ['grammars', 'models']) {
    const from = join(root, dir);
    if (!existsSync(from)) continue;
    cpSync(from, join(dist, dir), {
      recursive: true,
      filter: (src) => !src.includes(`${join('models', 'training')}`),
    });
  }
}

copyGrammars();
checkModels();
mkdirSync(dist, { recursive: true });

// node-llama-cpp is ESM with native binaries found beside it: loaded at run time from node_modules, never bundled.
const external = ['vscode', 'onnxruntime-node', 'web-tree-sitter', 'node-llama-cpp'];
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  external,
  logLevel: 'warning',
};
const entries = [
  ['src/client/extension.ts', 'client.js'],
  ['src/server/main.ts', 'server.js'],
  ['src/cli/main.ts', 'cli.js'],
  ['src/engine/models/encoderWorkerMain.ts', 'encoderWorker.js'],
  ['src/engine/models/llamaWorkerMain.ts', 'llamaWorker.js'],
];
await Promise.all(
  entries
    .filter(([entry]) => existsSync(join(root, entry)))
    .map(([entry, out]) => build({ ...common, entryPoints: [join(root, entry)], outfile: join(dist, out) })),
);
copyAssets();

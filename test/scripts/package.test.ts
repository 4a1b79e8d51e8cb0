// scripts/package.mjs for linux-x64, as `npm run package` runs it: the VSIX carries node-llama-cpp
// with the Linux x64 CPU binary package only (no other @node-llama-cpp/* package, no CUDA file, not
// the overrides' stand-in), pruned of what getLlama({ build: 'never' }) never loads, and packaging
// ran the packaged engine on a GGUF (its smoke step).
import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { repoRoot, tempDir } from '../helpers/paths';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };

/** The VSIX's file names, and the text of the files `read` names. */
function openVsix(file: string, read: string[]): { names: string[]; text: Map<string, string> } {
  const names: string[] = [];
  const files = unzipSync(readFileSync(file), {
    filter: (f) => {
      names.push(f.name);
      return read.includes(f.name);
    },
  });
  return { names, text: new Map(Object.entries(files).map(([name, data]) => [name, strFromU8(data)])) };
}

test('the linux-x64 VSIX carries node-llama-cpp with its Linux x64 CPU binary only, and its engine ran a GGUF', () => {
  const out = tempDir('coderag-package-');
  try {
    // npm test builds dist/ first; a run of this file alone builds it here.
    const build = existsSync(join(repoRoot, 'dist', 'server.js')) ? ['--no-build'] : [];
    const r = spawnSync(
      process.execPath,
      [join(repoRoot, 'scripts', 'package.mjs'), '--target', 'linux-x64', ...build, '--out', out.path],
      {
        cwd: repoRoot,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        timeout: 240_000,
      },
    );
    const log = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.status, 0, log.slice(-3000));
    assert.doesNotMatch(log, /\bWARNING\b/);
    // The smoke step runs the engine of the host's own target (where these tests run, linux-x64).
    if (`${process.platform}-${process.arch}` === 'linux-x64') {
      assert.match(log, /^smoke: the VSIX's node-llama-cpp \(prebuilt, gpu false\) ran .*coderag-lm\.f32\.gguf: [1-9]\d* tokens/m);
    }

    const vsix = join(out.path, `${manifest.name}-${manifest.version}-linux-x64.vsix`);
    const llamaJson = 'extension/node_modules/node-llama-cpp/package.json';
    const binaryJson = 'extension/node_modules/@node-llama-cpp/linux-x64/package.json';
    const { names, text } = openVsix(vsix, [llamaJson, binaryJson]);
    const files = new Set(names);
    assert.ok(files.has(llamaJson));
    assert.ok(files.has('extension/node_modules/node-llama-cpp/dist/index.js'));
    assert.ok(files.has('extension/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/llama-addon.node'));
    assert.equal(
      (JSON.parse(text.get(binaryJson) ?? '{}') as { name?: string }).name,
      '@node-llama-cpp/linux-x64',
      'the real package, not the stand-in',
    );

    const binaryPackages = new Set(
      names.filter((n) => n.startsWith('extension/node_modules/@node-llama-cpp/')).map((n) => n.split('/')[3]),
    );
    assert.deepEqual([...binaryPackages], ['linux-x64']);
    assert.deepEqual(
      names.filter((n) => /cuda|cublas/i.test(n)),
      [],
    );
    const staged = JSON.parse(text.get(llamaJson) ?? '{}') as {
      optionalDependencies?: Record<string, string>;
      dependencies?: Record<string, string>;
    };
    assert.deepEqual(Object.keys(staged.optionalDependencies ?? {}), ['@node-llama-cpp/linux-x64']);
    assert.equal(staged.dependencies?.['cmake-js'], undefined);

    // What building from source and the CLI need stays out.
    for (const left of [
      'llama/gitRelease.bundle',
      'llama/CMakeLists.txt',
      'llama/addon/',
      'templates/',
      'dist/cli/cli.js',
      'dist/commands.js',
    ]) {
      assert.deepEqual(
        names.filter((n) => n.startsWith(`extension/node_modules/node-llama-cpp/${left}`)),
        [],
        left,
      );
    }
    for (const dep of ['cmake-js', 'node-addon-api', 'yargs', '@reflink/reflink']) {
      assert.ok(!names.some((n) => n.startsWith(`extension/node_modules/${dep}/`)), dep);
    }
  } finally {
    out.cleanup();
  }
});

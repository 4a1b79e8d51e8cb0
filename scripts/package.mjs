// Builds platform-specific VSIXs: node scripts/package.mjs [--target T ...|--target all] [--no-build] [--out DIR]
// Each VSIX carries dist/ (client, server, CLI, grammars, models) and the runtime externals the
// bundles load (web-tree-sitter, onnxruntime-node, node-llama-cpp; the tokenizer library is bundled)
// with only the target's onnxruntime binaries and node-llama-cpp binary packages (CONTRIBUTING.md,
// code rule 13). vsce runs in a staging folder holding exactly that dependency closure, so the VSIX
// does not depend on what else node_modules holds. For the host's own target the packaged
// node-llama-cpp, run from the unpacked VSIX, must load a GGUF and generate, or packaging fails.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));

/**
 * vsce target -> the binary folder of onnxruntime-node 1.30 (bin/napi-v6/<os>/<arch>) and the
 * node-llama-cpp binary packages (@node-llama-cpp/<name>) it ships: the CPU build, Metal on macOS,
 * Vulkan beside the CPU build on Windows x64; never a CUDA build.
 */
const TARGETS = {
  'linux-x64': { os: 'linux', arch: 'x64', llama: ['linux-x64'] },
  'linux-arm64': { os: 'linux', arch: 'arm64', llama: ['linux-arm64'] },
  'darwin-arm64': { os: 'darwin', arch: 'arm64', llama: ['mac-arm64-metal'] },
  'win32-x64': { os: 'win32', arch: 'x64', llama: ['win-x64', 'win-x64-vulkan'] },
  'win32-arm64': { os: 'win32', arch: 'arm64', llama: ['win-arm64'] },
};
/** What the bundles load at run time (esbuild externals minus `vscode`). */
const RUNTIME_PACKAGES = ['web-tree-sitter', 'onnxruntime-node', 'node-llama-cpp'];
const LLAMA_VERSION = lock.packages['node_modules/node-llama-cpp']?.version;
/**
 * Dependencies a package declares that nothing loads at run time, left out with their closures.
 * node-llama-cpp's were found by following every import from its dist/index.js (esbuild's
 * metafile, static and dynamic): none reaches these; the smoke run checks the rest loads.
 */
const NOT_LOADED = {
  // The install script's download and unzip, which the extension never runs.
  'onnxruntime-node': ['adm-zip', 'global-agent'],
  // With getLlama({ build: 'never' }): building from source (cmake-js, node-addon-api) and the CLI
  // (yargs, validate-npm-package-name, ignore). Its binary packages come per target (binaryPackageDir).
  'node-llama-cpp': ['cmake-js', 'node-addon-api', 'yargs', 'validate-npm-package-name', 'ignore'],
  // ipull's own CLI (commander, lowdb) and copy-on-write copying, a per-platform native package:
  // node-llama-cpp downloads nothing with build 'never'.
  ipull: ['commander', 'lowdb', '@reflink/reflink'],
};
/** The node-llama-cpp binary packages the lock file has no integrity for: the overrides point them at packaging/no-binary. From `npm view @node-llama-cpp/<name>@3.21.1 dist.integrity`. */
const PINNED_INTEGRITY = {
  'linux-arm64@3.21.1': 'sha512-eI3anSEGzJiwF2rpMpZVTdHzw47LztbvfvuRzlu/fPO18ROnBOd+75RPUBlV6qENPpmNtbov85+3VODwEwBurg==',
};
/** The GGUF the smoke run loads (bench/engine/prepare.ts makes it once). */
const SMOKE_MODEL = join(root, 'bench', 'engine', '.cache', 'coderag-lm.f32.gguf');
function fail(message) {
  console.error(`package failed: ${message}`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = { targets: [], build: true, out: root };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--target') args.targets.push(argv[++i]);
    else if (a.startsWith('--target=')) args.targets.push(a.slice('--target='.length));
    else if (a === '--no-build') args.build = false;
    // vsce runs in the staging folder: a relative --out is the caller's.
    else if (a === '--out') args.out = resolve(argv[++i]);
    else fail(`unknown argument ${a}`);
  }
  if (args.targets.length === 0) args.targets.push('linux-x64');
  if (args.targets.includes('all')) args.targets = Object.keys(TARGETS);
  for (const t of args.targets) if (!TARGETS[t]) fail(`unsupported target ${t} (supported: ${Object.keys(TARGETS).join(', ')}, all)`);
  return args;
}

function run(cmd, cmdArgs, options = {}) {
  const r = spawnSync(cmd, cmdArgs, { stdio: 'inherit', cwd: root, ...options });
  if (r.status !== 0) fail(`${cmd} ${cmdArgs.join(' ')} exited with ${r.status ?? r.signal}`);
}

/** Assets the VSIX must carry; a missing or empty one fails packaging. */
function requiredAssets() {
  const assets = ['dist/client.js', 'dist/server.js', 'dist/cli.js', 'dist/llamaWorker.js', 'dist/grammars/tree-sitter.wasm', 'dist/grammars/tree-sitter-python.wasm', 'dist/grammars/tree-sitter-java.wasm', 'dist/models/manifest.json'];
  const models = JSON.parse(readFileSync(join(root, 'models', 'manifest.json'), 'utf8'));
  for (const model of models.models ?? []) for (const file of model.files ?? []) assets.push(`dist/models/${model.name}/${file}`);
  return assets;
}

function checkAssets(base, assets) {
  for (const a of assets) {
    const p = join(base, a);
    if (!existsSync(p) || statSync(p).size === 0) fail(`asset missing or empty: ${a}`);
  }
}

/** Node's resolution from a package folder: its own node_modules, then each parent's. */
function resolvePackage(fromDir, name) {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root) return undefined;
    dir = dirname(dir);
    if (relative(root, dir).startsWith('..')) return undefined;
  }
}

const LLAMA_SCOPE = '@node-llama-cpp/';
/** What `pkg` loads of what it declares (NOT_LOADED left out; node-llama-cpp's binary packages come per target, never from node_modules' closure). */
function loadedDependencies(pkg, field) {
  const skip = new Set(NOT_LOADED[pkg.name] ?? []);
  return Object.keys(pkg[field] ?? {}).filter((d) => !skip.has(d) && !d.startsWith(LLAMA_SCOPE));
}

/** The installed dependency closure of `names` (dependencies, plus optional ones that are installed). */
function closure(names) {
  const found = new Map(); // absolute dir -> package.json
  const visit = (fromDir, name, optional) => {
    const dir = resolvePackage(fromDir, name);
    if (!dir) {
      if (optional) return;
      fail(`runtime dependency ${name} (needed from ${relative(root, fromDir) || '.'}) is not installed; run npm ci`);
    }
    if (found.has(dir)) return;
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    found.set(dir, pkg);
    for (const dep of loadedDependencies(pkg, 'dependencies')) visit(dir, dep, false);
    for (const dep of loadedDependencies(pkg, 'optionalDependencies')) visit(dir, dep, true);
  };
  for (const name of names) visit(root, name, false);
  return found;
}

/** The two CLI helpers node-llama-cpp's library imports (dist/cli/utils/); the rest of dist/cli is the CLI. */
const LLAMA_CLI_IMPORTED = new Set(['getReadablePath.js', 'ConsoleInteraction.js']);
/** llama/'s files read at run time: the release its binaries are, the library's built-in grammars. */
const LLAMA_DIR_READ = new Set(['binariesGithubRelease.json', 'llama.cpp.info.json', 'package.json', 'grammars']);

/**
 * node-llama-cpp's files that run with getLlama({ build: 'never' }): not llama/'s C++ sources, cmake
 * files and 34 MB git bundle (building from source), nor the CLI, its commands export or project
 * templates.
 */
function llamaFileRuns(rel) {
  const [top, second] = rel;
  // bins/ holds only notes that the binaries moved to the @node-llama-cpp/* packages.
  if (top === 'templates' || top === 'bins') return false;
  if (top === 'llama') return second === undefined || LLAMA_DIR_READ.has(second);
  if (top === 'dist' && second === 'commands.js') return false;
  if (top === 'dist' && second === 'cli') {
    if (rel.length === 2) return true;
    if (rel[2] !== 'utils') return false;
    return rel.length === 3 || (rel.length === 4 && LLAMA_CLI_IMPORTED.has(rel[3] ?? ''));
  }
  return true;
}

/** Copy filter: a package's own files (its nested node_modules come through the closure), this target's binaries only. */
function packageFilter(pkgDir, pkg, target) {
  const { os, arch } = TARGETS[target];
  return (src) => {
    const rel = relative(pkgDir, src).split(sep);
    if (rel.includes('node_modules')) return false;
    if (pkg.name === 'node-llama-cpp' && !llamaFileRuns(rel)) return false;
    // onnxruntime-node: bin/napi-vN/<os>/<arch>/...
    if (rel[0] === 'bin' && rel.length >= 3 && /^napi-v\d+$/.test(rel[1] ?? '')) {
      if (rel[2] !== os) return false;
      if (rel.length >= 4 && rel[3] !== arch) return false;
    }
    return true;
  };
}

/** The staged copy of a package.json declares only what is staged, so vsce's dependency check asks for nothing left out. */
function stagedPackageJson(pkg, target) {
  const pick = (field, names) => Object.fromEntries(names.map((d) => [d, pkg[field][d]]));
  const staged = { ...pkg };
  if (pkg.dependencies) staged.dependencies = pick('dependencies', loadedDependencies(pkg, 'dependencies'));
  if (pkg.optionalDependencies) {
    const own = pkg.name === 'node-llama-cpp' ? TARGETS[target].llama.map((n) => LLAMA_SCOPE + n) : [];
    staged.optionalDependencies = pick('optionalDependencies', [...loadedDependencies(pkg, 'optionalDependencies'), ...own]);
  }
  return JSON.stringify(staged) === JSON.stringify(pkg) ? undefined : staged;
}

function sri(file) {
  return 'sha512-' + createHash('sha512').update(readFileSync(file)).digest('base64');
}

/**
 * The folder of @node-llama-cpp/<name> at the lock's version: the installed one where npm ci put
 * the real package (not packaging/no-binary's stand-in), else `npm pack`ed into .coderag-cache/
 * (network once) and checked against the lock's integrity, or PINNED_INTEGRITY's where the lock has none.
 */
function binaryPackageDir(name) {
  const full = LLAMA_SCOPE + name;
  const installed = join(root, 'node_modules', full);
  if (existsSync(join(installed, 'package.json'))) {
    const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'));
    if (pkg.name === full && pkg.version === LLAMA_VERSION) return installed;
  }
  const entry = lock.packages[`node_modules/${full}`];
  const integrity = (entry?.version === LLAMA_VERSION ? entry.integrity : undefined) ?? PINNED_INTEGRITY[`${name}@${LLAMA_VERSION}`];
  if (!integrity) fail(`no integrity for ${full}@${LLAMA_VERSION} in package-lock.json nor in PINNED_INTEGRITY (scripts/package.mjs)`);
  const cache = join(root, '.coderag-cache', 'node-llama-cpp');
  const tarball = join(cache, `node-llama-cpp-${name}-${LLAMA_VERSION}.tgz`);
  if (!existsSync(tarball) || sri(tarball) !== integrity) {
    mkdirSync(cache, { recursive: true });
    rmSync(tarball, { force: true });
    console.log(`npm pack ${full}@${LLAMA_VERSION} (not installed on this host)`);
    const r = spawnSync('npm', ['pack', `${full}@${LLAMA_VERSION}`, '--pack-destination', cache, '--ignore-scripts', '--silent'], { cwd: root, encoding: 'utf8', shell: process.platform === 'win32' });
    if (r.status !== 0 || !existsSync(tarball)) fail(`npm pack ${full}@${LLAMA_VERSION} failed (exit ${r.status}; packaging another target's engine needs the npm registry once): ${(r.stderr || '').trim()}`);
    const got = sri(tarball);
    if (got !== integrity) fail(`${tarball}: integrity ${got}, expected ${integrity}`);
  }
  const dir = join(cache, `${name}-${LLAMA_VERSION}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  run('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1']);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (pkg.name !== full || pkg.version !== LLAMA_VERSION) fail(`${tarball} holds ${pkg.name}@${pkg.version}`);
  return dir;
}

function stage(target) {
  const dir = join(root, '.coderag-cache', 'package', target);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // The manifest as it is, with only the run-time dependencies (vsce asks npm for their tree); the
  // overrides' stand-in is not staged.
  const staged = { ...manifest };
  delete staged.devDependencies;
  delete staged.scripts;
  delete staged.overrides;
  staged.dependencies = Object.fromEntries(RUNTIME_PACKAGES.map((n) => [n, manifest.dependencies[n]]));
  writeFileSync(join(dir, 'package.json'), JSON.stringify(staged, null, 2) + '\n');
  for (const f of ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'LICENSE', '.vscodeignore']) if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f));
  // The documents the README links, the icon and the walkthrough's pages.
  for (const d of ['docs', 'media']) if (existsSync(join(root, d))) cpSync(join(root, d), join(dir, d), { recursive: true });
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  for (const [pkgDir, pkg] of closure(RUNTIME_PACKAGES)) {
    const to = join(dir, relative(root, pkgDir));
    cpSync(pkgDir, to, { recursive: true, filter: packageFilter(pkgDir, pkg, target) });
    const declared = stagedPackageJson(pkg, target);
    if (declared) writeFileSync(join(to, 'package.json'), JSON.stringify(declared, null, 2) + '\n');
  }
  // Beside node-llama-cpp at top level, where its import('@node-llama-cpp/<name>') finds them.
  for (const name of TARGETS[target].llama) {
    const from = binaryPackageDir(name);
    cpSync(from, join(dir, 'node_modules', LLAMA_SCOPE, name), { recursive: true, filter: (src) => !relative(from, src).split(sep).includes('node_modules') });
  }
  return dir;
}

/** The repository files README.md links to or shows (relative targets, without their #anchor). */
function readmeTargets() {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
  return [...new Set(targets.map((t) => t.split('#')[0]))];
}

/** The zip's file list (vsce writes the extension under extension/). */
function vsixFiles(vsix) {
  const r = spawnSync('unzip', ['-Z1', vsix], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    // No unzip: read the central directory with python's zipfile.
    const py = spawnSync('python3', ['-c', 'import sys,zipfile;print("\\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))', vsix], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (py.status !== 0) fail(`cannot list ${vsix}: ${r.stderr || py.stderr}`);
    return py.stdout.split('\n').filter(Boolean);
  }
  return r.stdout.split('\n').filter(Boolean);
}

function verifyVsix(vsix, target, assets) {
  const { os, arch } = TARGETS[target];
  const files = vsixFiles(vsix).filter((f) => f.startsWith('extension/')).map((f) => f.slice('extension/'.length));
  const set = new Set(files);
  for (const a of [...assets, 'package.json', 'node_modules/web-tree-sitter/package.json', 'node_modules/onnxruntime-node/package.json']) {
    if (!set.has(a)) fail(`${vsix} lacks ${a}`);
  }
  // What the README links must open from the installed extension too (vsce stores the README as readme.md, LICENSE as LICENSE.txt).
  const stored = (f) => ({ 'README.md': 'readme.md', 'CHANGELOG.md': 'changelog.md', LICENSE: 'LICENSE.txt' })[f] ?? f;
  for (const t of [...readmeTargets(), manifest.icon]) if (t && !set.has(stored(t))) fail(`${vsix} lacks ${t}, which README.md or the manifest names`);
  const bindings = files.filter((f) => f.endsWith('onnxruntime_binding.node'));
  const foreign = bindings.filter((f) => !f.includes(`/${os}/${arch}/`));
  if (foreign.length > 0) fail(`${vsix} carries other platforms' binaries: ${foreign.join(', ')}`);
  // One onnxruntime inside: the project's onnxruntime-node, this target's binding only.
  const napi = 'node_modules/onnxruntime-node/bin/napi-v6';
  const own = bindings.filter((f) => f.startsWith(`${napi}/${os}/${arch}/`));
  if (own.length !== 1 || bindings.length !== 1) fail(`${vsix}: expected exactly one onnxruntime binding, under ${napi}/${os}/${arch}, found ${bindings.join(', ') || 'none'}`);
  // node-llama-cpp with this target's binary packages only: each a real one (bins/<name>/, the
  // addon inside), none of another platform, no CUDA build, no stand-in, no C++ sources.
  const llama = TARGETS[target].llama.map((n) => LLAMA_SCOPE + n);
  if (!set.has('node_modules/node-llama-cpp/package.json')) fail(`${vsix} lacks node_modules/node-llama-cpp`);
  for (const [i, full] of llama.entries()) {
    const addon = `node_modules/${full}/bins/${TARGETS[target].llama[i]}/llama-addon.node`;
    if (!set.has(addon)) fail(`${vsix} lacks ${addon}`);
  }
  const otherLlama = [...new Set(files.filter((f) => f.startsWith(`node_modules/${LLAMA_SCOPE}`)).map((f) => f.split('/').slice(1, 3).join('/')))].filter((p) => !llama.includes(p));
  if (otherLlama.length > 0) fail(`${vsix} carries other node-llama-cpp binary packages: ${otherLlama.join(', ')}`);
  const cuda = files.filter((f) => /cuda|cublas/i.test(f));
  if (cuda.length > 0) fail(`${vsix} carries CUDA files: ${cuda.slice(0, 5).join(', ')}`);
  const llamaSources = files.filter((f) => f.startsWith('node_modules/node-llama-cpp/llama/') && !/^node_modules\/node-llama-cpp\/llama\/(grammars\/|[^/]+\.json$)/.test(f));
  if (llamaSources.length > 0) fail(`${vsix} carries node-llama-cpp's build files: ${llamaSources.slice(0, 5).join(', ')}`);
  const leaked = files.filter((f) => /^(src|test|scripts|models)\//.test(f) || f.includes('models/training/') || /\.ts$/.test(f) && !f.endsWith('.d.ts'));
  if (leaked.length > 0) fail(`${vsix} carries sources or training files: ${leaked.slice(0, 5).join(', ')}${leaked.length > 5 ? ' ...' : ''}`);
  return files.length;
}

/** The ESM script the smoke run puts in the unpacked extension: the server's own import, one model, a few tokens. */
const SMOKE_SCRIPT = `import { getLlama } from 'node-llama-cpp';
const [modelPath, root] = process.argv.slice(2);
const llama = await getLlama({ build: 'never', logLevel: 'error', progressLogs: false });
const model = await llama.loadModel({ modelPath });
const context = await model.createContext({ contextSize: 256, threads: 1 });
const sequence = context.getSequence();
const tokens = [];
for await (const token of sequence.evaluate(model.tokenize('def add(a, b):\\n    return'), { temperature: 0 })) {
  tokens.push(token);
  if (tokens.length === 8) break;
}
// Where the addon was loaded from (Linux only: /proc/self/maps).
const { existsSync, readFileSync } = await import('node:fs');
const maps = existsSync('/proc/self/maps') ? readFileSync('/proc/self/maps', 'utf8') : '';
const addon = maps.split('\\n').find((l) => l.endsWith('llama-addon.node'));
console.log(JSON.stringify({ gpu: llama.gpu, buildType: llama.buildType, tokens: tokens.length, text: model.detokenize(tokens), addon: addon?.split(' ').pop(), root }));
await context.dispose();
await model.dispose();
await llama.dispose();
`;

/**
 * Unpacks the VSIX's extension/ outside the repository (so nothing resolves from its node_modules)
 * and runs SMOKE_SCRIPT there on the shipped LM's GGUF: packaging fails unless the packaged
 * node-llama-cpp loads it from the VSIX's own binary and generates.
 */
function smokeEngine(vsix) {
  if (!existsSync(SMOKE_MODEL)) {
    console.log(`smoke: ${relative(root, SMOKE_MODEL)} is missing; making it (bench/engine/prepare.ts)`);
    run(process.execPath, ['--import', 'tsx', join(root, 'bench', 'engine', 'prepare.ts')]);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'coderag-vsix-'));
  try {
    const unzip = spawnSync('unzip', ['-q', vsix, 'extension/*', '-d', tmp], { encoding: 'utf8' });
    if (unzip.status !== 0) {
      const py = spawnSync('python3', ['-c', 'import sys,zipfile;zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', vsix, tmp], { encoding: 'utf8' });
      if (py.status !== 0) fail(`cannot unpack ${vsix}: ${unzip.stderr || py.stderr}`);
    }
    const ext = join(tmp, 'extension');
    writeFileSync(join(ext, 'dist', 'smokeEngine.mjs'), SMOKE_SCRIPT);
    const r = spawnSync(process.execPath, [join(ext, 'dist', 'smokeEngine.mjs'), SMOKE_MODEL, ext], { cwd: ext, encoding: 'utf8', timeout: 120_000 });
    const line = (r.stdout || '').trim().split('\n').pop() ?? '';
    let result;
    try {
      result = JSON.parse(line);
    } catch {
      fail(`the VSIX's node-llama-cpp did not run a GGUF (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim().slice(-2000)}`);
    }
    if (result.tokens < 1) fail(`the VSIX's node-llama-cpp generated no token: ${line}`);
    if (process.platform === 'linux' && !result.addon?.startsWith(ext + sep)) fail(`the smoke run loaded llama-addon.node from outside the VSIX: ${result.addon}`);
    console.log(`smoke: the VSIX's node-llama-cpp (${result.buildType}, gpu ${result.gpu}) ran ${relative(root, SMOKE_MODEL)}: ${result.tokens} tokens ${JSON.stringify(result.text)}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Runs vsce in the staging folder. Its one warning that does not apply is its advice to bundle
 * (over 100 .js files): node-llama-cpp must keep its own file layout (it forks its own
 * testBindingBinary.js to test a binary before loading it), so a line says so instead; any other warning fails.
 */
function vscePackage(vsce, dir, target, vsix) {
  // No public repository yet: the README's relative links stay relative (the documents are inside the VSIX).
  const cmdArgs = [vsce, 'package', '--target', target, '--out', vsix, '--allow-missing-repository', '--no-rewrite-relative-links', '--no-update-package-json', '--no-git-tag-version'];
  const r = spawnSync(process.execPath, cmdArgs, { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const advice = /^\s*WARNING\s+This extension consists of (\d+) files, out of which (\d+) are JavaScript files\..*$/m;
  const note = (text) => text.replace(advice, (_, files, js) => `vsce's advice to bundle (${js} of ${files} files are .js) does not apply: node-llama-cpp keeps its own file layout`);
  const stdout = note(r.stdout ?? '');
  const stderr = note(r.stderr ?? '');
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  if (r.status !== 0) fail(`vsce package --target ${target} exited with ${r.status ?? r.signal}`);
  const warning = `${stdout}\n${stderr}`.split('\n').find((l) => /\bWARNING\b/.test(l));
  if (warning) fail(`vsce warned: ${warning.trim()}`);
}

const args = parseArgs(process.argv.slice(2));
if (args.build) run(process.execPath, ['esbuild.config.mjs']);
const assets = requiredAssets();
checkAssets(root, assets);
const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
if (!existsSync(vsce)) fail('@vscode/vsce is not installed; run npm ci');
mkdirSync(args.out, { recursive: true });
for (const target of args.targets) {
  const started = Date.now();
  const dir = stage(target);
  const vsix = join(args.out, `${manifest.name}-${manifest.version}-${target}.vsix`);
  rmSync(vsix, { force: true });
  vscePackage(vsce, dir, target, vsix);
  const count = verifyVsix(vsix, target, assets);
  if (target === `${process.platform}-${process.arch}`) smokeEngine(vsix);
  const mb = (statSync(vsix).size / (1024 * 1024)).toFixed(1);
  console.log(`packaged ${relative(process.cwd(), vsix) || vsix}: ${mb} MiB, ${count} files, ${target} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

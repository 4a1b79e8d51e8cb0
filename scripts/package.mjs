// Builds platform-specific VSIXs: node scripts/package.mjs [--target T ...|--target all] [--no-build] [--out DIR]
// Each VSIX carries dist/ (client, server, CLI, grammars, models) and the runtime externals the
// bundles load (web-tree-sitter, onnxruntime-node; the tokenizer library is bundled) with only the
// target's onnxruntime binaries (CONTRIBUTING.md, code rule 13). vsce runs in a staging folder holding exactly that
// dependency closure, so the VSIX does not depend on what else node_modules holds.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** vsce target -> the binary folder of onnxruntime-node 1.30 (bin/napi-v6/<os>/<arch>). */
const TARGETS = {
  'linux-x64': { os: 'linux', arch: 'x64' },
  'linux-arm64': { os: 'linux', arch: 'arm64' },
  'darwin-arm64': { os: 'darwin', arch: 'arm64' },
  'win32-x64': { os: 'win32', arch: 'x64' },
  'win32-arm64': { os: 'win32', arch: 'arm64' },
};
/** What the bundles load at run time (esbuild externals minus `vscode`). */
const RUNTIME_PACKAGES = ['web-tree-sitter', 'onnxruntime-node'];
/** Dependencies of onnxruntime-node's install script only (download and unzip), which the extension never runs. */
const INSTALL_SCRIPT_ONLY = new Set(['adm-zip', 'global-agent']);
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
  const assets = ['dist/client.js', 'dist/server.js', 'dist/cli.js', 'dist/grammars/tree-sitter.wasm', 'dist/grammars/tree-sitter-python.wasm', 'dist/grammars/tree-sitter-java.wasm', 'dist/models/manifest.json'];
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
    for (const dep of Object.keys(pkg.dependencies ?? {})) if (!INSTALL_SCRIPT_ONLY.has(dep)) visit(dir, dep, false);
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) visit(dir, dep, true);
  };
  for (const name of names) visit(root, name, false);
  return found;
}

/** Copy filter: a package's own files (its nested node_modules come through the closure), this target's binaries only. */
function packageFilter(pkgDir, target) {
  const { os, arch } = TARGETS[target];
  return (src) => {
    const rel = relative(pkgDir, src).split(sep);
    if (rel.includes('node_modules')) return false;
    // onnxruntime-node: bin/napi-vN/<os>/<arch>/...
    if (rel[0] === 'bin' && rel.length >= 3 && /^napi-v\d+$/.test(rel[1] ?? '')) {
      if (rel[2] !== os) return false;
      if (rel.length >= 4 && rel[3] !== arch) return false;
    }
    return true;
  };
}

function stage(target) {
  const dir = join(root, '.coderag-cache', 'package', target);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // The manifest as it is, with only the run-time dependencies (vsce asks npm for their tree).
  const staged = { ...manifest };
  delete staged.devDependencies;
  delete staged.scripts;
  staged.dependencies = Object.fromEntries(RUNTIME_PACKAGES.map((n) => [n, manifest.dependencies[n]]));
  writeFileSync(join(dir, 'package.json'), JSON.stringify(staged, null, 2) + '\n');
  for (const f of ['README.md', 'CHANGELOG.md', 'CONTRIBUTING.md', 'LICENSE', '.vscodeignore']) if (existsSync(join(root, f))) cpSync(join(root, f), join(dir, f));
  // The documents the README links, the icon and the walkthrough's pages.
  for (const d of ['docs', 'media']) if (existsSync(join(root, d))) cpSync(join(root, d), join(dir, d), { recursive: true });
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true });
  for (const [pkgDir, pkg] of closure(RUNTIME_PACKAGES)) {
    const to = join(dir, relative(root, pkgDir));
    cpSync(pkgDir, to, { recursive: true, filter: packageFilter(pkgDir, target) });
    // The staged copy declares only what it loads, so vsce's dependency check does not ask for the install script's packages.
    const dropped = Object.keys(pkg.dependencies ?? {}).filter((d) => INSTALL_SCRIPT_ONLY.has(d));
    if (dropped.length > 0) {
      const staged = { ...pkg, dependencies: Object.fromEntries(Object.entries(pkg.dependencies).filter(([d]) => !INSTALL_SCRIPT_ONLY.has(d))) };
      writeFileSync(join(to, 'package.json'), JSON.stringify(staged, null, 2) + '\n');
    }
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
  const leaked = files.filter((f) => /^(src|test|scripts|models)\//.test(f) || f.includes('models/training/') || /\.ts$/.test(f) && !f.endsWith('.d.ts'));
  if (leaked.length > 0) fail(`${vsix} carries sources or training files: ${leaked.slice(0, 5).join(', ')}${leaked.length > 5 ? ' ...' : ''}`);
  return files.length;
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
  // No public repository yet: the README's relative links stay relative (the documents are inside the VSIX).
  run(process.execPath, [vsce, 'package', '--target', target, '--out', vsix, '--allow-missing-repository', '--no-rewrite-relative-links', '--no-update-package-json', '--no-git-tag-version'], { cwd: dir });
  const count = verifyVsix(vsix, target, assets);
  const mb = (statSync(vsix).size / (1024 * 1024)).toFixed(1);
  console.log(`packaged ${relative(process.cwd(), vsix) || vsix}: ${mb} MiB, ${count} files, ${target} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

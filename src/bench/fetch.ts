// `bench fetch`: download Debian source packages and unpack their upstream tarballs, the recipe
// of docs/BENCHMARKS.md "Methodology"; `python3-*` names are binary packages (`apt-get download`,
// `dpkg-deb -x`, their dist-packages folder), as bench/lists/validation-python.txt says. apt runs on a private
// state folder (its own deb-src source list, package lists and cache) so the system's apt state
// is never touched; `apt-get update` runs once and is remembered.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import { join, resolve } from 'node:path';
import { errorMessage, throwIfAborted } from '../engine/util/errors';

export const FETCH_MARKER = '.coderag-fetch.json';

interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs an external command; injected so tests never reach the network. */
export type CommandRunner = (command: string, args: readonly string[], cwd: string, signal?: AbortSignal) => Promise<CommandResult>;

export const spawnCommand: CommandRunner = (command, args, cwd, signal) =>
  new Promise((resolvePromise, reject) => {
    const child = spawn(command, [...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? 1, stdout, stderr }));
  });

/** Package names of a list file: one per line, `#` starts a comment, blank lines ignored. */
export function parsePackageList(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    if (!/^[a-z0-9][a-z0-9+.-]*$/.test(line)) throw new Error(`not a Debian package name: "${line}"`);
    if (!out.includes(line)) out.push(line);
  }
  return out;
}

type FetchStatus = 'ok' | 'cached' | 'failed';

export interface FetchResult {
  package: string;
  status: FetchStatus;
  /** The unpacked folder (ok / cached). */
  folder?: string;
  /** The upstream tarball unpacked (ok). */
  tarball?: string;
  /** Why it failed. */
  reason?: string;
  /** Something worth knowing about a success (apt-get complained after the upstream tarball arrived). */
  note?: string;
}

interface FetchOptions {
  packages: readonly string[];
  dest: string;
  /** The system's apt source list (deb822 `.sources` or one-line `.list`); deb entries become deb-src. */
  aptSources?: string;
  run?: CommandRunner;
  onResult?: (r: FetchResult) => void;
  onStep?: (message: string) => void;
}

const DEFAULT_SOURCES = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list'];

/** A deb-src source list made from the system's binary one (`binary`: keeping the binary entries too). */
export function sourceListFrom(text: string, deb822: boolean, binary = false): string {
  if (deb822) return text.replace(/^Types:\s*deb\s*$/gm, binary ? 'Types: deb deb-src' : 'Types: deb-src');
  const src = text.replace(/^deb\s/gm, 'deb-src ');
  return binary ? `${text.replace(/\n?$/, '\n')}${src}` : src;
}

/** Python libraries Debian ships as `python3-*` binary packages: their source packages are named otherwise. */
export function isBinaryPackage(pkg: string): boolean {
  return pkg.startsWith('python3-');
}

/** Where a binary package keeps its Python modules (Debian's python3 layout). */
const DIST_PACKAGES = join('usr', 'lib', 'python3', 'dist-packages');

/** Unpacked packages are skipped (their marker file says so); the rest are downloaded and unpacked. */
export async function fetchPackages(options: FetchOptions, signal?: AbortSignal): Promise<FetchResult[]> {
  const dest = resolve(options.dest);
  const run = options.run ?? spawnCommand;
  await fs.mkdir(dest, { recursive: true });
  const results: FetchResult[] = [];
  const todo: string[] = [];
  for (const pkg of options.packages) {
    const folder = join(dest, pkg);
    if (existsSync(join(folder, FETCH_MARKER))) {
      const r: FetchResult = { package: pkg, status: 'cached', folder };
      results.push(r);
      options.onResult?.(r);
    } else {
      todo.push(pkg);
    }
  }
  if (todo.length === 0) return results;

  let aptArgs: string[];
  try {
    aptArgs = await prepareApt(dest, options, run, signal);
  } catch (e) {
    for (const pkg of todo) {
      const r: FetchResult = { package: pkg, status: 'failed', reason: `apt-get update failed: ${errorMessage(e)}` };
      results.push(r);
      options.onResult?.(r);
    }
    return results;
  }
  for (const pkg of todo) {
    throwIfAborted(signal);
    options.onStep?.(`fetching ${pkg}`);
    let r: FetchResult;
    try {
      r = await fetchOne(pkg, dest, aptArgs, run, signal);
    } catch (e) {
      throwIfAborted(signal);
      r = { package: pkg, status: 'failed', reason: errorMessage(e) };
    }
    results.push(r);
    options.onResult?.(r);
  }
  return results;
}

/** The private apt state under DEST/.apt; returns the apt-get options that select it. */
async function prepareApt(dest: string, options: FetchOptions, run: CommandRunner, signal: AbortSignal | undefined): Promise<string[]> {
  const state = join(dest, '.apt');
  const sourcesPath = options.aptSources ?? DEFAULT_SOURCES.find((p) => existsSync(p));
  if (!sourcesPath) throw new Error(`no apt source list found (looked at ${DEFAULT_SOURCES.join(', ')})`);
  const deb822 = sourcesPath.endsWith('.sources');
  const listFile = join(state, deb822 ? 'src.sources' : 'src.list');
  await fs.mkdir(join(state, 'lists', 'partial'), { recursive: true });
  await fs.mkdir(join(state, 'cache', 'archives', 'partial'), { recursive: true });
  // Binary packages need the binary package lists as well (one apt-get update for both).
  const wanted = sourceListFrom(await fs.readFile(sourcesPath, 'utf8'), deb822, options.packages.some(isBinaryPackage));
  const previous = await fs.readFile(listFile, 'utf8').catch(() => undefined);
  const stamp = join(state, 'lists', '.coderag-updated');
  if (previous !== wanted) {
    await fs.writeFile(listFile, wanted, 'utf8');
    await fs.rm(stamp, { force: true });
  }
  const args = [
    '-o',
    `Dir::Etc::SourceList=${listFile}`,
    '-o',
    'Dir::Etc::SourceParts=/dev/null',
    '-o',
    `Dir::State::Lists=${join(state, 'lists')}`,
    '-o',
    `Dir::Cache=${join(state, 'cache')}`,
    // Downloads land in folders apt's sandbox user may not write to.
    '-o',
    'APT::Sandbox::User=root',
  ];
  if (!existsSync(stamp)) {
    options.onStep?.('apt-get update (private source lists, once)');
    const r = await run('apt-get', [...args, 'update'], dest, signal);
    if (r.code !== 0) throw new Error(lastLines(r.stderr || r.stdout));
    await fs.writeFile(stamp, new Date().toISOString() + '\n', 'utf8');
  }
  return args;
}

const ORIG_TARBALL = /\.orig\.tar\.(?:gz|xz|bz2|lzma|zst)$/;
const NATIVE_TARBALL = /\.tar\.(?:gz|xz|bz2|lzma|zst)$/;

/** The upstream tarball among downloaded files: `*.orig.tar.*`, else a native package's `*.tar.*`. */
export function pickTarball(files: readonly string[]): string | undefined {
  const sorted = [...files].sort();
  return (
    sorted.find((f) => ORIG_TARBALL.test(f)) ??
    sorted.find((f) => NATIVE_TARBALL.test(f) && !f.includes('.debian.tar.') && !/\.orig-[^.]+\.tar\./.test(f))
  );
}

async function fetchOne(
  pkg: string,
  dest: string,
  aptArgs: string[],
  run: CommandRunner,
  signal: AbortSignal | undefined,
): Promise<FetchResult> {
  const downloads = join(dest, '.downloads', pkg);
  await fs.mkdir(downloads, { recursive: true });
  if (isBinaryPackage(pkg)) return fetchBinary(pkg, dest, downloads, aptArgs, run, signal);
  let tarball = pickTarball(await fs.readdir(downloads));
  let note: string | undefined;
  if (!tarball) {
    const r = await run('apt-get', [...aptArgs, 'source', '--download-only', pkg], downloads, signal);
    tarball = pickTarball(await fs.readdir(downloads));
    // The mirror sometimes lacks only the Debian packaging tarball; the upstream one is all we need.
    if (!tarball)
      return {
        package: pkg,
        status: 'failed',
        reason: r.code !== 0 ? lastLines(r.stderr || r.stdout) : 'apt-get source downloaded no upstream tarball',
      };
    if (r.code !== 0) note = `apt-get source failed after the upstream tarball arrived: ${lastLines(r.stderr || r.stdout, 1)}`;
  }
  const mismatch = await checkAgainstDsc(downloads, tarball);
  if (mismatch) {
    await fs.rm(join(downloads, tarball), { force: true });
    return { package: pkg, status: 'failed', reason: mismatch };
  }
  const staging = join(dest, `.unpack-${pkg}`);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { recursive: true });
  const untar = await run('tar', ['-xf', join(downloads, tarball), '-C', staging], dest, signal);
  if (untar.code !== 0) {
    await fs.rm(staging, { recursive: true, force: true });
    return { package: pkg, status: 'failed', reason: `tar failed: ${lastLines(untar.stderr)}` };
  }
  // Strip the tarball's single top folder when it has one.
  const entries = await fs.readdir(staging, { withFileTypes: true });
  const only = entries.length === 1 && entries[0]!.isDirectory() ? join(staging, entries[0]!.name) : staging;
  const folder = join(dest, pkg);
  await fs.rm(folder, { recursive: true, force: true });
  await fs.rename(only, folder);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.writeFile(
    join(folder, FETCH_MARKER),
    JSON.stringify({ package: pkg, tarball, fetchedAt: new Date().toISOString() }, null, 2) + '\n',
    'utf8',
  );
  const result: FetchResult = { package: pkg, status: 'ok', folder, tarball };
  if (note) result.note = note;
  return result;
}

/** A binary package: `apt-get download` (apt checks the .deb against the signed lists), `dpkg-deb -x`, its dist-packages folder kept. */
async function fetchBinary(
  pkg: string,
  dest: string,
  downloads: string,
  aptArgs: string[],
  run: CommandRunner,
  signal: AbortSignal | undefined,
): Promise<FetchResult> {
  const debOf = async (): Promise<string | undefined> => (await fs.readdir(downloads)).sort().find((f) => f.endsWith('.deb'));
  let deb = await debOf();
  if (!deb) {
    const r = await run('apt-get', [...aptArgs, 'download', pkg], downloads, signal);
    deb = await debOf();
    if (!deb)
      return { package: pkg, status: 'failed', reason: r.code !== 0 ? lastLines(r.stderr || r.stdout) : 'apt-get download wrote no .deb' };
  }
  const staging = join(dest, `.unpack-${pkg}`);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.mkdir(staging, { recursive: true });
  const x = await run('dpkg-deb', ['-x', join(downloads, deb), staging], dest, signal);
  if (x.code !== 0) {
    await fs.rm(staging, { recursive: true, force: true });
    return { package: pkg, status: 'failed', reason: `dpkg-deb failed: ${lastLines(x.stderr)}` };
  }
  const modules = join(staging, DIST_PACKAGES);
  if (!existsSync(modules)) {
    await fs.rm(staging, { recursive: true, force: true });
    return { package: pkg, status: 'failed', reason: `${deb} holds no ${DIST_PACKAGES} folder (not a Python library package)` };
  }
  const folder = join(dest, pkg);
  await fs.rm(folder, { recursive: true, force: true });
  await fs.rename(modules, folder);
  await fs.rm(staging, { recursive: true, force: true });
  await fs.writeFile(
    join(folder, FETCH_MARKER),
    JSON.stringify({ package: pkg, deb, fetchedAt: new Date().toISOString() }, null, 2) + '\n',
    'utf8',
  );
  return { package: pkg, status: 'ok', folder, tarball: deb };
}

/** SHA-256 of each file a `.dsc` lists (its Checksums-Sha256 field). */
function dscSha256(dsc: string): Map<string, string> {
  const out = new Map<string, string>();
  const field = /^Checksums-Sha256:[^\n]*\n((?:[ \t][^\n]*\n?)*)/m.exec(dsc);
  for (const line of (field?.[1] ?? '').split('\n')) {
    const [hash, , name] = line.trim().split(/\s+/);
    if (hash && name) out.set(name, hash.toLowerCase());
  }
  return out;
}

/** A reason when the tarball's SHA-256 differs from the one its `.dsc` lists (no `.dsc`: nothing to check). */
async function checkAgainstDsc(folder: string, tarball: string): Promise<string | undefined> {
  const dsc = (await fs.readdir(folder)).find((f) => f.endsWith('.dsc'));
  if (!dsc) return undefined;
  const expected = dscSha256(await fs.readFile(join(folder, dsc), 'utf8')).get(tarball);
  if (!expected) return undefined;
  const actual = createHash('sha256')
    .update(await fs.readFile(join(folder, tarball)))
    .digest('hex');
  return actual === expected ? undefined : `${tarball}: SHA-256 ${actual} differs from ${expected} in ${dsc} (removed; run again)`;
}

function lastLines(text: string, n = 3): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.slice(-n).join(' | ') || 'no output';
}

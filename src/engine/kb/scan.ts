// Workspace scan: which files enter the knowledge base, and why the others do not.
// Respects what git ignores: git's own answer where git can give one, and always the files it reads
// (the global excludes file, .git/info/exclude, nested .gitignore files), failing closed when one
// cannot be read; caps file size and file count; skips secrets, binaries, non-UTF-8 text,
// symlink loops, symlinks out of the repository and names a prompt header cannot hold.
// Nothing here parses.
import { lstatSync, readdirSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { devNull } from 'node:os';
import { isAbsolute, join, parse, relative, resolve, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { Lang } from './types';
import { langOfPath } from './parsers';
import { errorMessage, throwIfAborted, UserError } from '../util/errors';
import { isFileReadError, readRegularFile, readRegularFileSync } from '../util/safeFile';
import { eventLoopYielder } from '../util/yielder';
import { lfText } from '../util/documentText';
import { configPath, excludesFileInConfig, gitConfigPlaces, gitIgnoredPaths } from './gitIgnore';

type SkipReason =
  | 'tooLarge'
  | 'binary'
  | 'notUtf8'
  | 'secret'
  | 'symlinkLoop'
  | 'symlinkOutside'
  | 'unreadable'
  | 'unreadableGitignore'
  | 'nameNotUtf8'
  | 'controlCharsInName'
  | 'parseFailed'
  | 'longLines'
  | 'tooManyTokens'
  | 'tooManyItems';

/** How a skip reason reads in a report. */
export const SKIP_REASON_TEXT: Record<SkipReason, string> = {
  tooLarge: 'too large',
  binary: 'binary',
  notUtf8: 'not UTF-8',
  secret: 'secret',
  symlinkLoop: 'symlink loop',
  symlinkOutside: 'symlink outside',
  unreadable: 'unreadable',
  unreadableGitignore: 'unreadable .gitignore',
  nameNotUtf8: 'file name not UTF-8',
  controlCharsInName: 'control characters in the name',
  parseFailed: 'parse failed',
  longLines: 'lines too long',
  tooManyTokens: 'too much code',
  tooManyItems: 'too many items',
};

export interface SkippedFile {
  path: string;
  reason: SkipReason;
  detail?: string;
}

interface SourceFile {
  /** Repo-relative, forward slashes. */
  path: string;
  absPath: string;
  /** The file's real path (links resolved): one file reached by two paths is one file. */
  realPath: string;
  lang: Lang;
  size: number;
}

export interface ScanOptions {
  /** Files larger than this are skipped (default 1 MiB). */
  maxFileBytes?: number;
  /** Extra gitignore-style patterns to exclude (the user's excluded globs). */
  exclude?: readonly string[];
  /** More candidate source files than this stop the scan with TooManyFilesError (default 50,000). */
  maxFiles?: number;
}

interface ScanResult {
  files: SourceFile[];
  skipped: SkippedFile[];
}

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_FILES = 50_000;

/** The scan found more candidate files than its limit: probably not one project's folder. */
class TooManyFilesError extends UserError {
  constructor(
    readonly repoRoot: string,
    readonly limit: number,
  ) {
    super(
      `more than ${limit.toLocaleString('en-US')} source files under ${repoRoot}: not indexed; open a project folder, ` +
        `exclude folders (coderag.exclude, --exclude) or raise the limit (coderag.maxFiles, --max-files)`,
    );
    this.name = 'TooManyFilesError';
  }
}

export function isTooManyFilesError(e: unknown): e is TooManyFilesError {
  return e instanceof TooManyFilesError;
}

function realOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * Why a folder must not be indexed as a workspace without the user insisting: the file-system
 * root or the home folder (tens of thousands of files, and everything private). `home` is the
 * host's home folder.
 */
export function workspaceRootProblem(root: string, home: string): string | undefined {
  const real = realOrResolved(root);
  if (parse(real).root === real) return `${root} is the root of the file system: not indexed; open a project folder`;
  if (home !== '' && real === realOrResolved(home)) return `${root} is your home folder: not indexed; open a project folder`;
  return undefined;
}

/** Inside `root` (itself included); both real paths. */
function isInside(root: string, real: string): boolean {
  if (real === root) return true;
  return real.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * C0/C1 controls, line separators and bidi overrides: a name holding one would break or disguise
 * the `# path` header of a prompt snippet.
 */
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

function hasControlChars(name: string): boolean {
  return CONTROL_CHARS.test(name);
}

/** Names in a folder whose bytes are not UTF-8 (as Node shows them, with U+FFFD). */
function nonUtf8Names(absDir: string, names: readonly string[]): Set<string> {
  const bad = new Set<string>();
  if (!names.some((n) => n.includes('\ufffd'))) return bad;
  try {
    for (const raw of readdirSync(absDir, { encoding: 'buffer' })) {
      const shown = raw.toString('utf8');
      if (!Buffer.from(shown, 'utf8').equals(raw)) bad.add(shown);
    }
  } catch {
    // The listing just succeeded; if it fails now the names are left to the checks that follow.
  }
  return bad;
}

type IgnoreFileRead = { status: 'none' } | { status: 'ok'; text: string } | { status: 'unreadable'; detail: string };

/** Ignore files larger than this are not read (and so fail closed). */
const MAX_IGNORE_FILE_BYTES = 16 * 1024 * 1024;

/** A .gitignore or exclude file: absent (or a folder) is none; present but unreadable (a FIFO, say) fails closed. */
async function readIgnoreFile(absPath: string): Promise<IgnoreFileRead> {
  // git's own way of naming no file (GIT_CONFIG_GLOBAL=/dev/null, say).
  if (absPath === devNull) return { status: 'none' };
  try {
    if (lstatSync(absPath).isDirectory()) return { status: 'none' };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { status: 'none' };
    return { status: 'unreadable', detail: (e as Error).message };
  }
  try {
    return { status: 'ok', text: (await readRegularFile(absPath, MAX_IGNORE_FILE_BYTES)).toString('utf8') };
  } catch (e) {
    return { status: 'unreadable', detail: errorMessage(e) };
  }
}

/** A small text file of git's own (`.git` of a worktree, `commondir`); undefined when it cannot be read. */
async function readGitFile(absPath: string): Promise<string | undefined> {
  try {
    return (await readRegularFile(absPath, 64 * 1024)).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The git dir holding info/exclude and config of a working tree whose top is `absDir` (a `.git` folder, or a worktree's `.git` file). */
async function gitCommonDir(absDir: string): Promise<string | undefined> {
  const dotGit = join(absDir, '.git');
  let st;
  try {
    st = statSync(dotGit);
  } catch {
    return undefined;
  }
  if (st.isDirectory()) return dotGit;
  const m = /^gitdir:\s*(.+?)\s*$/m.exec((await readGitFile(dotGit)) ?? '');
  if (!m?.[1]) return undefined;
  const gitDir = resolve(absDir, m[1]);
  // A linked worktree shares info/exclude with the main repository (its common dir); none: not a linked one.
  const commondir = await readGitFile(join(gitDir, 'commondir'));
  return commondir !== undefined ? resolve(gitDir, commondir.trim()) : gitDir;
}

/** `<git dir>/info/exclude` of a working tree whose top is `absDir`. */
async function gitExcludePath(absDir: string): Promise<string | undefined> {
  const common = await gitCommonDir(absDir);
  return common === undefined ? undefined : join(common, 'info', 'exclude');
}

type LayersRead = { layers: IgnoreLayer[] } | { unreadable: string; detail: string };

/**
 * The global excludes file as a layer over the whole folder: core.excludesFile as git's config
 * files set it (system, global, the repository's own), else the XDG default. `unreadable` names a
 * config file or the excludes file that could not be read.
 */
async function globalLayers(repoRoot: string): Promise<LayersRead> {
  const common = await gitCommonDir(repoRoot);
  const places = gitConfigPlaces(common === undefined ? undefined : join(common, 'config'));
  let value: string | undefined;
  for (const file of places.configFiles) {
    const read = await readIgnoreFile(file);
    if (read.status === 'unreadable') return { unreadable: file, detail: read.detail };
    if (read.status === 'ok') value = excludesFileInConfig(read.text) ?? value;
  }
  const path = value === undefined ? places.defaultExcludesFile : value === '' ? undefined : configPath(value, places.home, repoRoot);
  if (path === undefined) return { layers: [] };
  const read = await readIgnoreFile(path);
  if (read.status === 'unreadable') return { unreadable: path, detail: read.detail };
  return { layers: read.status === 'ok' ? [{ base: '', matcher: ignore().add(read.text) }] : [] };
}

/** The whole folder hidden: the global excludes (or a config naming them) could not be read, and they may be what keeps secrets out. */
function unreadableGlobal(read: { unreadable: string; detail: string }): SkippedFile {
  return { path: '.', reason: 'unreadableGitignore', detail: `${read.unreadable}: ${read.detail}; nothing under this folder is indexed` };
}

/**
 * The ignore layers a folder adds: its repository's info/exclude (when a working tree starts
 * here) and its .gitignore. `unreadable` names the file that could not be read.
 */
async function folderLayers(
  absDir: string,
  relDir: string,
  has: { gitignore: boolean; git: boolean } = { gitignore: true, git: true },
): Promise<{ layers: IgnoreLayer[] } | { unreadable: string; detail: string }> {
  const layers: IgnoreLayer[] = [];
  const exclude = has.git ? await gitExcludePath(absDir) : undefined;
  if (exclude) {
    const read = await readIgnoreFile(exclude);
    if (read.status === 'unreadable')
      return { unreadable: relDir === '' ? '.git/info/exclude' : `${relDir}/.git/info/exclude`, detail: read.detail };
    if (read.status === 'ok') layers.push({ base: relDir, matcher: ignore().add(read.text) });
  }
  if (has.gitignore) {
    const read = await readIgnoreFile(join(absDir, '.gitignore'));
    if (read.status === 'unreadable') return { unreadable: relDir === '' ? '.gitignore' : `${relDir}/.gitignore`, detail: read.detail };
    if (read.status === 'ok') layers.push({ base: relDir, matcher: ignore().add(read.text) });
  }
  return { layers };
}

/** Folders never worth indexing, whatever .gitignore says. */
const ALWAYS_EXCLUDED = ['.git/', '.hg/', '.svn/', 'node_modules/', '__pycache__/', '.venv/', '.tox/', '.mypy_cache/'];

/**
 * The most excluded globs used, and the longest one: every path of a scan is tested against each
 * glob (about 0.25 ms a path at 1,000 globs), and 100,000 of them held the event loop for seconds.
 */
const MAX_EXCLUDE_GLOBS = 1000;
const MAX_EXCLUDE_GLOB_CHARS = 1000;

/** The excluded globs that are used (the first MAX_EXCLUDE_GLOBS within MAX_EXCLUDE_GLOB_CHARS), and what was left out, in words. */
export function boundedExclude(exclude: readonly string[]): { globs: string[]; problems: string[] } {
  const problems: string[] = [];
  const short = exclude.filter((g) => g.length <= MAX_EXCLUDE_GLOB_CHARS);
  if (short.length < exclude.length)
    problems.push(`${exclude.length - short.length} excluded glob(s) longer than ${MAX_EXCLUDE_GLOB_CHARS} characters are not used`);
  if (short.length > MAX_EXCLUDE_GLOBS) problems.push(`${short.length} excluded globs: only the first ${MAX_EXCLUDE_GLOBS} are used`);
  return { globs: short.slice(0, MAX_EXCLUDE_GLOBS), problems };
}

/** Compiled matchers of the last few exclude lists: a list is compiled once, not per scan or per saved file. */
const compiledExcludes = new Map<string, Ignore>();

/** The always-excluded folders and the user's (bounded) globs as one matcher, compiled once per list. */
export function excludeMatcher(exclude: readonly string[] = []): Ignore {
  const key = exclude.join('\n');
  let matcher = compiledExcludes.get(key);
  if (!matcher) {
    matcher = ignore().add(ALWAYS_EXCLUDED).add(boundedExclude(exclude).globs);
    // The package builds each glob's regular expression at its first test: here, once.
    matcher.ignores('.coderag-compile');
    if (compiledExcludes.size >= 4) compiledExcludes.delete(compiledExcludes.keys().next().value!);
    compiledExcludes.set(key, matcher);
  }
  return matcher;
}

const SECRET_PATTERNS: RegExp[] = [
  /^\.env(\..*)?$/i,
  /\.pem$/i,
  /\.key$/i,
  /^id_rsa/i,
  /\.p12$/i,
  /credentials/i,
  /\.pfx$/i,
  /^id_(dsa|ecdsa|ed25519)/i,
];

/** Secret-bearing files never enter the knowledge base, whatever their extension. */
function isSecretFile(fileName: string): boolean {
  return SECRET_PATTERNS.some((re) => re.test(fileName));
}

function toPosix(p: string): string {
  return sep === '/' ? p : p.split(sep).join('/');
}

interface IgnoreLayer {
  /** Repo-relative folder the .gitignore lives in ('' for the root). */
  base: string;
  matcher: Ignore;
}

/**
 * Whether a repo-relative path leaves the folder it is relative to: `..` or `../x` (and an absolute
 * path). A name that merely begins with two dots (`..private/`, `..cache.py`) is inside.
 */
export function isOutsideRelative(rel: string): boolean {
  return rel === '..' || rel.startsWith('../') || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

function ignoredBy(layers: readonly IgnoreLayer[], relPath: string, isDir: boolean): boolean {
  for (const layer of layers) {
    // Each layer governs the paths under its folder only (the root's governs all).
    if (layer.base !== '' && !relPath.startsWith(`${layer.base}/`)) continue;
    const local = layer.base === '' ? relPath : relPath.slice(layer.base.length + 1);
    if (local === '') continue;
    if (layer.matcher.ignores(isDir ? `${local}/` : local)) return true;
  }
  return false;
}

/** The innermost working tree (a folder holding `.git`, '' for the root) among `workTrees` that holds `relPath`. */
function workTreeOf(relPath: string, workTrees: ReadonlySet<string>): string {
  for (let end = relPath.lastIndexOf('/'); end > 0; end = relPath.lastIndexOf('/', end - 1)) {
    const dir = relPath.slice(0, end);
    if (workTrees.has(dir)) return dir;
  }
  return '';
}

/**
 * The files git does not ignore, asking the git of each working tree the files are in (a nested
 * repository has its own config and info/exclude). Where git cannot answer (not installed, not a
 * repository) the rules read from the files stand alone. A file is asked about at its real path:
 * git answers nothing for a path through a link.
 */
async function withoutGitIgnored(
  repoRoot: string,
  files: SourceFile[],
  workTrees: ReadonlySet<string>,
  signal: AbortSignal,
): Promise<SourceFile[]> {
  const groups = new Map<string, SourceFile[]>();
  for (const f of files) {
    const tree = workTreeOf(f.path, workTrees);
    const group = groups.get(tree);
    if (group) group.push(f);
    else groups.set(tree, [f]);
  }
  const ignored = new Set<SourceFile>();
  for (const [tree, group] of groups) {
    let cwd: string;
    try {
      cwd = await realpath(tree === '' ? repoRoot : join(repoRoot, tree));
    } catch {
      continue;
    }
    const asked = new Map<string, SourceFile[]>();
    for (const f of group) {
      const rel = toPosix(relative(cwd, f.realPath));
      // A file whose real path is in another working tree (or outside) is left to the rules read from the files.
      if (rel === '' || isOutsideRelative(rel)) continue;
      const same = asked.get(rel);
      if (same) same.push(f);
      else asked.set(rel, [f]);
    }
    const answer = await gitIgnoredPaths(cwd, [...asked.keys()], signal);
    throwIfAborted(signal);
    if (!answer) continue;
    for (const p of answer) for (const f of asked.get(p) ?? []) ignored.add(f);
  }
  return ignored.size === 0 ? files : files.filter((f) => !ignored.has(f));
}

/** List the Python and Java files of a repository that may enter the knowledge base. */
export async function scanRepository(repoRoot: string, options: ScanOptions, signal: AbortSignal): Promise<ScanResult> {
  const rootLayer: IgnoreLayer = {
    base: '',
    matcher: excludeMatcher(options.exclude),
  };
  const global = await globalLayers(repoRoot);
  if ('unreadable' in global) return { files: [], skipped: [unreadableGlobal(global)] };
  const scan = new RepositoryScan(repoRoot, options, signal);
  await scan.walk(repoRoot, [rootLayer, ...global.layers]);
  return { files: await withoutGitIgnored(repoRoot, scan.files, scan.workTrees, signal), skipped: scan.skipped };
}

/**
 * The ignore layers that govern the folders `dirs` (repo-relative, the root '' first, each inside
 * the one before), and which of them are working trees.
 */
async function layersAlong(
  repoRoot: string,
  dirs: readonly string[],
  options: ScanOptions,
): Promise<{ layers: IgnoreLayer[]; workTrees: Set<string> } | { unreadable: string; detail: string }> {
  const global = await globalLayers(repoRoot);
  if ('unreadable' in global) return global;
  const layers: IgnoreLayer[] = [{ base: '', matcher: excludeMatcher(options.exclude) }, ...global.layers];
  const workTrees = new Set<string>();
  for (const base of dirs) {
    const abs = join(repoRoot, base);
    const own = await folderLayers(abs, base);
    if ('unreadable' in own) return own;
    layers.push(...own.layers);
    if (base !== '' && (await gitCommonDir(abs)) !== undefined) workTrees.add(base);
  }
  return { layers, workTrees };
}

/**
 * List the files scanRepository would list under one folder of the repository (`relDir`, repo-
 * relative): a folder that is gone, ignored, or reached through a link to an ancestor lists none.
 */
export async function scanFolder(repoRoot: string, relDir: string, options: ScanOptions, signal: AbortSignal): Promise<ScanResult> {
  if (relDir === '') return scanRepository(repoRoot, options, signal);
  const parts = relDir.split('/');
  if (parts.some(hasControlChars) || parts.includes('..')) return { files: [], skipped: [] };
  const above = parts.map((_, i) => parts.slice(0, i).join('/'));
  const along = await layersAlong(repoRoot, above, options);
  if ('unreadable' in along)
    return { files: [], skipped: [{ path: relDir, reason: 'unreadableGitignore', detail: `${along.unreadable}: ${along.detail}` }] };
  for (let i = 1; i <= parts.length; i++) if (ignoredBy(along.layers, parts.slice(0, i).join('/'), true)) return { files: [], skipped: [] };
  const abs = join(repoRoot, relDir);
  try {
    if (!statSync(abs).isDirectory()) return { files: [], skipped: [] };
  } catch {
    // Gone (deleted or moved): nothing is under it any more.
    return { files: [], skipped: [] };
  }
  const scan = new RepositoryScan(repoRoot, options, signal);
  if (!isInside(scan.rootReal, realOrResolved(abs)))
    return { files: [], skipped: [{ path: relDir, reason: 'symlinkOutside', detail: `points to ${realOrResolved(abs)}` }] };
  // The folders above were walked before this one in a whole scan: a link back to one is a loop here too.
  for (const dir of above) scan.markVisited(realOrResolved(join(repoRoot, dir)));
  for (const tree of along.workTrees) scan.workTrees.add(tree);
  await scan.walk(abs, along.layers);
  return { files: await withoutGitIgnored(repoRoot, scan.files, scan.workTrees, signal), skipped: scan.skipped };
}

/** A folder opened for the walk: its entries and the ignore layers that govern them. */
interface OpenFolder {
  relDir: string;
  /** The folder's real path. */
  real: string;
  entries: Dirent[];
  layers: IgnoreLayer[];
}

/** How a directory entry resolves once a symbolic link is followed. */
interface ResolvedEntry {
  isDir: boolean;
  isFile: boolean;
  /** The link's real target, for a symbolic link. */
  target?: string;
}

/** One scan's walk of the folder tree: the files found, the skipped ones and the folders already visited. */
class RepositoryScan {
  readonly files: SourceFile[] = [];
  readonly skipped: SkippedFile[] = [];
  /** The folders (repo-relative, the root aside) that hold a `.git`: each is asked of git on its own. */
  readonly workTrees = new Set<string>();
  readonly rootReal: string;
  private readonly repoRoot: string;
  private readonly signal: AbortSignal;
  private readonly maxBytes: number;
  private readonly maxFiles: number;
  private readonly visitedDirs = new Set<string>();
  // Synchronous file-system calls are much faster than a thread-pool hop per entry;
  // the walk yields to the event loop every few folders so a server stays responsive.
  // By time, per entry: a folder of thousands of files, each tested against every glob, is no longer one step.
  private readonly pause = eventLoopYielder(25);

  constructor(repoRoot: string, options: ScanOptions, signal: AbortSignal) {
    this.repoRoot = repoRoot;
    this.signal = signal;
    this.maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
    this.rootReal = realOrResolved(repoRoot);
  }

  /** A folder (by its real path) counted as walked already. */
  markVisited(real: string): void {
    this.visitedDirs.add(real);
  }

  async walk(absDir: string, layers: IgnoreLayer[]): Promise<void> {
    throwIfAborted(this.signal);
    await this.pause();
    const folder = await this.openFolder(absDir, layers);
    if (!folder) return;
    const { relDir, real, entries, layers: here } = folder;
    const badNames = nonUtf8Names(
      absDir,
      entries.map((e) => e.name),
    );
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      await this.pause();
      await this.visitEntry(entry, absDir, real, relDir, here, badNames);
    }
  }

  /** The folder's entries and layers; undefined (and a skip) when unreadable, already visited, or its ignore rules are unreadable. */
  private async openFolder(absDir: string, layers: IgnoreLayer[]): Promise<OpenFolder | undefined> {
    let real: string;
    try {
      real = realpathSync(absDir);
    } catch (e) {
      this.skipped.push({ path: toPosix(relative(this.repoRoot, absDir)) || '.', reason: 'unreadable', detail: (e as Error).message });
      return undefined;
    }
    const relDir = toPosix(relative(this.repoRoot, absDir));
    if (this.visitedDirs.has(real)) {
      this.skipped.push({ path: relDir, reason: 'symlinkLoop', detail: `already visited as ${real}` });
      return undefined;
    }
    this.visitedDirs.add(real);
    let entries: Dirent[];
    try {
      entries = readdirSync(absDir, { withFileTypes: true });
    } catch (e) {
      this.skipped.push({ path: relDir || '.', reason: 'unreadable', detail: (e as Error).message });
      return undefined;
    }
    // A .gitignore (or info/exclude) that cannot be read hides the folder it governs: its rules may
    // be what keeps secrets out, so nothing under it is indexed.
    const git = entries.some((e) => e.name === '.git');
    if (git && relDir !== '') this.workTrees.add(relDir);
    const own = await folderLayers(absDir, relDir, {
      gitignore: entries.some((e) => e.name === '.gitignore'),
      git,
    });
    if ('unreadable' in own) {
      this.skipped.push({
        path: relDir || '.',
        reason: 'unreadableGitignore',
        detail: `${own.unreadable}: ${own.detail}; nothing under this folder is indexed`,
      });
      return undefined;
    }
    return { relDir, real, entries, layers: own.layers.length > 0 ? [...layers, ...own.layers] : layers };
  }

  /** One folder entry: walked into, listed as a source file, skipped with a reason, or passed over. */
  private async visitEntry(
    entry: Dirent,
    absDir: string,
    realDir: string,
    relDir: string,
    here: IgnoreLayer[],
    badNames: Set<string>,
  ): Promise<void> {
    const abs = join(absDir, entry.name);
    const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
    const badName: SkipReason | undefined = badNames.has(entry.name)
      ? 'nameNotUtf8'
      : hasControlChars(entry.name)
        ? 'controlCharsInName'
        : undefined;
    if (badName) {
      // The name as listed is not the file's name (or cannot head a prompt snippet): nothing
      // under it can be read or shown faithfully. Reported when it could hold source.
      if (!ignoredBy(here, rel, entry.isDirectory()) && (entry.isDirectory() || langOfPath(entry.name)))
        this.skipped.push({ path: JSON.stringify(rel).slice(1, -1), reason: badName });
      return;
    }
    const resolved = this.resolveEntry(entry, abs, rel);
    if (!resolved) return;
    const { isDir, isFile, target } = resolved;
    if (ignoredBy(here, rel, isDir)) return;
    if (target !== undefined && !isInside(this.rootReal, target)) {
      // Never follow a link out of the repository: it would bring another folder (the home
      // folder, say) into the knowledge base and so into prompts.
      if (isDir || langOfPath(entry.name)) this.skipped.push({ path: rel, reason: 'symlinkOutside', detail: `points to ${target}` });
      return;
    }
    if (isDir) {
      await this.walk(abs, here);
      return;
    }
    if (isFile) this.addSourceFile(entry.name, abs, target ?? join(realDir, entry.name), rel);
  }

  /** What an entry is, following a symbolic link; undefined for a link that does not resolve. */
  private resolveEntry(entry: Dirent, abs: string, rel: string): ResolvedEntry | undefined {
    if (!entry.isSymbolicLink()) return { isDir: entry.isDirectory(), isFile: entry.isFile() };
    try {
      const st = statSync(abs);
      return { isDir: st.isDirectory(), isFile: st.isFile(), target: realpathSync(abs) };
    } catch (e) {
      // A dangling link, or a link cycle the OS refuses to resolve.
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') this.skipped.push({ path: rel, reason: 'symlinkLoop', detail: 'link resolves to itself' });
      return undefined;
    }
  }

  /** A regular file: listed when it is Python or Java source within the size cap, skipped with a reason when a secret or too large. */
  private addSourceFile(name: string, abs: string, real: string, rel: string): void {
    if (isSecretFile(name)) {
      this.skipped.push({ path: rel, reason: 'secret' });
      return;
    }
    const lang = langOfPath(name);
    if (!lang) return;
    let size: number;
    try {
      size = statSync(abs).size;
    } catch (e) {
      this.skipped.push({ path: rel, reason: 'unreadable', detail: (e as Error).message });
      return;
    }
    if (size > this.maxBytes) {
      this.skipped.push({ path: rel, reason: 'tooLarge', detail: `${size} bytes > ${this.maxBytes}` });
      return;
    }
    this.files.push({ path: rel, absPath: abs, realPath: real, lang, size });
    if (this.files.length > this.maxFiles) throw new TooManyFilesError(this.repoRoot, this.maxFiles);
  }
}

type ReadSourceResult = { ok: true; text: string; hash: string } | { ok: false; reason: SkipReason; detail: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decode a source file's bytes: binary and non-UTF-8 content is refused, never guessed. The text
 * has LF line breaks whatever the file uses; the hash is of the bytes (it tells a changed file).
 */
export function decodeSource(bytes: Uint8Array): ReadSourceResult {
  // The whole file (size-capped by the scan): a NUL anywhere means binary. indexOf is a memchr.
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(0) !== -1)
    return { ok: false, reason: 'binary', detail: 'contains NUL bytes' };
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: 'notUtf8', detail: 'not valid UTF-8' };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return { ok: true, text: lfText(text), hash: contentHash(bytes) };
}

export function contentHash(data: Uint8Array | string): string {
  return createHash('sha1').update(data).digest('hex');
}

/**
 * Read and decode a source file of at most `maxBytes`. Never blocks on a FIFO or a device put
 * where a source file was (the scan listed a file; a watcher event names any path).
 */
export async function readSource(absPath: string, maxBytes: number = DEFAULT_MAX_FILE_BYTES): Promise<ReadSourceResult> {
  try {
    // The synchronous twin: source files are small (size-capped) and a thread-pool hop costs more
    // than the read; a FIFO or device is refused before any read all the same.
    return decodeSource(readRegularFileSync(absPath, maxBytes));
  } catch (e) {
    if (isFileReadError(e) && e.problem === 'tooLarge') return { ok: false, reason: 'tooLarge', detail: `more than ${maxBytes} bytes` };
    return { ok: false, reason: 'unreadable', detail: errorMessage(e) };
  }
}

type PathVerdict = { index: true; lang: Lang } | { index: false; reason: SkipReason | 'ignored' | 'notSource' };

/** Decide for one repo-relative path (a watcher event, a saved document) what scanRepository would. */
export async function checkPath(repoRoot: string, relPath: string, options: ScanOptions = {}): Promise<PathVerdict> {
  const parts = relPath.split('/');
  const fileName = parts[parts.length - 1] ?? relPath;
  if (parts.some(hasControlChars)) return { index: false, reason: 'controlCharsInName' };
  const along = await layersAlong(
    repoRoot,
    parts.map((_, i) => parts.slice(0, i).join('/')),
    options,
  );
  if ('unreadable' in along) return { index: false, reason: 'unreadableGitignore' };
  const { layers } = along;
  for (let i = 1; i < parts.length; i++) {
    if (ignoredBy(layers, parts.slice(0, i).join('/'), true)) return { index: false, reason: 'ignored' };
  }
  if (ignoredBy(layers, relPath, false)) return { index: false, reason: 'ignored' };
  // Through a link (the file or a folder above it) out of the repository: never indexed.
  let real = resolve(repoRoot, relPath);
  try {
    real = realpathSync(join(repoRoot, relPath));
    if (!isInside(realOrResolved(repoRoot), real)) return { index: false, reason: 'symlinkOutside' };
  } catch {
    // Gone or dangling: the caller finds it missing.
  }
  if (isSecretFile(fileName)) return { index: false, reason: 'secret' };
  const lang = langOfPath(fileName);
  if (!lang) return { index: false, reason: 'notSource' };
  const file: SourceFile = { path: relPath, absPath: join(repoRoot, relPath), realPath: real, lang, size: 0 };
  const kept = await withoutGitIgnored(repoRoot, [file], along.workTrees, new AbortController().signal);
  if (kept.length === 0) return { index: false, reason: 'ignored' };
  return { index: true, lang };
}

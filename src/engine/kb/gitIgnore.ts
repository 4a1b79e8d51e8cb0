// What git ignores, in two ways: git's own answer (`git check-ignore` in a child process, with the
// repository's config, so the global excludes file, info/exclude and every .gitignore count), and
// where git cannot answer, the path of the global excludes file as git would find it.
import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { getLogger } from '../util/logger';

const log = getLogger('scan');

/** git is asked once per working tree and scan; one that takes longer than this is not waited for. */
const GIT_TIMEOUT_MS = 20_000;
/** More output than this is not git answering check-ignore. */
const MAX_GIT_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Variables that would point git at another repository than the folder's own. */
const REPOSITORY_VARIABLES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_COMMON_DIR', 'GIT_OBJECT_DIRECTORY', 'GIT_NAMESPACE'];

function gitEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of REPOSITORY_VARIABLES) delete env[name];
  return env;
}

/**
 * The paths (relative to `cwd`, forward slashes) that git ignores in the working tree at `cwd`,
 * tracked ones included (`--no-index`: the rules decide, as they do for the scan). Undefined when
 * git cannot answer: not installed, `cwd` is not in a repository, it failed or timed out.
 */
export function gitIgnoredPaths(cwd: string, relPaths: readonly string[], signal?: AbortSignal): Promise<Set<string> | undefined> {
  if (relPaths.length === 0) return Promise.resolve(new Set());
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = (answer: Set<string> | undefined): void => {
      clearTimeout(timer);
      resolve(answer);
    };
    let child;
    try {
      // The repository's config could name a program for fsmonitor; check-ignore needs none.
      child = spawn('git', ['-c', 'core.fsmonitor=false', 'check-ignore', '--stdin', '-z', '--no-index'], {
        cwd,
        env: gitEnv(),
        stdio: ['pipe', 'pipe', 'ignore'],
        ...(signal ? { signal } : {}),
      });
    } catch (e) {
      log.debug(`git check-ignore could not start: ${(e as Error).message}`);
      settle(undefined);
      return;
    }
    // A timer of our own: the one spawn's `timeout` sets outlives a git that never started.
    const started = child;
    timer = setTimeout(() => started.kill(), GIT_TIMEOUT_MS);
    const chunks: Buffer[] = [];
    let size = 0;
    child.stdout.on('data', (d: Buffer) => {
      size += d.length;
      if (size > MAX_GIT_OUTPUT_BYTES) child.kill();
      else chunks.push(d);
    });
    // Not installed (ENOENT), or stopped by the signal.
    child.on('error', (e) => {
      log.debug(`git check-ignore failed: ${e.message}`);
      settle(undefined);
    });
    child.on('close', (code) => {
      // 0: some paths are ignored, 1: none; 128 (not a repository, say) and a kill: no answer.
      if ((code !== 0 && code !== 1) || size > MAX_GIT_OUTPUT_BYTES) {
        log.debug(`git check-ignore in ${cwd} gave no answer (exit ${code})`);
        settle(undefined);
        return;
      }
      const ignored = new Set<string>();
      for (const p of Buffer.concat(chunks).toString('utf8').split('\0')) if (p.startsWith('./')) ignored.add(p.slice(2));
      settle(ignored);
    });
    // git that exits early (no repository) closes its input: the answer is the exit code.
    child.stdin.on('error', () => undefined);
    // `./` first: a name beginning with `:` would otherwise read as pathspec magic.
    child.stdin.end(relPaths.map((p) => `./${p}\0`).join(''));
  });
}

/** A value of a git config line: quotes removed, escapes read, a comment after it dropped. */
function configValue(raw: string): string {
  let out = '';
  let kept = 0;
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') {
      quoted = !quoted;
      kept = out.length;
    } else if (!quoted && (c === '#' || c === ';')) {
      break;
    } else if (c === '\\') {
      const n = raw[++i] ?? '';
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n === 'b' ? '\b' : n;
      kept = out.length;
    } else {
      out += c;
      if (quoted || !/\s/.test(c)) kept = out.length;
    }
  }
  return out.slice(0, kept).replace(/^\s+/, '');
}

/** `core.excludesFile` in the text of a git config file: undefined when not set there ('' when set empty). */
export function excludesFileInConfig(text: string): string | undefined {
  let section = '';
  let found: string | undefined;
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.trim();
    const header = /^\[\s*([A-Za-z0-9.-]+)(\s+"(?:[^"\\]|\\.)*")?\s*\](.*)$/.exec(line);
    if (header) {
      section = header[2] ? `${header[1]!.toLowerCase()} sub` : header[1]!.toLowerCase();
      // A variable may follow the header on the same line.
      line = header[3]!.trim();
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(line);
    if (section === 'core' && entry && entry[1]!.toLowerCase() === 'excludesfile') found = configValue(entry[2] ?? '');
  }
  return found;
}

interface GitConfigPlaces {
  /** The config files git reads, lowest precedence first (system, global, the repository's). */
  configFiles: string[];
  /** The excludes file used when no config sets core.excludesFile. */
  defaultExcludesFile: string | undefined;
  home: string;
}

/** Where git looks for its config and the default global excludes file, from the environment as git reads it. */
export function gitConfigPlaces(localConfig: string | undefined, env: NodeJS.ProcessEnv = process.env): GitConfigPlaces {
  const home = env.HOME || homedir();
  const xdg = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : home ? join(home, '.config') : undefined;
  const configFiles: string[] = [];
  const noSystem = env.GIT_CONFIG_NOSYSTEM;
  if (!noSystem || /^(0|false|no|off)$/i.test(noSystem)) configFiles.push(env.GIT_CONFIG_SYSTEM || '/etc/gitconfig');
  if (env.GIT_CONFIG_GLOBAL !== undefined) {
    if (env.GIT_CONFIG_GLOBAL !== '') configFiles.push(env.GIT_CONFIG_GLOBAL);
  } else {
    if (xdg) configFiles.push(join(xdg, 'git', 'config'));
    if (home) configFiles.push(join(home, '.gitconfig'));
  }
  if (localConfig) configFiles.push(localConfig);
  return { configFiles, defaultExcludesFile: xdg ? join(xdg, 'git', 'ignore') : undefined, home };
}

/** A path from a git config value: `~/` is the home folder, a relative one is taken from the working tree. */
export function configPath(value: string, home: string, workTree: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return join(home, value.slice(2));
  return isAbsolute(value) ? value : resolve(workTree, value);
}

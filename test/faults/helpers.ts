// What the fault tests share: the built `coderag` CLI run as a user runs it, and small repositories
// written into temp folders.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cliPath } from '../helpers/paths';
import { buildOnce } from '../server/lspHarness';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/coderag.js ...args` on the current source (bundled once per test process). */
export function coderag(args: string[], env: Record<string, string> = {}): CliRun {
  buildOnce();
  const r = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', env: { ...process.env, CODERAG_LOG: '', ...env }, timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Write `files` (repo-relative path -> text) under `root`. */
export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, data] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), data);
  }
}

export function link(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/** Make a file unreadable even for root (chmod 000 does not stop root): a link to a folder reads as EISDIR. */
export function makeUnreadable(path: string): void {
  if (process.getuid?.() === 0) {
    rmSync(path);
    mkdirSync(`${path}.folder`);
    symlinkSync(`${path}.folder`, path);
  } else {
    chmodSync(path, 0o000);
  }
}

export interface IndexJson {
  files: number;
  parsed: number;
  reused: number;
  skipped: { path: string; reason: string; detail?: string }[];
  savedIndex: unknown;
  indexPath: string;
}

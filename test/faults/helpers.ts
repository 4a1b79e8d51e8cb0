// What the fault tests share: the built `coderag` CLI run as a user runs it, and small repositories
// written into temp folders.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { INDEX_FORMAT_VERSION } from '../../src/engine/kb/store';
import { cliPath } from '../helpers/paths';
import type { InlineCompletionItem } from '../../src/protocol/protocol';
import { buildOnce, type LspSession } from '../server/lspHarness';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/coderag.js ...args` on the current source (bundled once per test process). */
export function coderag(args: string[], env: Record<string, string> = {}): CliRun {
  buildOnce();
  const r = spawnSync(process.execPath, [cliPath, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CODERAG_LOG: '', ...env },
    timeout: 120_000,
  });
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

/** Ways a saved index file gets damaged on disk, each with the reason the store must give. */
export const INDEX_CORRUPTIONS: { label: string; corrupt: (file: string) => void; reason: RegExp }[] = [
  { label: 'truncated', corrupt: (f) => writeFileSync(f, readFileSync(f).subarray(0, 100)), reason: /truncated/ },
  {
    label: 'bit-flipped',
    corrupt: (f) => {
      const b = readFileSync(f);
      for (let i = b.length - 200; i < b.length - 190; i++) b[i] = (b[i] ?? 0) ^ 0xff;
      writeFileSync(f, b);
    },
    reason: /checksum/,
  },
  {
    label: 'foreign-version',
    corrupt: (f) => writeFileSync(f, readFileSync(f, 'utf8').replace(`"version":${INDEX_FORMAT_VERSION}`, '"version":999')),
    reason: /version 999/,
  },
  { label: 'garbage', corrupt: (f) => writeFileSync(f, 'not an index at all\n'), reason: /corrupt header/ },
];

/** A repository of `packages` x `perPackage` small Python files, each with one function and one class. */
export function writeManyFiles(root: string, packages: number, perPackage: number): void {
  for (let d = 0; d < packages; d++) {
    mkdirSync(join(root, `pkg${d}`), { recursive: true });
    for (let i = 0; i < perPackage; i++) {
      writeFileSync(
        join(root, `pkg${d}`, `m${i}.py`),
        `def func_${d}_${i}(x):\n    return x + ${i}\n\n\nclass C${d}_${i}:\n    def run(self):\n        return func_${d}_${i}(1)\n`,
      );
    }
  }
}

export interface TypingRun {
  /** Each request's items, in the order typed. */
  results: InlineCompletionItem[][];
  sendMs: number;
  /** From the last keystroke to the last answer. */
  answerMs: number;
  /** The cursor column after the last keystroke. */
  lastCol: number;
}

/**
 * Type `text` into a new line at `line` of the open document `uri` (whose text is `original`), one
 * character per `intervalMs` on an absolute schedule, requesting a completion after each keystroke;
 * the document is restored afterwards.
 */
export async function typeIntoLine(
  lsp: LspSession,
  uri: string,
  original: string,
  line: number,
  text: string,
  o: { keystrokes: number; intervalMs: number; firstVersion: number },
): Promise<TypingRun> {
  const lines = original.split('\n');
  const promises: Array<Promise<InlineCompletionItem[]>> = [];
  const t0 = performance.now();
  let lastCol = 0;
  for (let i = 1; i <= o.keystrokes; i++) {
    const typed = text.slice(0, Math.min(i, text.length));
    lastCol = typed.length;
    lsp.change(uri, [...lines.slice(0, line), typed, ...lines.slice(line)].join('\n'), o.firstVersion + i);
    promises.push(lsp.complete(uri, line, typed.length));
    // Keystrokes on an absolute schedule, so a slow turn does not slow the typing down.
    const due = t0 + i * o.intervalMs;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
  }
  const sentAt = performance.now();
  const results = await Promise.all(promises);
  const answerMs = performance.now() - sentAt;
  lsp.change(uri, original, o.firstVersion + o.keystrokes + 1);
  return { results, sendMs: sentAt - t0, answerMs, lastCol };
}

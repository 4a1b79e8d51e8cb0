// llama.vim, llama.cpp's own editor client, on the moving session of bench:moving: the same cases,
// the same four places, the same pause before each, typed key by key into vim (keys sent through
// tmux), against the same llama.cpp server, reached through the same recording proxy. Per keystroke
// it records what the server evaluated for llama.vim's completion, the time from the key to its
// first token, and (at the case's place) whether the request's extra context held the line's
// cross-file definitions. Its `n_predict` is set to bench:moving's answer length.
//
// vim, llama.vim and tmux must run where the repositories are reachable at the same paths: `--root DIR`
// names a root file system holding them (Debian's `vim-llama.cpp`, e.g. a debootstrap of the suite that
// packages it), which this script enters with chroot (root only), binding the repositories' folder in.
//
// Usage: node --import tsx scripts/benchLlamaVim.ts --llama-url http://127.0.0.1:8012 --root DIR --cases F.jsonl --repos DIR
//   [--cases F2 --repos DIR2 ...] [--per-repo 1] [--max-keys 8] [--pause-ms 2000] [--max-new-tokens 16] [--json OUT]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readCases, type LineCase } from './benchTyping';
import { engineIdle, keyRecord, llamaEngine, placesOf, summarizeMoving, type Engine, type MoveRecord, type Place } from './benchMoving';

const SOCKET = '/tmp/coderag-llamavim.sock';

function inRoot(root: string, args: string[]): string {
  return execFileSync('chroot', [root, ...args], { encoding: 'utf8' });
}

function tmux(root: string, ...args: string[]): void {
  inRoot(root, ['tmux', '-S', SOCKET, ...args]);
}

/** A vim command line, typed in normal mode. */
function ex(root: string, command: string): void {
  tmux(root, 'send-keys', '-t', 'lv', 'Escape');
  tmux(root, 'send-keys', '-t', 'lv', '-l', `:${command}`);
  tmux(root, 'send-keys', '-t', 'lv', 'Enter');
}

const vimString = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * Waits until a completion request that arrived after `since` has been answered, or `limitMs` passed,
 * or `quietMs` passed with nothing in flight and no request since (llama.vim answered from its own
 * cache, or sent nothing). A request llama.vim holds back while its last one runs counts as waited for.
 */
async function answeredAfter(engine: Engine, since: number, limitMs: number, quietMs = 5000): Promise<void> {
  const end = performance.now() + limitMs;
  while (performance.now() < end) {
    if (engine.stats().some((r) => r.arrivedMs >= since && r.maxTokens > 0 && !r.cut && r.endedMs !== undefined)) return;
    const asked = (engine.arrivals?.() ?? []).some((t) => t >= since) || (engine.inFlight?.() ?? 0) > 0;
    if (!asked && performance.now() - since > quietMs) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether llama.vim's request shows `def`: a chunk of its extra context, or its local context, from the definition's file naming it. */
function requestHolds(body: Record<string, unknown> | undefined, def: { name: string; file: string }): boolean {
  const name = new RegExp(`(^|[^A-Za-z0-9_$])${def.name.replace(/[$]/g, '\\$')}([^A-Za-z0-9_$]|$)`);
  const extra = (body?.input_extra as Array<{ filename?: string; text?: string }> | undefined) ?? [];
  return extra.some((c) => (c.filename ?? '').endsWith(def.file) && name.test(c.text ?? ''));
}

async function session(
  root: string,
  engine: Engine,
  c: LineCase,
  places: readonly Place[],
  maxKeys: number,
  pauseMs: number,
): Promise<MoveRecord[]> {
  const keys: Array<{ place: number; k: number; t0: number }> = [];
  const start = performance.now();
  for (const [p, place] of places.entries()) {
    const file = fileURLToPath(place.uri);
    const lineText = place.text(0).split('\n')[place.line]!;
    ex(root, `e! ${file}`);
    // The line as the place has it before typing; the cursor where typing starts, in insert mode.
    ex(root, `call setline(${place.line + 1}, ${vimString(lineText)}) | call cursor(${place.line + 1}, ${place.column + 1})`);
    if (p > 0) await new Promise((r) => setTimeout(r, pauseMs));
    const typed = maxKeys > 0 ? Math.min(maxKeys, place.typed.length) : place.typed.length;
    // Key 0 is the cursor arriving in insert mode (llama.vim asks at once), as bench:moving's first
    // request is at the place before a character is typed; key k types the line's k-th character.
    for (let k = 0; k < typed; k++) {
      const t0 = performance.now();
      if (k === 0) tmux(root, 'send-keys', '-t', 'lv', place.column >= lineText.length ? 'A' : 'i');
      else tmux(root, 'send-keys', '-t', 'lv', '-l', place.typed[k - 1]!);
      keys.push({ place: p + 1, k, t0 });
      await answeredAfter(engine, t0, 180_000);
    }
    tmux(root, 'send-keys', '-t', 'lv', 'Escape');
  }
  await engineIdle(engine, 1500);
  const stats = engine.stats().filter((st) => st.arrivedMs >= start);
  const defs = c.metadata.crossfile_defs ?? [];
  // llama.vim's completions ask for tokens; its ring updates ask for none.
  return keys.map((key, i) =>
    keyRecord({ build: 'llama.vim', c, key, next: keys[i + 1]?.t0, stats, isWarm: (st) => st.maxTokens === 0, pick: 'first' }, (gen) =>
      gen && defs.length > 0 ? defs.every((d) => requestHolds(gen.body, d)) : undefined,
    ),
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'llama-url': { type: 'string' },
      root: { type: 'string' },
      cases: { type: 'string', multiple: true, default: [] },
      repos: { type: 'string', multiple: true, default: [] },
      'per-repo': { type: 'string', default: '1' },
      'max-keys': { type: 'string', default: '8' },
      'pause-ms': { type: 'string', default: '2000' },
      'max-new-tokens': { type: 'string', default: '16' },
      json: { type: 'string' },
    },
  });
  const root = values.root;
  if (!values['llama-url'] || !root || values.cases.length === 0 || values.cases.length !== values.repos.length)
    throw new Error('usage: benchLlamaVim.ts --llama-url URL --root DIR --cases F.jsonl --repos DIR');
  const engine = await llamaEngine(values['llama-url'], 'llama.vim');
  const port = new URL(engine.url).port;
  const records: MoveRecord[] = [];
  // The repositories at the same paths inside the root, and what tmux and vim need there.
  const mounted: string[] = [];
  const bind = (dir: string, how: string[]): void => {
    const inside = join(root, dir);
    mkdirSync(inside, { recursive: true });
    if (execFileSync('sh', ['-c', `mountpoint -q ${inside} && echo yes || echo no`], { encoding: 'utf8' }).trim() === 'no') {
      execFileSync('mount', [...how, inside]);
      mounted.push(inside);
    }
  };
  try {
    bind('/proc', ['-t', 'proc', 'proc']);
    bind('/dev', ['--rbind', '/dev']);
    for (const repos of new Set(values.repos.map((r) => resolve(r)))) bind(repos, ['--bind', repos]);
    const vimrc = '/tmp/coderag-llamavim.vimrc';
    writeFileSync(
      join(root, vimrc),
      [
        'set nocompatible noswapfile nobackup autoindent',
        `let g:llama_config = { 'endpoint_fim': 'http://127.0.0.1:${port}/infill', 'n_predict': ${Number(values['max-new-tokens'])}, 'show_info': 0 }`,
        'packadd llama.cpp',
        '',
      ].join('\n'),
    );
    // A session a run before left behind; a socket without its server is only removed.
    if (existsSync(join(root, SOCKET)))
      try {
        tmux(root, 'kill-server');
      } catch {
        rmSync(join(root, SOCKET), { force: true });
      }
    tmux(root, 'new-session', '-d', '-s', 'lv', '-x', '200', '-y', '50', `vim -u ${vimrc}`);
    // vim and llama.vim load before the first keys (keys sent sooner were lost).
    await new Promise((r) => setTimeout(r, 4000));
    for (let i = 0; i < values.cases.length; i++) {
      for (const c of readCases(values.cases[i]!, Number(values['per-repo']))) {
        const places = placesOf(c, join(resolve(values.repos[i]!), c.metadata.repository));
        if (!places) continue;
        records.push(...(await session(root, engine, c, places, Number(values['max-keys']), Number(values['pause-ms']))));
        process.stderr.write(`${c.metadata.task_id} llama.vim: ${records.length} requests so far\n`);
        if (values.json) writeFileSync(values.json, JSON.stringify(records, null, 1));
      }
    }
  } finally {
    try {
      tmux(root, 'kill-server');
    } catch {
      // already gone
    }
    await engine.close();
    for (const m of mounted.reverse()) execFileSync('umount', ['-l', m]);
  }
  console.log(summarizeMoving(records));
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : String(e));
    process.exit(1);
  });
}

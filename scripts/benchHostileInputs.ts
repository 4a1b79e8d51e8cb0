// `node --import tsx scripts/benchHostileInputs.ts` (after `npm run build`): how long each hostile
// input of test/faults/README.md's round 2 blocks the language server's event loop, and its peak memory, where the work
// runs (the server process, spoken to over stdio as an editor would). Each case starts a fresh
// server on a copy of test/fixtures (pyshop or javashop) with default settings, the completion model
// an Ollama-compatible test server that answers at once. Per case it prints the event loop's
// longest block while the case ran (the server's own monitor, `coderag/getStatus`), the server's
// peak RSS (VmHWM of the server process, the child of `coderag serve`) and the case's wall time. The acceptance: no block over 200 ms, RSS under 1 GB.
//
// Cases: an ordinary completion (the baseline: the probing model and the encoders run on this
// machine too), a 300 KB hex literal in the open file (on its own line, or on the cursor's line) with a
// completion after a dot and inside a call; a 300 MB learned-preferences file (similar-code mode
// `bandit`, which reads it); a Java file of 5,000 nested blocks opened, completed in and saved;
// a Java method saved mid-edit as `this.`; 100,000 excluded globs; a FIFO as the learned-preferences
// file; negative maxNewTokens and budgetTokens; a frame declaring 2 GB (its peak RSS sampled while
// 1.2 GB of body is written). Options: --only SUBSTRING (cases whose name has it).
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { startOllamaTestServer, type OllamaTestServer } from '../test/helpers/ollamaServer';
import { copyFixture, tempDir } from '../test/helpers/paths';
import { startLsp, type LspSession } from '../test/server/lspHarness';
import { indexFolderFor } from '../src/engine/kb/store';

const MODEL = 'bench-instant:latest';
const HEX = '0x' + 'A1B2C3D4E5F60789'.repeat(300_000 / 16);

interface Row {
  name: string;
  blockMs: number;
  rssMB: number;
  wallMs: number;
  note: string;
  /** The server closed the connection (the frame case): no block to read, only the RSS while it was sent. */
  closed?: boolean;
}

function peakRssMB(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

/** `coderag serve` runs the server as its child: the server's pid. */
function serverPid(cli: number | undefined): number | undefined {
  try {
    const children = readFileSync(`/proc/${cli}/task/${cli}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    return children.length > 0 ? Number(children[0]) : cli;
  } catch {
    return cli;
  }
}

function settings(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: { provider: 'ollama' }, ollama: { host: model.url, completionModel: MODEL }, ...extra };
}

let model: OllamaTestServer;

/** One case on a fresh server: `prepare` before the window opens (the cache folder is the server's), `work` inside it. */
async function runCase(name: string, fixture: 'pyshop' | 'javashop', work: (lsp: LspSession, repo: string) => Promise<string>, options: { settings?: Record<string, unknown>; prepare?: (cache: string, repo: string) => void; warm?: boolean } = {}): Promise<Row> {
  const repo = copyFixture(fixture);
  const cache = tempDir('coderag-hostile-cache-');
  options.prepare?.(cache.path, repo.path);
  const lsp = await startLsp(repo.path, settings(options.settings), { cacheDir: cache.path });
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 120_000);
    await lsp.waitForDense(180_000);
    // One ordinary completion first: the models' first load is not the hostile input's cost.
    const warm = fixture === 'pyshop' ? join(repo.path, 'app', 'main.py') : javaMain(repo.path);
    const warmText = readFileSync(warm, 'utf8');
    if (options.warm !== false) await completeIn(lsp, warm, fixture === 'pyshop' ? 'python' : 'java', warmText, fixture === 'pyshop' ? '    service = CheckoutService(' : warmText.slice(0, lastStatementStart(warmText)));
    await lsp.status(); // opens the window
    const start = performance.now();
    const note = await work(lsp, repo.path);
    const wallMs = performance.now() - start;
    const status = await lsp.status();
    const blockMs = status.stats?.eventLoopDelayMs?.max ?? NaN;
    return { name, blockMs, rssMB: peakRssMB(serverPid(lsp.child.pid)), wallMs, note };
  } finally {
    await lsp.close();
    repo.cleanup();
    cache.cleanup();
  }
}

/** The position just after the first `marker` in `text` (0-based line and column). */
function after(text: string, marker: string): { line: number; character: number } {
  const at = text.indexOf(marker) + marker.length;
  const before = text.slice(0, at);
  const line = before.split('\n').length - 1;
  return { line, character: at - (before.lastIndexOf('\n') + 1) };
}

async function completeIn(lsp: LspSession, file: string, lang: string, text: string, marker: string): Promise<string> {
  const uri = lsp.open(file, lang, text);
  const at = after(text, marker);
  const items = await lsp.complete(uri, at.line, at.character);
  return `${items.length} item(s)`;
}

const PY_MAIN = (repo: string): string => readFileSync(join(repo, 'app', 'main.py'), 'utf8');
const cases: Array<{ name: string; run: () => Promise<Row> }> = [
  {
    name: 'baseline: an ordinary completion in the same file (Python)',
    run: () => runCase('baseline: an ordinary completion in the same file (Python)', 'pyshop', (lsp, repo) => completeIn(lsp, join(repo, 'app', 'main.py'), 'python', PY_MAIN(repo).replace('    receipt = service.checkout()', '    receipt = service.'), '    receipt = service.')),
  },
  {
    name: '300 KB hex literal above the cursor: dot completion (Python)',
    run: () => runCase(cases[1]!.name, 'pyshop', (lsp, repo) => {
      const text = PY_MAIN(repo).replace('\n\ndef main', `\n\nDATA = ${HEX}\n\n\ndef main`).replace('    receipt = service.checkout()', '    receipt = service.');
      return completeIn(lsp, join(repo, 'app', 'main.py'), 'python', text, '    receipt = service.');
    }),
  },
  {
    name: '300 KB hex literal above the cursor: call (Python)',
    run: () => runCase(cases[2]!.name, 'pyshop', (lsp, repo) => {
      const text = PY_MAIN(repo).replace('\n\ndef main', `\n\nDATA = ${HEX}\n\n\ndef main`).replace('    service = CheckoutService(cart, gateway)', '    service = CheckoutService(');
      return completeIn(lsp, join(repo, 'app', 'main.py'), 'python', text, '    service = CheckoutService(');
    }),
  },
  {
    name: '300 KB hex literal on the cursor line: dot completion (Python)',
    run: () => runCase(cases[3]!.name, 'pyshop', (lsp, repo) => {
      const text = PY_MAIN(repo).replace('    receipt = service.checkout()', `    receipt = ${HEX} + service.`);
      return completeIn(lsp, join(repo, 'app', 'main.py'), 'python', text, ' + service.');
    }),
  },
  {
    name: '300 KB hex literal on the cursor line: call (Python)',
    run: () => runCase(cases[4]!.name, 'pyshop', (lsp, repo) => {
      const text = PY_MAIN(repo).replace('    service = CheckoutService(cart, gateway)', `    service = CheckoutService(${HEX}, `);
      return completeIn(lsp, join(repo, 'app', 'main.py'), 'python', text, `CheckoutService(${HEX}, `);
    }),
  },
  {
    name: '300 KB hex literal above the cursor: dot completion and call (Java)',
    run: () => runCase(cases[5]!.name, 'javashop', async (lsp, repo) => {
      const file = javaMain(repo);
      const original = readFileSync(file, 'utf8');
      const open = original.indexOf('{', original.indexOf('class ')) + 1;
      const text = `${original.slice(0, open)}\n    static final java.math.BigInteger DATA = new java.math.BigInteger("1", 16).add(java.math.BigInteger.valueOf(${HEX}L));\n${original.slice(open)}`;
      const marker = lastStatementStart(text);
      const dot = `${text.slice(0, marker)}this.\n}\n}\n`;
      const call = `${text.slice(0, marker)}String.valueOf(\n}\n}\n`;
      const a = await completeIn(lsp, file, 'java', dot, 'this.');
      const b = await completeIn(lsp, file, 'java', call, 'String.valueOf(');
      return `${a}, ${b}`;
    }),
  },
  {
    name: '300 MB learned-preferences file (similar mode bandit)',
    run: () => runCase(cases[6]!.name, 'pyshop', (lsp, repo) => completeIn(lsp, join(repo, 'app', 'main.py'), 'python', PY_MAIN(repo), '    service = CheckoutService('), {
      settings: { similar: { mode: 'bandit' } },
      // The file is read by the folder's first completion: no warm-up before the window.
      warm: false,
      prepare: (cache, repo) => {
        const dir = join(cache, 'learning');
        mkdirSync(dir, { recursive: true });
        const fd = openSync(join(dir, `${basename(indexFolderFor(cache, repo))}.json`), 'w');
        writeSync(fd, '{"version":1,"pad":"');
        const chunk = Buffer.alloc(1 << 20, 'x');
        for (let i = 0; i < 300; i++) writeSync(fd, chunk);
        writeSync(fd, '"}');
        closeSync(fd);
      },
    }),
  },
  {
    name: '5,000 nested Java blocks: open, complete, save',
    run: () => runCase(cases[7]!.name, 'javashop', async (lsp, repo) => {
      const file = join(repo, 'Deep.java');
      const text = `class Deep {\n  int x;\n  void f() {\n${'{'.repeat(5000)}\n this.\n${'}'.repeat(5000)}\n  }\n}\n`;
      writeFileSync(file, text);
      const r = await completeIn(lsp, file, 'java', text, ' this.');
      await lsp.connection.sendNotification('textDocument/didSave', { textDocument: { uri: pathToFileURL(file).toString() }, text });
      await lsp.status();
      return r;
    }),
  },
  {
    name: '100,000 excluded globs (coderag.exclude, set while the folder is open)',
    run: () => runCase(cases[8]!.name, 'pyshop', async (lsp) => {
      lsp.configure(settings({ exclude: Array.from({ length: 100_000 }, (_, i) => `generated${i}/**/*.py`) }));
      const s = await lsp.waitForStatus((st) => st.message.includes('coderag.exclude'), 120_000);
      await lsp.waitForStatus((st) => st.folders.every((f) => f.state === 'ready'), 120_000);
      return `${s.folders[0]?.items ?? 0} items; ${/only the first \d+ are used/.exec(s.message)?.[0] ?? 'no bound named'}`;
    }),
  },
  {
    name: 'a FIFO where the learned-preferences file lives (similar mode bandit)',
    run: () => runCase(cases[9]!.name, 'pyshop', (lsp, repo) => completeIn(lsp, join(repo, 'app', 'main.py'), 'python', PY_MAIN(repo), '    service = CheckoutService('), {
      settings: { similar: { mode: 'bandit' } },
      warm: false,
      prepare: (cache, repo) => {
        const dir = join(cache, 'learning');
        mkdirSync(dir, { recursive: true });
        execFileSync('mkfifo', [join(dir, `${basename(indexFolderFor(cache, repo))}.json`)]);
      },
    }),
  },
  {
    name: 'negative maxNewTokens and budgetTokens',
    run: () => runCase(cases[10]!.name, 'pyshop', (lsp, repo) => completeIn(lsp, join(repo, 'app', 'main.py'), 'python', PY_MAIN(repo), '    service = CheckoutService('), {
      settings: { model: { provider: 'ollama' }, experimental: { model: { maxNewTokens: -5 }, prompt: { budgetTokens: -1 } } },
    }),
  },
  {
    name: 'a 2 GB Content-Length frame (1.2 GB of its body sent)',
    run: () => frameCase(cases[11]!.name),
  },
];

/**
 * The frame case: the server should close the connection at the header; its peak RSS is sampled
 * while the body is written (the process is gone after), and the bytes it took before closing.
 */
async function frameCase(name: string): Promise<Row> {
  const repo = copyFixture('pyshop');
  const lsp = await startLsp(repo.path, settings());
  try {
    await lsp.waitForStatus((s) => s.folders.length > 0 && s.folders.every((f) => f.state === 'ready'), 120_000);
    const pid = serverPid(lsp.child.pid);
    let rssMB = peakRssMB(pid);
    let exited = false;
    lsp.child.once('exit', () => (exited = true));
    const start = performance.now();
    const stdin = lsp.child.stdin!;
    stdin.on('error', () => undefined);
    stdin.write('Content-Length: 2000000000\r\n\r\n');
    const chunk = Buffer.alloc(1 << 20, 0x20);
    let sent = 0;
    for (; sent < 1200 && !exited && !stdin.destroyed; sent++) {
      if (!stdin.write(chunk)) await new Promise((r) => { stdin.once('drain', r); setTimeout(r, 1000); });
      rssMB = Math.max(rssMB, peakRssMB(pid) || 0);
    }
    await new Promise((r) => setTimeout(r, 500));
    const blockMs = exited ? NaN : ((await lsp.status()).stats?.eventLoopDelayMs?.max ?? NaN);
    return { name, blockMs, rssMB, wallMs: performance.now() - start, note: `${exited ? 'connection closed' : 'still open'} after ${sent} MiB written`, closed: exited };
  } finally {
    await lsp.close();
    repo.cleanup();
  }
}

function javaMain(repo: string): string {
  const found = readdirRecursive(repo).find((p) => p.endsWith('.java') && /Main|App|Checkout/.test(p));
  if (!found) throw new Error('no Java file to open in javashop');
  return found;
}

function readdirRecursive(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? readdirRecursive(p) : [p];
  });
}

/** The offset of the last method's last statement line (where `this.` is written). */
function lastStatementStart(text: string): number {
  const end = text.lastIndexOf('}', text.lastIndexOf('}') - 1);
  return text.lastIndexOf('\n', text.lastIndexOf(';', end)) + 1;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  model = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
  const rows: Row[] = [];
  try {
    for (const c of cases) {
      if (values.only && !c.name.includes(values.only)) continue;
      const row = await c.run();
      rows.push(row);
      process.stdout.write(`${row.name}: event loop blocked ${row.closed ? '- (connection closed)' : `${row.blockMs.toFixed(0)} ms max`}, peak RSS ${row.rssMB} MB, ${(row.wallMs / 1000).toFixed(1)} s (${row.note})\n`);
    }
  } finally {
    await model.close();
  }
  const bad = rows.filter((r) => !(r.blockMs <= 200 || r.closed) || !(r.rssMB < 1024));
  process.stdout.write(bad.length === 0 ? 'every case within 200 ms and 1 GB\n' : `over the limits: ${bad.map((r) => r.name).join('; ')}\n`);
}

void main();

// The end-to-end stage: the packaged VSIX in a real VS Code (code-server 4.100.3) driven
// through Debian's Chromium with playwright-core, completing through the Ollama-compatible test
// server answered by the embedded model; then the extension-host mocha suite inside the same
// code-server; then a fresh profile that follows only the README; last, a fresh profile with no
// model server that downloads the local model (a GGUF run by llama.cpp in the language server).
// Install notes: test/e2e/README.md. Screenshots go to artifacts/e2e/.
//
// Usage: node test/e2e/run.mjs [--vsix FILE] [--no-build] [--only ui|host|readme|local] [--grep TEXT] [--keep] [--headed]
// Prints one line per check and closes with `N passed, N failed` (exit 1 when any failed).
import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  createWriteStream,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { assertSaneGhostText } from './ghostSanity.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cacheDir = process.env.CODERAG_E2E_CACHE ?? join(root, '.coderag-cache', 'e2e');
const artifacts = join(root, 'artifacts', 'e2e');
const CODE_SERVER_VERSION = '4.100.3';
const CHROMIUM = '/usr/bin/chromium';
const EXTENSION_ID = 'coderag.coderag-vscode';
const COMPLETION_MODEL = 'coderag-lm:test';
const RERANK_MODEL = 'qwen3:8b';
const started = Date.now();

const args = { vsix: undefined, build: true, only: undefined, grep: undefined, keep: false, headed: false };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--vsix') args.vsix = process.argv[++i];
  else if (a === '--no-build') args.build = false;
  else if (a === '--only') args.only = process.argv[++i];
  else if (a === '--grep') args.grep = process.argv[++i];
  else if (a === '--keep') args.keep = true;
  else if (a === '--headed') args.headed = true;
  else {
    console.error(`unknown argument ${a}`);
    process.exit(2);
  }
}

const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
const log = (message) => console.log(`[e2e ${elapsed()}] ${message}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One line per check; `screens` are the screenshots taken for it. */
const results = [];
const screenshots = [];
function record(name, status, detail = '', ms = 0) {
  results.push({ name, status, detail });
  const mark = status === 'passed' ? 'PASS' : status === 'skipped' ? 'SKIP' : 'FAIL';
  console.log(`${mark} ${name}${ms ? ` (${(ms / 1000).toFixed(1)} s)` : ''}${detail ? ` — ${detail}` : ''}`);
}

class Skip extends Error {}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms / 1000} s`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Installation (cached under .coderag-cache/e2e)

function sh(cmd, cmdArgs, options = {}) {
  const r = spawnSync(cmd, cmdArgs, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.status !== 0)
    throw new Error(`${cmd} ${cmdArgs.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').slice(-2000)}`);
  return r.stdout;
}

function ensureSystemPackages() {
  const missing = [];
  if (!existsSync(CHROMIUM)) missing.push('chromium');
  if (spawnSync('sh', ['-c', 'command -v rg'], { encoding: 'utf8' }).status !== 0) missing.push('ripgrep');
  if (spawnSync('dpkg', ['-s', 'libkrb5-dev'], { encoding: 'utf8' }).status !== 0) missing.push('libkrb5-dev');
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(`missing system packages ${missing.join(' ')}; run: sudo apt-get install -y ${missing.join(' ')}`);
  log(`apt-get install ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  sh('apt-get', ['update', '-qq'], { env });
  sh('apt-get', ['install', '-y', '-qq', ...missing], { env });
}

/** code-server from npm with the recipe's fixes: root postinstall, node-pty's npx, ripgrep's download seeded from Debian's rg. */
function ensureCodeServer() {
  const dir = join(cacheDir, `code-server-${CODE_SERVER_VERSION}`);
  const bin = join(dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  const marker = join(dir, '.installed');
  if (existsSync(marker) && existsSync(bin)) return bin;
  log(`installing code-server ${CODE_SERVER_VERSION} into ${relative(root, dir)} (about a minute)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tmp = join(cacheDir, 'tmp');
  const rgCache = join(tmp, 'vscode-ripgrep-cache-1.15.11');
  mkdirSync(rgCache, { recursive: true });
  const rgStage = mkdtempSync(join(tmp, 'rg-'));
  cpSync(sh('sh', ['-c', 'command -v rg']).trim(), join(rgStage, 'rg'));
  sh('tar', ['-C', rgStage, '-czf', join(rgCache, 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz'), 'rg']);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'coderag-e2e-code-server', private: true, allowScripts: { 'code-server': true, argon2: true } }, null, 2),
  );
  const env = {
    ...process.env,
    TMPDIR: tmp,
    npm_config_unsafe_perm: 'true',
    npm_config_yes: 'true',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_update_notifier: 'false',
  };
  const r = spawnSync('npm', ['install', '--no-package-lock', '--loglevel=error', `code-server@${CODE_SERVER_VERSION}`], {
    cwd: dir,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`npm install code-server failed: ${(r.stderr || r.stdout).slice(-3000)}`);
  const rg = join(dir, 'node_modules', 'code-server', 'lib', 'vscode', 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg');
  if (!existsSync(bin) || !existsSync(rg))
    throw new Error(
      `code-server installed incompletely (entry ${existsSync(bin)}, ripgrep ${existsSync(rg)}); postinstall output: ${(r.stdout + r.stderr).slice(-3000)}`,
    );
  writeFileSync(marker, new Date().toISOString() + '\n');
  rmSync(rgStage, { recursive: true, force: true });
  return bin;
}

function ensureVsix() {
  if (args.vsix) return args.vsix;
  log('npm run package (linux-x64)');
  const r = spawnSync(
    process.execPath,
    [join(root, 'scripts', 'package.mjs'), '--target', 'linux-x64', ...(args.build ? [] : ['--no-build'])],
    { cwd: root, encoding: 'utf8' },
  );
  const out = `${r.stdout}\n${r.stderr}`;
  if (r.status !== 0) throw new Error(`packaging failed: ${out.trim().split('\n').slice(-5).join(' | ')}`);
  const line = out.split('\n').find((l) => l.startsWith('packaged '));
  if (line) log(line);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return join(root, `${manifest.name}-${manifest.version}-linux-x64.vsix`);
}

/** The extension-host suite, bundled; mocha stays external, loaded by absolute path from the repository's node_modules. */
async function buildSuite() {
  const { build } = await import('esbuild');
  const mochaPath = join(root, 'node_modules', 'mocha', 'index.js');
  if (!existsSync(mochaPath)) throw new Error('mocha is not installed; run npm ci');
  const mochaByPath = {
    name: 'mocha-by-path',
    setup: (b) => b.onResolve({ filter: /^mocha$/ }, () => ({ path: mochaPath, external: true })),
  };
  const out = join(cacheDir, 'suite');
  rmSync(out, { recursive: true, force: true });
  await build({
    entryPoints: {
      index: join(root, 'test', 'e2e', 'suite', 'index.ts'),
      'extension.test': join(root, 'test', 'e2e', 'suite', 'extension.test.ts'),
    },
    outdir: out,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    plugins: [mochaByPath],
    logLevel: 'warning',
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Processes

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const children = [];
function startChild(cmd, cmdArgs, options, logFile) {
  const child = spawn(cmd, cmdArgs, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  if (logFile) {
    const stream = createWriteStream(logFile);
    child.stderr.pipe(stream);
    if (!options.keepStdout) child.stdout.pipe(stream);
  }
  return child;
}

async function startModelServer(models = [COMPLETION_MODEL, RERANK_MODEL], logName = 'model-server.log') {
  const child = startChild(
    process.execPath,
    ['--import', 'tsx', join(root, 'test', 'e2e', 'modelServer.ts'), models.join(',')],
    { cwd: root, keepStdout: true },
    join(artifacts, logName),
  );
  const lines = createInterface({ input: child.stdout });
  const waiters = [];
  lines.on('line', (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return;
    }
    waiters.shift()?.(message);
  });
  const next = () => new Promise((resolve) => waiters.push(resolve));
  const ready = await withTimeout(next(), 60_000, 'model server start');
  if (!ready.ready) throw new Error(`model server: ${JSON.stringify(ready)}`);
  const command = async (name) => {
    const reply = next();
    child.stdin.write(`${name}\n`);
    const message = await withTimeout(reply, 10_000, `model server ${name}`);
    if (message.error) throw new Error(`model server ${name}: ${message.error}`);
    return message;
  };
  return { url: ready.url, child, command };
}

async function waitForHealth(url, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) return;
    } catch {
      // not up yet
    }
    await sleep(200);
  }
  throw new Error(`code-server did not answer ${url}/healthz within ${ms / 1000} s`);
}

// ---------------------------------------------------------------------------------------------
// Workspace

/**
 * What the Python checks type on pyshop/app/main.py:20: the arguments of a method defined in another
 * file (CheckoutService.checkout, found through the receiver's type). The test model behind the
 * Ollama API is the shipped 3.45M-parameter model without its loop guard: at
 * `service = CheckoutService(cart, ` it writes a keyword the constructor lacks or a loop inside the
 * line, which the junk filters now hide (no ghost text is the right answer there), so the checks
 * type where it writes a sane suggestion (`cart)`).
 */
const PY_LINE = 20;
const PY_TYPED = 'receipt = service.checkout(';

/**
 * Where the local check types: the same model run by llama.cpp from its GGUF decodes greedily
 * without the embedded client's tuning, so at PY_TYPED it writes `)),` (hidden, rightly); at the
 * constructor call of line 19 it writes `cart)`.
 */
const LOCAL_PY_LINE = 19;
const LOCAL_PY_TYPED = 'service = CheckoutService(';

/** The Java method whose body the body-mode check asks for: emptied on disk, so the index holds the file as the developer has it. */
const JAVA_BODY = {
  file: 'src/main/java/com/example/shop/service/CheckoutService.java',
  // The small test model writes one statement here; at checkout(Cart) its only answer names a field
  // the class lacks (`this.cart`), which the check rightly removes, so nothing would be shown there.
  header: 'public List<Receipt> getReceipts() {',
  /** 1-based line of the header (its body `{\n    }` is empty), set by emptyJavaBody. */
  line: 0,
};

function emptyJavaBody(path) {
  const text = readFileSync(path, 'utf8');
  const start = text.indexOf(JAVA_BODY.header);
  if (start < 0) throw new Error(`${JAVA_BODY.file} no longer declares ${JAVA_BODY.header}`);
  const open = start + JAVA_BODY.header.length;
  const end = text.indexOf('\n    }\n', open);
  const edited = `${text.slice(0, open)}\n    }\n${text.slice(end + '\n    }\n'.length)}`;
  writeFileSync(path, edited);
  JAVA_BODY.line = text.slice(0, open).split('\n').length;
}

/** The editor settings every profile gets: Tab must go to the ghost text (no suggest widget, no word-based suggestions, no auto-closing), no pop-ups. */
const EDITOR_SETTINGS = {
  'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
  'editor.wordBasedSuggestions': 'off',
  'editor.suggestOnTriggerCharacters': false,
  'editor.acceptSuggestionOnEnter': 'off',
  'editor.inlineSuggest.enabled': true,
  'editor.autoClosingBrackets': 'never',
  'editor.autoClosingQuotes': 'never',
  'editor.parameterHints.enabled': false,
  'editor.hover.enabled': false,
  'workbench.hover.delay': 300,
  'files.autoSave': 'off',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'extensions.ignoreRecommendations': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'security.workspace.trust.enabled': false,
  'window.commandCenter': false,
  'chat.commandCenter.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

function setUpWorkspace(tmp, modelUrl) {
  const ws = join(tmp, 'ws');
  for (const name of ['pyshop', 'javashop']) cpSync(join(root, 'test', 'fixtures', name), join(ws, name), { recursive: true });
  emptyJavaBody(join(ws, 'javashop', JAVA_BODY.file));
  // A third folder of generated modules, so indexing lasts long enough to be seen in the status
  // bar (the fixtures alone index in about half a second; the server reports status every 100 ms).
  const bulk = join(ws, 'inventory');
  for (let i = 0; i < 240; i++) {
    const dir = join(bulk, 'inventory', `area${Math.floor(i / 24)}`);
    mkdirSync(dir, { recursive: true });
    const fns = Array.from(
      { length: 6 },
      (_, j) =>
        `def stock_level_${i}_${j}(warehouse, sku: str, minimum: int = ${j}) -> int:\n    """Units of sku in warehouse ${i}, never below ${j}."""\n    count = warehouse.count(sku) + ${i * 7 + j}\n    return max(count, minimum)\n`,
    );
    writeFileSync(
      join(dir, `shelf_${i}.py`),
      `"""Shelf ${i} of the generated inventory."""\n\n\nclass Shelf${i}:\n    capacity = ${100 + i}\n\n    def __init__(self, name: str) -> None:\n        self.name = name\n        self.items: list[str] = []\n\n\n${fns.join('\n\n')}`,
    );
  }
  const workspaceFile = join(ws, 'coderag-e2e.code-workspace');
  writeFileSync(
    workspaceFile,
    JSON.stringify({ folders: [{ path: 'pyshop' }, { path: 'javashop' }, { path: 'inventory' }], settings: {} }, null, 2),
  );
  const userData = join(tmp, 'user-data');
  mkdirSync(join(userData, 'User'), { recursive: true });
  const settings = {
    ...EDITOR_SETTINGS,
    // CodeRAG against the test server (package.json contributes.configuration).
    'coderag.model.provider': 'ollama',
    'coderag.model.family': 'plain',
    'coderag.experimental.model.maxNewTokens': 24,
    'coderag.model.timeoutMs': 15000,
    'coderag.ollama.host': modelUrl,
    'coderag.ollama.completionModel': COMPLETION_MODEL,
    'coderag.rerank.kind': 'distilled',
    'coderag.rerank.llmModel': RERANK_MODEL,
    'coderag.debounceMs': 100,
    // The test model's window: 512 positions less a body's 128 new tokens (the server cannot tell it).
    'coderag.experimental.prompt.budgetTokens': 384,
  };
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  // The endpoint settings are machine-scoped: a remote window (the extension development host of
  // the host suite) reads them from the machine's settings only.
  mkdirSync(join(userData, 'Machine'), { recursive: true });
  writeFileSync(join(userData, 'Machine', 'settings.json'), JSON.stringify({ 'coderag.ollama.host': modelUrl }, null, 2));
  return { ws, workspaceFile, userData, extensions: join(tmp, 'extensions') };
}

// ---------------------------------------------------------------------------------------------
// The workbench, through the DOM

/** Installed before the workbench loads: records every CodeRAG status-bar text and notification toast, with time. */
function recorderScript() {
  const w = window;
  w.__e2e = { status: [], toasts: [] };
  const seenToasts = new Set();
  const tick = () => {
    const items = [...document.querySelectorAll('.statusbar-item')].filter((el) => /CodeRAG/.test(el.textContent ?? ''));
    for (const item of items) {
      const text = (item.textContent ?? '').trim();
      const icon = ((item.querySelector('.codicon')?.className ?? '').match(/codicon-(?!modifier)[\w-]+/g) ?? []).join(' ');
      const id = item.id;
      const last = w.__e2e.status.filter((s) => s.id === id).pop();
      if (!last || last.text !== text || last.icon !== icon) w.__e2e.status.push({ t: Date.now(), id, text, icon });
    }
    w.__e2e.ids = items.map((i) => i.id);
    for (const toast of document.querySelectorAll('.notifications-toasts .notification-toast, .notification-list-item')) {
      const message = (toast.querySelector('.notification-list-item-message')?.textContent ?? toast.textContent ?? '').trim();
      const severity = toast.querySelector('.codicon-error') ? 'error' : toast.querySelector('.codicon-warning') ? 'warning' : 'info';
      const progress = !!toast.querySelector(
        '.monaco-progress-container.active, .monaco-progress-container.infinite, .monaco-progress-container.discrete:not(.done)',
      );
      const key = `${severity}|${message}|${progress}`;
      if (!seenToasts.has(key)) {
        seenToasts.add(key);
        w.__e2e.toasts.push({ t: Date.now(), severity, message, progress });
      }
    }
  };
  setInterval(tick, 40);
}

class Workbench {
  constructor(page, ws) {
    this.page = page;
    this.ws = ws;
    this.n = 0;
  }

  async shot(name) {
    const file = join(artifacts, `${String(++this.n).padStart(2, '0')}-${name}.png`);
    await this.page.screenshot({ path: file }).catch((e) => log(`screenshot ${name} failed: ${e.message}`));
    screenshots.push(relative(root, file));
    return relative(root, file);
  }

  /** The extension's own status-bar item (VS Code's window-progress item also says "CodeRAG: indexing ..."). */
  statusItem() {
    return this.page.locator(`.statusbar-item[id="${EXTENSION_ID}"]`);
  }

  /** Texts the extension's item showed, in order. */
  async statusLog() {
    return (await this.page.evaluate(() => window.__e2e.status)).filter((s) => s.id === EXTENSION_ID);
  }

  /** Texts VS Code's window-progress item showed for the server's work-done progress. */
  async progressLog() {
    return (await this.page.evaluate(() => window.__e2e.status)).filter((s) => s.id !== EXTENSION_ID);
  }

  async toasts() {
    return this.page.evaluate(() => window.__e2e.toasts);
  }

  async currentStatus() {
    const log = await this.statusLog();
    return log[log.length - 1];
  }

  async waitForStatus(match, ms, what) {
    const deadline = Date.now() + ms;
    for (;;) {
      const s = await this.currentStatus();
      if (s && match(s)) return s;
      if (Date.now() > deadline)
        throw new Error(
          `${what}: status bar shows ${JSON.stringify(s?.text ?? '(no CodeRAG item)')} (${s?.icon ?? ''}) after ${ms / 1000} s`,
        );
      await sleep(100);
    }
  }

  async quickInput(prefixKey, text, rowText) {
    const page = this.page;
    await page.keyboard.press('Escape');
    await page.keyboard.press(prefixKey);
    const input = page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(text);
    const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: rowText ?? text.replace(/^>/, '') }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    await sleep(150);
    await page.keyboard.press('Enter');
  }

  async runCommand(title) {
    await this.quickInput('F1', `>${title}`, title);
  }

  /** Quick open by absolute path (needs no file search). */
  async openFile(path) {
    const name = path.split('/').pop();
    await this.quickInput('Control+P', join(this.ws, path), name);
    await this.page
      .locator('.editor-group-container.active .tabs-container .tab.active', { hasText: name })
      .first()
      .waitFor({ timeout: 15_000 });
    await this.activeEditor().locator('.view-lines').waitFor({ timeout: 15_000 });
  }

  activeEditor() {
    return this.page.locator('.editor-group-container.active .editor-instance .monaco-editor').first();
  }

  async goToLine(line) {
    await this.page.keyboard.press('Control+G');
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(`:${line}`);
    await sleep(100);
    await this.page.keyboard.press('Enter');
    await this.page
      .locator('.quick-input-widget')
      .waitFor({ state: 'hidden', timeout: 5_000 })
      .catch(() => undefined);
    await sleep(150);
  }

  async ghostText() {
    return this.page.evaluate(() => {
      const editor = document.querySelector('.editor-group-container.active .monaco-editor');
      if (!editor) return '';
      const inline = [...editor.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview')]
        .map((e) => e.textContent ?? '')
        .join('');
      const blocks = [...editor.querySelectorAll('.ghost-text')].map(
        (e) => [...e.querySelectorAll('.view-line')].map((l) => l.textContent ?? '').join('\n') || (e.textContent ?? ''),
      );
      return [inline, ...blocks].filter((s) => s.length > 0).join('\n');
    });
  }

  /**
   * The ghost text as the screen shows it, one entry per row: every text node under a ghost-text
   * element, grouped by its row on screen, left to right (the first row is the inline part on the
   * cursor's line, the rest the block below it; VS Code splits both into spans per token).
   */
  async ghostRows() {
    return this.page.evaluate(() => {
      const editor = document.querySelector('.editor-group-container.active .monaco-editor');
      if (!editor) return [];
      const seen = new Set();
      const pieces = [];
      for (const el of editor.querySelectorAll('.ghost-text-decoration, .ghost-text-decoration-preview, .ghost-text')) {
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          if (seen.has(node) || !node.textContent) continue;
          seen.add(node);
          const range = document.createRange();
          range.selectNodeContents(node);
          const rect = range.getBoundingClientRect();
          pieces.push({ top: Math.round(rect.top), left: rect.left, text: node.textContent.replace(/\u00a0/g, ' ') });
        }
      }
      const rows = new Map();
      for (const p of pieces.sort((a, b) => a.top - b.top || a.left - b.left)) rows.set(p.top, (rows.get(p.top) ?? '') + p.text);
      return [...rows.values()];
    });
  }

  /** The ghost text once shown ('' after `ms`); nothing shown after each `retriggerMs`: re-ask. */
  async waitForGhostText(ms, retriggerMs = 6000) {
    const deadline = Date.now() + ms;
    let retriggered = 0;
    for (;;) {
      const text = await this.ghostText();
      if (text.trim().length > 0) return text;
      if (Date.now() > deadline) return '';
      // Typing triggers automatically; re-ask (Alt+\ = editor.action.inlineSuggest.trigger) if nothing came.
      if (Date.now() > deadline - ms + retriggerMs * (retriggered + 1)) {
        retriggered++;
        await this.page.keyboard.press('Alt+Backslash');
      }
      await sleep(100);
    }
  }

  /** Hover the CodeRAG status item and read its tooltip (the server's one-line status message). */
  async statusTooltip() {
    await this.page.mouse.move(200, 300);
    await this.statusItem().locator('a, .statusbar-item-label').first().hover();
    const deadline = Date.now() + 6000;
    while (Date.now() < deadline) {
      const text = await this.page.evaluate(() =>
        [...document.querySelectorAll('.workbench-hover, .monaco-hover:not(.hidden)')]
          .map((e) => e.textContent ?? '')
          .join(' ')
          .trim(),
      );
      if (text) return text;
      await sleep(200);
    }
    return '';
  }

  /** Ctrl+F in the active editor: the find widget's match count ("1 of 3", "No results"). */
  async findCount(text) {
    await this.page.keyboard.press('Control+F');
    const input = this.page
      .locator('.editor-group-container.active .find-widget textarea, .editor-group-container.active .find-widget input')
      .first();
    await input.waitFor({ state: 'visible', timeout: 5_000 });
    await input.fill(text);
    await sleep(500);
    return (await this.page.locator('.editor-group-container.active .find-widget .matchesCount').first().textContent())?.trim() ?? '';
  }

  /** The visible lines of the active editor (scrolling through up to `pages` screens). */
  async editorText(pages = 1) {
    const seen = [];
    for (let i = 0; i < pages; i++) {
      const lines = await this.page.evaluate(() => {
        const editor = document.querySelector('.editor-group-container.active .monaco-editor');
        const rows = [...(editor?.querySelectorAll('.view-lines .view-line') ?? [])];
        return rows
          .map((r) => ({ top: parseFloat(r.style.top || '0'), text: (r.textContent ?? '').replace(/\u00a0/g, ' ') }))
          .sort((a, b) => a.top - b.top)
          .map((r) => r.text);
      });
      seen.push(...lines);
      if (i + 1 < pages) {
        await this.page.keyboard.press('PageDown');
        await sleep(150);
      }
    }
    return seen.join('\n');
  }
}

// ---------------------------------------------------------------------------------------------
// The checks

/** The workbench whose screen a failing check photographs. */
let currentWorkbench;

/** The checks every run needs (the workbench up, the index ready); with --grep the others run only when their name holds the text. */
const PREREQUISITES = new Set([
  'workbench loads with the VSIX installed and the extension activates on a Python file',
  'status bar shows indexing progress, then ready',
]);

async function check(name, fn, ms = 60_000) {
  if (args.grep && !PREREQUISITES.has(name) && !name.includes(args.grep)) return;
  const t = Date.now();
  try {
    const detail = await withTimeout(fn(), ms, name);
    record(name, 'passed', detail ?? '', Date.now() - t);
  } catch (e) {
    if (e instanceof Skip) record(name, 'skipped', e.message);
    else {
      const shot = currentWorkbench ? await currentWorkbench.shot(`FAILED-${name.replace(/[^\w]+/g, '-').slice(0, 40)}`) : '';
      record(
        name,
        'failed',
        `${e instanceof Error ? e.message.split('\nCall log')[0] : String(e)}${shot ? ` [${shot}]` : ''}`,
        Date.now() - t,
      );
    }
  }
}

/** Replace line `line` (1-based) from its first non-blank character on with `text`, typed, leaving the cursor at its end. */
async function retypeLine(wb, line, text) {
  await wb.goToLine(line);
  await wb.page.keyboard.press('End');
  await wb.page.keyboard.press('Shift+Home');
  await wb.page.keyboard.press('Delete');
  await wb.page.keyboard.type(text, { delay: 35 });
}

/** Every ghost text read is checked for sanity (ghostSanity.mjs: no placeholder, no line thrice, members the fixture's receivers have). */
function sane(ghost, file, typed = '') {
  assertSaneGhostText(ghost, { lang: file.endsWith('.java') ? 'java' : 'python', typed });
  return ghost;
}

async function completionCheck(wb, { file, line, typed, label, diskPath }) {
  await wb.openFile(file);
  await retypeLine(wb, line, typed);
  const ghost = await wb.waitForGhostText(40_000);
  await wb.shot(`${label}-ghost-text`);
  if (!ghost.trim())
    throw new Error(`no ghost text after typing \`${typed}\` at ${file}:${line} (status: ${(await wb.currentStatus())?.text})`);
  sane(ghost, file, typed);
  await wb.page.keyboard.press('Tab');
  await sleep(300);
  const after = await wb.ghostText();
  await wb.page.keyboard.press('Control+S');
  await sleep(800);
  await wb.shot(`${label}-accepted-saved`);
  const saved = readFileSync(diskPath, 'utf8');
  const savedLine = saved.split('\n')[line - 1] ?? '';
  const firstGhostLine = ghost.split('\n')[0].replace(/\u00a0/g, ' ');
  const norm = (s) => s.replace(/\s+/g, ' ').trim();
  if (
    !norm(savedLine).startsWith(norm(typed)) ||
    !norm(savedLine + '\n' + saved.split('\n').slice(line).join('\n')).includes(norm(firstGhostLine))
  ) {
    throw new Error(
      `saved line ${line} is ${JSON.stringify(savedLine)}; expected ${JSON.stringify(typed)} followed by the ghost text ${JSON.stringify(ghost)}`,
    );
  }
  if (after.trim() && after === ghost) throw new Error('Tab did not accept the ghost text (it is still shown)');
  return `ghost text ${JSON.stringify(ghost.length > 80 ? ghost.slice(0, 80) + '…' : ghost)} accepted; saved line: ${JSON.stringify(savedLine.trim())}`;
}

/**
 * Body mode, first half: the cursor on the new line of an empty method body; the
 * suggestion is the whole body (whole statements). Returns the rows shown.
 */
async function bodyGhostCheck(wb) {
  const file = `javashop/${JAVA_BODY.file}`;
  await wb.openFile(file);
  // The developer opens the body: Enter after the header's `{` (the editor indents the new line).
  await wb.goToLine(JAVA_BODY.line);
  await wb.page.keyboard.press('End');
  await wb.page.keyboard.press('Enter');
  // A body takes two model calls (sketch, body): re-asking sooner would cancel the request in flight.
  await wb.waitForGhostText(60_000, 20_000);
  await sleep(300);
  const rows = await wb.ghostRows();
  await wb.shot('java-body-ghost-text');
  sane(rows.join('\n'), file);
  // The body as the test model writes it (after the junk filters and the check): one or more whole
  // statements. That body mode wrote it is the next check's (the trace's sketch and elements).
  const lines = rows.map((l) => l.trim()).filter((l) => l.length > 0);
  if (lines.length < 1 || !/[;}]$/.test(lines.at(-1)))
    throw new Error(
      `expected the body as ghost text (whole statements) in the empty body of ${file}:${JAVA_BODY.line + 1}, got ${JSON.stringify(rows)} (status: ${(await wb.currentStatus())?.text})`,
    );
  return rows;
}

/** Body mode, second half: Tab inserts the whole body (shown again if the trace view took the focus) and the saved method holds it. */
async function bodyAcceptCheck(wb, diskPath, rows) {
  if (!rows) throw new Error('no body ghost text was shown (see the check above)');
  const ghost = rows.join('\n');
  const ghostLines = rows.map((l) => l.trim()).filter((l) => l.length > 0);
  // The trace view took the focus and the ghost text went. Back at the same cursor, a space typed and
  // deleted asks again with the same text: the server answers from its cache.
  const deadline = Date.now() + 30_000;
  let shown = (await wb.ghostRows()).join('\n');
  for (let asked = 0; shown !== ghost;) {
    if (Date.now() > deadline)
      throw new Error(`the body suggestion was not shown again: ${JSON.stringify(shown)} instead of ${JSON.stringify(ghost)}`);
    if (asked++ % 50 === 0) {
      await wb.goToLine(JAVA_BODY.line + 1);
      await wb.page.keyboard.press('End');
      await wb.page.keyboard.type(' ');
      await wb.page.keyboard.press('Backspace');
    }
    await sleep(100);
    shown = (await wb.ghostRows()).join('\n');
  }
  await wb.page.keyboard.press('Tab');
  await sleep(300);
  const after = (await wb.ghostRows()).join('\n');
  await wb.page.keyboard.press('Control+S');
  await sleep(800);
  await wb.shot('java-body-accepted-saved');
  const saved = readFileSync(diskPath, 'utf8').split('\n');
  const header = saved.findIndex((l) => l.includes(JAVA_BODY.header));
  // The method's closing brace: the first line after the header that is `}` at the header's indentation.
  const close = saved.findIndex((l, i) => i > header && l === '    }');
  const body = saved
    .slice(header + 1, close < 0 ? undefined : close)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  // Every ghost row, in order, inside the method (the screen may render a long line only in part: compare by prefix).
  let at = 0;
  for (const line of ghostLines) {
    const found = body.findIndex((b, i) => i >= at && b.startsWith(line));
    if (found < 0)
      throw new Error(
        `the saved method lacks the ghost line ${JSON.stringify(line)}; saved body: ${JSON.stringify(body)}; ghost: ${JSON.stringify(ghost)}`,
      );
    at = found + 1;
  }
  if (after.trim() && after === ghost) throw new Error('Tab did not accept the ghost text (it is still shown)');
  return `${ghostLines.length}-line ghost text accepted; saved body: ${JSON.stringify(body.join(' ⏎ ').slice(0, 160))}`;
}

async function uiChecks(wb, env) {
  const { page } = wb;
  const pyMain = join(env.ws, 'pyshop', 'app', 'main.py');
  const javaApp = join(env.ws, 'javashop', 'src', 'main', 'java', 'com', 'example', 'shop', 'App.java');
  let workbenchUp = false;

  await check(
    'workbench loads with the VSIX installed and the extension activates on a Python file',
    async () => {
      await page.goto(`${env.url}/?workspace=${encodeURIComponent(env.workspaceFile)}`, { waitUntil: 'domcontentloaded' });
      await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
      await page.locator('.explorer-folders-view, .welcome-view, .pane-body').first().waitFor({ timeout: 60_000 });
      await sleep(1500);
      await wb.openFile('pyshop/app/main.py');
      await wb.statusItem().waitFor({ timeout: 60_000 });
      workbenchUp = true;
      await wb.shot('workbench-extension-active');
      return `status bar item: ${JSON.stringify((await wb.currentStatus())?.text)}`;
    },
    120_000,
  );
  if (!workbenchUp) throw new Error('the workbench did not come up; the remaining UI checks cannot run');

  await check(
    'status bar shows indexing progress, then ready',
    async () => {
      const ready = await wb.waitForStatus((s) => /codicon-check/.test(s.icon) || /CodeRAG ·/.test(s.text), 90_000, 'ready');
      // Folders index one after another: a first "ready" may come before the larger folder starts,
      // so wait (bounded) until the log holds an indexing state followed by a ready one.
      const isIndexing = (s) => /codicon-sync/.test(s.icon) || /\d+\/\d+/.test(s.text);
      const deadline = Date.now() + 60_000;
      let seen = await wb.statusLog();
      let readyAt = -1;
      let indexing = [];
      for (;;) {
        indexing = seen.filter(isIndexing);
        const firstIndexing = indexing.length > 0 ? seen.indexOf(indexing[0]) : -1;
        readyAt = firstIndexing < 0 ? -1 : seen.findIndex((s, i) => i > firstIndexing && /codicon-check/.test(s.icon));
        if (readyAt >= 0 || Date.now() > deadline) break;
        await sleep(250);
        seen = await wb.statusLog();
      }
      await wb.shot('status-ready');
      const texts = [...new Set(seen.map((s) => `${s.text} [${s.icon}]`))];
      if (indexing.length === 0)
        throw new Error(
          `ready (${ready.text}) but no indexing state was ever shown; status texts seen: ${texts.join(' -> ')}; window progress: ${[...new Set((await wb.progressLog()).map((s) => s.text))].join(' -> ') || 'none'}`,
        );
      if (readyAt < 0) throw new Error(`ready was not shown after indexing: ${texts.join(' -> ')}`);
      const progress = [...new Set((await wb.progressLog()).map((s) => s.text))];
      return `status item: ${texts.join(' -> ')}; window progress: ${progress.join(' -> ') || 'none'}`;
    },
    100_000,
  );

  await check(
    'Python: typing where a cross-file definition is needed shows ghost text; Tab accepts; the saved file has it',
    () => completionCheck(wb, { file: 'pyshop/app/main.py', line: PY_LINE, typed: PY_TYPED, label: 'python', diskPath: pyMain }),
    90_000,
  );

  await check(
    '"CodeRAG: Explain Last Completion" shows the retrieved snippets with their paths',
    async () => {
      await wb.runCommand('CodeRAG: Explain Last Completion');
      await page
        .locator('.editor-group-container.active .tabs-container .tab.active', { hasText: /trace/i })
        .first()
        .waitFor({ timeout: 20_000 });
      await sleep(800);
      const text = await wb.editorText(8);
      await wb.goToLine(1);
      // The whole trace document, not just the rendered lines: the find widget counts the matches.
      const count = await wb.findCount('pyshop/services/checkout.py');
      await wb.shot('explain-last-completion');
      await page.keyboard.press('Escape');
      const paths = [...new Set(text.match(/[\w./-]+\.(?:py|java)\b/g) ?? [])];
      await page.keyboard.press('Control+W');
      if (!/\d+ of \d+/.test(count))
        throw new Error(
          `the trace view never names pyshop/services/checkout.py (find: ${JSON.stringify(count)}; paths on its first screens: ${paths.join(', ') || 'none'}); first lines: ${JSON.stringify(text.slice(0, 300))}`,
        );
      return `pyshop/services/checkout.py found in the trace (${count}); paths on its first screens: ${paths.slice(0, 8).join(', ')}`;
    },
    60_000,
  );

  await check(
    'Java: typing where a cross-file definition is needed shows ghost text; Tab accepts; the saved file has it',
    () =>
      completionCheck(wb, {
        file: 'javashop/src/main/java/com/example/shop/App.java',
        line: 19,
        typed: 'CheckoutService service = new CheckoutService(',
        label: 'java',
        diskPath: javaApp,
      }),
    90_000,
  );

  // Body mode: the ghost text, then the explain command while it is shown, then Tab and save.
  const javaBodyFile = join(env.ws, 'javashop', JAVA_BODY.file);
  let bodyRows;
  await check(
    'Java: an empty method body shows its body as ghost text',
    async () => {
      bodyRows = await bodyGhostCheck(wb);
      return `${bodyRows.filter((r) => r.trim()).length} rows: ${JSON.stringify(bodyRows.join(' ⏎ ').slice(0, 160))}`;
    },
    90_000,
  );

  await check(
    '"CodeRAG: Explain Last Completion" on the body suggestion shows its sketch, the elements found and their usages',
    async () => {
      if (!bodyRows) throw new Error('no body ghost text was shown (see the check above)');
      await wb.runCommand('CodeRAG: Explain Last Completion');
      await page
        .locator('.editor-group-container.active .tabs-container .tab.active', { hasText: /trace/i })
        .first()
        .waitFor({ timeout: 20_000 });
      await sleep(800);
      await wb.goToLine(1);
      const counts = {};
      // The usages come from other files than the target's (service/CheckoutService.java): model/ holds them.
      for (const text of [
        'body mode',
        '## Body (Rambo)',
        'Sketch:',
        'Elements found',
        'Usages:',
        'src/main/java/com/example/shop/model/',
      ]) {
        counts[text] = await wb.findCount(text);
        await page.keyboard.press('Escape');
      }
      await wb.shot('explain-body-completion');
      await page.keyboard.press('Control+W');
      await sleep(500);
      const missing = Object.entries(counts)
        .filter(([, c]) => !/\d+ of \d+/.test(c))
        .map(([h]) => h);
      if (missing.length > 0)
        throw new Error(`the trace view lacks ${missing.map((h) => JSON.stringify(h)).join(', ')} (find: ${JSON.stringify(counts)})`);
      return `found ${Object.entries(counts)
        .map(([h, c]) => `${JSON.stringify(h)} (${c})`)
        .join(', ')}`;
    },
    60_000,
  );

  await check('Java: Tab accepts the body whole; the saved method has it', () => bodyAcceptCheck(wb, javaBodyFile, bodyRows), 60_000);

  await check(
    '"CodeRAG: Rebuild Repository Index" shows a progress notification that finishes',
    async () => {
      const before = (await wb.toasts()).length;
      await wb.runCommand('CodeRAG: Rebuild Repository Index');
      const progressToast = page.locator('.notifications-toasts .notification-toast', { hasText: /Rebuilding repository index/i }).first();
      // Let the toast finish sliding in (it may already be done: the recorder saw it either way).
      if (
        await progressToast.waitFor({ timeout: 15_000 }).then(
          () => true,
          () => false,
        )
      )
        await sleep(300);
      await wb.shot('rebuild-index-progress');
      const done = page.locator('.notifications-toasts .notification-toast', { hasText: /index rebuilt/i }).first();
      await done.waitFor({ timeout: 60_000 });
      await wb.shot('rebuild-index-done');
      const toasts = (await wb.toasts()).slice(before);
      if (!toasts.some((t) => /Rebuilding repository index/i.test(t.message)))
        throw new Error(`no progress notification was seen (toasts: ${toasts.map((t) => t.message).join(' | ')})`);
      const finished = toasts.find((t) => /index rebuilt/i.test(t.message));
      await page.keyboard.press('Escape');
      return `progress shown, then ${JSON.stringify(finished?.message)}`;
    },
    90_000,
  );

  await check(
    'clicking the status-bar item switches the reranker (LLM <-> distilled) and the status text shows it',
    async () => {
      await wb.waitForStatus((s) => /codicon-check/.test(s.icon), 30_000, 'ready before toggling');
      const first = (await wb.currentStatus()).text;
      await wb.statusItem().click();
      const second = await wb.waitForStatus((s) => s.text !== first && /llm|distilled/i.test(s.text), 20_000, 'after the first click');
      await wb.shot('reranker-toggled-1');
      await wb.statusItem().click();
      const third = await wb.waitForStatus(
        (s) => s.text !== second.text && /llm|distilled/i.test(s.text),
        20_000,
        'after the second click',
      );
      await wb.shot('reranker-toggled-2');
      const name = (t) => (/llm/i.test(t) ? 'llm' : /distilled/i.test(t) ? 'distilled' : '?');
      if (name(second.text) === name(first) || name(third.text) !== name(first))
        throw new Error(`status went ${first} -> ${second.text} -> ${third.text}`);
      return `status: ${first} -> ${second.text} -> ${third.text}`;
    },
    60_000,
  );

  await check(
    'stopping the model server shows a clear "model unreachable" status without error pop-up storms; restarting it recovers',
    async () => {
      await env.model.command('down');
      const toastsBefore = (await wb.toasts()).length;
      await wb.openFile('pyshop/app/main.py');
      // Several completion attempts while the server is down: one status change, no pile of error toasts.
      for (const [i, typed] of ['receipt = service.', 'receipt = service.check', 'receipt = service.checkout('].entries()) {
        await retypeLine(wb, 20, typed);
        if (i === 0)
          await wb
            .waitForStatus(
              (s) => /codicon-warning|unreachable|model/i.test(`${s.icon} ${s.text}`) && !/codicon-check/.test(s.icon),
              30_000,
              'model problem after stopping the server',
            )
            .catch(() => undefined);
        await sleep(1500);
      }
      const down = await wb.waitForStatus(
        (s) => !/codicon-check/.test(s.icon) && /warning|error|unreachable|model/i.test(`${s.icon} ${s.text}`),
        20_000,
        'model problem state',
      );
      const tooltip = await wb.statusTooltip();
      await wb.shot('model-unreachable');
      const toasts = (await wb.toasts()).slice(toastsBefore).filter((t) => t.severity !== 'info');
      const problems = [];
      if (toasts.length > 1)
        problems.push(`${toasts.length} warning/error pop-ups while down: ${toasts.map((t) => t.message).join(' | ')}`);
      if (!/unreachable|not reachable|refused|cannot reach|can't reach/i.test(`${down.text} ${tooltip}`))
        problems.push(
          `neither the status text ${JSON.stringify(down.text)} nor its tooltip ${JSON.stringify(tooltip.slice(0, 200))} says the model is unreachable`,
        );
      await page.mouse.move(10, 10);
      await env.model.command('up');
      await retypeLine(wb, PY_LINE, PY_TYPED);
      const ghost = sane(await wb.waitForGhostText(40_000), 'pyshop/app/main.py', PY_TYPED);
      const recovered = await wb.waitForStatus((s) => /codicon-check/.test(s.icon), 30_000, 'recovery after restarting the server');
      await wb.shot('model-recovered');
      if (!ghost.trim()) problems.push('no ghost text after the server came back');
      if (problems.length > 0) throw new Error(problems.join('; '));
      await page.keyboard.press('Escape');
      return `down: ${JSON.stringify(down.text)} (tooltip: ${JSON.stringify(tooltip.slice(0, 120))}); pop-ups while down: ${toasts.length}; after restart: ${JSON.stringify(recovered.text)} with ghost text`;
    },
    120_000,
  );
}

/** The extension-host mocha suite (test/e2e/suite) in code-server, through the extensionTestsPath payload. */
async function hostChecks(context, env) {
  const extDir = readdirSync(env.extensions).find((d) => d.startsWith(`${EXTENSION_ID}-`));
  if (!extDir) {
    record('extension-host suite', 'failed', `the installed extension is not in ${env.extensions}`);
    return;
  }
  const devPath = join(env.extensions, extDir);
  const resultsFile = join(env.suite, 'results.json');
  rmSync(resultsFile, { force: true });
  const remote = (p) => `vscode-remote://${new URL(env.url).host}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(devPath)],
    ['extensionTestsPath', remote(join(env.suite, 'index.js'))],
  ];
  const page = await context.newPage();
  let exitCode;
  const exited = new Promise((resolve) => {
    page
      .exposeFunction('codeAutomationExit', (code) => {
        exitCode = code;
        resolve(code);
      })
      .catch((e) => log(`exposeFunction failed: ${e.message}`));
  });
  const t = Date.now();
  await page.goto(
    `${env.url}/?folder=${encodeURIComponent(join(env.ws, 'pyshop'))}&payload=${encodeURIComponent(JSON.stringify(payload))}`,
    { waitUntil: 'domcontentloaded' },
  );
  try {
    await withTimeout(exited, 150_000, 'extension-host suite');
    log(`extension-host suite exited with code ${exitCode}`);
  } catch (e) {
    record('extension-host suite', 'failed', e.message, Date.now() - t);
  }
  const file = join(artifacts, `${String(screenshots.length + 1).padStart(2, '0')}-extension-host-suite.png`);
  await page.screenshot({ path: file }).catch(() => undefined);
  screenshots.push(relative(root, file));
  await page.close().catch(() => undefined);
  if (!existsSync(resultsFile)) {
    if (exitCode !== undefined) record('extension-host suite', 'failed', `exit code ${exitCode} and no results file (${resultsFile})`);
    return;
  }
  const outcome = JSON.parse(readFileSync(resultsFile, 'utf8'));
  for (const r of outcome.tests)
    record(
      `host: ${r.title}`,
      r.state === 'passed' ? 'passed' : r.state === 'pending' ? 'skipped' : 'failed',
      r.error ?? '',
      r.duration ?? 0,
    );
  if (exitCode !== undefined && exitCode !== 0 && outcome.tests.every((r) => r.state !== 'failed'))
    record('extension-host suite exit', 'failed', `exit code ${exitCode}`);
}

// ---------------------------------------------------------------------------------------------
// A new user following only the README

/** What README.md tells a new user to do to connect Ollama: the `ollama pull` commands and the settings block. */
function readmeOllamaSteps() {
  const text = readFileSync(join(root, 'README.md'), 'utf8');
  const start = text.indexOf('\n## Connect Ollama');
  if (start < 0) throw new Error('README.md has no "## Connect Ollama" section');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const blocks = [...section.matchAll(/```(\w*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], body: m[2] }));
  // The required steps come before "Optionally": the completion model's pull and its settings.
  const required = section.slice(0, section.indexOf('Optionally') < 0 ? undefined : section.indexOf('Optionally'));
  const pulls = [...required.matchAll(/^ollama pull (\S+)$/gm)].map((m) => m[1]);
  const settingsBlock = blocks.find((b) => b.lang === 'jsonc' && required.includes(b.body));
  if (pulls.length === 0 || !settingsBlock)
    throw new Error(`README's Ollama section lacks its pull command or its settings block (pulls: ${pulls.join(', ')})`);
  const settings = JSON.parse(settingsBlock.body.replace(/^\s*\/\/.*$/gm, ''));
  return { pulls, settings };
}

/**
 * The README's steps on a fresh profile: install the VSIX with the editor's command line, pull the
 * model and apply the README's settings with the test server standing in for Ollama (the README
 * says to change the host when Ollama runs elsewhere), open a repository, type, get a suggestion.
 * Photographs the walkthrough and the settings page on the way.
 */
/** A browser page with the recorder, and its workbench driver for `ws`. */
async function workbenchPage(context, ws) {
  const page = await context.newPage();
  await page.addInitScript(recorderScript);
  return { page, wb: new Workbench(page, ws) };
}

/** The fresh code-server at `url` opened on pyshop, its app/main.py in the editor, once CodeRAG's status item shows. */
async function openMainPy(page, wb, url, ws) {
  await page.goto(`${url}/?folder=${encodeURIComponent(join(ws, 'pyshop'))}`, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  await sleep(1500);
  await wb.openFile('pyshop/app/main.py');
  await wb.statusItem().waitFor({ timeout: 60_000 });
}

/**
 * A second code-server on a fresh profile with `settings` as its user settings and the VSIX installed with
 * `--install-extension` (as a user would), opened on a copy of pyshop; resolves once it answers.
 */
async function freshCodeServer(env, tmp, settings, logName, extraArgs = []) {
  const userData = join(tmp, 'user-data');
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(join(userData, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  const extensions = join(tmp, 'extensions');
  const ws = join(tmp, 'ws');
  cpSync(join(root, 'test', 'fixtures', 'pyshop'), join(ws, 'pyshop'), { recursive: true });
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions, '--config', env.config];
  // `code --install-extension FILE.vsix`, as code-server spells it.
  sh(process.execPath, [env.entry, ...common, '--install-extension', env.vsix], { env: env.processEnv });
  const port = await freePort();
  const child = startChild(
    process.execPath,
    [
      env.entry,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      ...extraArgs,
      ...common,
      join(ws, 'pyshop'),
    ],
    { env: env.processEnv, cwd: tmp },
    join(artifacts, logName),
  );
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, 30_000);
  return { child, url, ws, userData };
}

async function readmeChecks(context, env) {
  const name =
    'README: install the VSIX, connect "Ollama" with the README\'s pull command and settings, open the walkthrough and the settings page, get a suggestion';
  const tmp = mkdtempSync(join(env.tmp, 'readme-'));
  let model;
  let codeServer;
  await check(
    name,
    async () => {
      const steps = readmeOllamaSteps();
      // Ollama with nothing pulled yet; `ollama pull NAME` is POST /api/pull on it.
      model = await startModelServer([], 'readme-model-server.log');
      for (const pull of steps.pulls) {
        const r = await fetch(`${model.url}/api/pull`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: pull, stream: false }),
        });
        if (!r.ok) throw new Error(`ollama pull ${pull} against the test server: HTTP ${r.status}`);
      }
      const settings = { ...steps.settings, 'coderag.ollama.host': model.url };
      const started = await freshCodeServer(env, tmp, settings, 'readme-code-server.log');
      codeServer = started.child;
      const { url, ws } = started;
      const { page, wb } = await workbenchPage(context, ws);
      const previous = currentWorkbench;
      currentWorkbench = wb;
      try {
        await openMainPy(page, wb, url, ws);
        // The walkthrough, as a new user finds it in the Command Palette.
        // The picker lists walkthroughs once the workbench has read the extensions' contributions: on a
        // cold, loaded machine that took longer than 15 s once (CI), so the picker is opened
        // a second time before the check fails.
        for (let attempt = 1; ; attempt++) {
          await wb.quickInput('F1', '>Welcome: Open Walkthrough', 'Open Walkthrough');
          const input = page.locator('.quick-input-widget .quick-input-box input');
          await input.waitFor({ state: 'visible', timeout: 10_000 });
          await input.fill('CodeRAG');
          const listed = await page
            .locator('.quick-input-widget .monaco-list-row', { hasText: 'Get started with CodeRAG' })
            .first()
            .waitFor({ timeout: 15_000 })
            .then(
              () => true,
              (e) => (attempt >= 2 ? Promise.reject(e) : false),
            );
          if (listed) break;
          log('the walkthrough picker did not list CodeRAG within 15 s: opening it again');
          await page.keyboard.press('Escape');
          await sleep(3000);
        }
        await page.keyboard.press('Enter');
        const walkthrough = page.locator('.gettingStartedContainer, .getting-started-category').first();
        await walkthrough.waitFor({ timeout: 20_000 });
        await page.locator('text=Connect a model, or use the shipped one').first().waitFor({ timeout: 20_000 });
        // The step's page (markdown) renders in a webview beside the steps; give it time to paint.
        await page
          .locator('.gettingStartedContainer iframe, .getting-started-media iframe, .gettingStartedSlide .getting-started-media')
          .first()
          .waitFor({ timeout: 10_000 })
          .catch(() => undefined);
        await sleep(4000);
        const walkthroughShot = await wb.shot('readme-walkthrough');
        const walkthroughText = await page.evaluate(() => document.querySelector('.gettingStartedContainer')?.textContent ?? '');
        for (const step of [
          'Connect a model, or use the shipped one',
          'Open a repository and watch it index',
          'Accept a suggestion',
          'Explain a completion',
        ]) {
          if (!walkthroughText.includes(step)) throw new Error(`the walkthrough lacks the step "${step}" [${walkthroughShot}]`);
        }
        await page.keyboard.press('Control+W');
        // The settings page, filtered to the extension.
        await wb.runCommand('Preferences: Open Settings (UI)');
        // The search box is a small editor: click its visible frame (its textarea sits off-screen), then type.
        const search = page.locator('.settings-editor .settings-header .suggest-input-container').first();
        await search.waitFor({ state: 'visible', timeout: 20_000 });
        await sleep(500);
        await search.click({ timeout: 5_000 }).catch(() => undefined);
        // Ctrl+F is the settings editor's own "focus the search" key, whatever the click did.
        await page.keyboard.press('Control+F');
        await page.keyboard.press('Control+A');
        await page.keyboard.type('@ext:coderag.coderag-vscode', { delay: 10 });
        await page
          .locator('.settings-editor .setting-item-contents', { hasText: /Provider/ })
          .first()
          .waitFor({ timeout: 20_000 });
        await sleep(1200);
        const settingsShot = await wb.shot('readme-settings');
        const shown = await page.evaluate(() =>
          [...document.querySelectorAll('.settings-editor .setting-item-contents .setting-item-label')].map((e) =>
            (e.textContent ?? '').trim(),
          ),
        );
        if (!shown.some((t) => /Provider/.test(t)) || !shown.some((t) => /Completion Model/.test(t)))
          throw new Error(`the settings page does not show the model settings: ${JSON.stringify(shown)} [${settingsShot}]`);
        await page.keyboard.press('Control+W');
        // The status bar settles on the model the README connected; then a suggestion.
        await wb.openFile('pyshop/app/main.py');
        const ready = await wb.waitForStatus((s) => /codicon-check/.test(s.icon), 120_000, "ready with the README's Ollama settings");
        await retypeLine(wb, PY_LINE, PY_TYPED);
        // Default settings: the editor's own word suggestions may open; Escape closes them, the ghost text is asked again.
        await page.keyboard.press('Escape');
        const ghost = await wb.waitForGhostText(60_000);
        const ghostShot = await wb.shot('readme-ghost-text');
        sane(ghost, 'pyshop/app/main.py', PY_TYPED);
        if (!ghost.trim())
          throw new Error(
            `no ghost text after typing \`${PY_TYPED}\` with the README's settings (status: ${(await wb.currentStatus())?.text}) [${ghostShot}]`,
          );
        const stats = await model.command('stats');
        const generated = stats.paths.filter((p) => p === '/api/generate').length;
        if (generated === 0)
          throw new Error(`the suggestion did not come from the "Ollama" server (its requests: ${[...new Set(stats.paths)].join(', ')})`);
        return `pulled ${steps.pulls.join(', ')}; settings ${Object.keys(steps.settings).join(', ')}; status ${JSON.stringify(ready.text)}; ghost text ${JSON.stringify(ghost.slice(0, 60))}; ${generated} /api/generate request(s); screenshots ${walkthroughShot}, ${settingsShot}, ${ghostShot}`;
      } finally {
        currentWorkbench = previous;
        await page.close().catch(() => undefined);
      }
    },
    300_000,
  );
  await model?.command('close').catch(() => undefined);
  if (codeServer && codeServer.exitCode === null) codeServer.kill('SIGTERM');
}

// ---------------------------------------------------------------------------------------------
// A fresh VS Code with no model server: the local model downloaded with the command

/** The shipped LM exported to GGUF (bench/engine/prepare.ts makes it once into bench/engine/.cache). */
function shippedGguf() {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'engine', 'prepare.ts')], { cwd: root, encoding: 'utf8' });
  const path = /engine ready: (\S+\.gguf)/.exec(`${r.stdout}\n${r.stderr}`)?.[1];
  if (r.status !== 0 || !path || !existsSync(path))
    throw new Error(`bench/engine/prepare.ts made no GGUF (${r.status}): ${`${r.stdout}\n${r.stderr}`.trim().slice(-600)}`);
  return path;
}

/** A model host on 127.0.0.1 serving one file as a CDN does (content-length, byte ranges); `requests` lists what it was asked. */
async function startGgufServer(path) {
  const body = readFileSync(path);
  const fileName = path.split('/').pop();
  const requests = [];
  const server = createHttpServer((req, res) => {
    requests.push(`${req.method} ${req.url}${req.headers.range ? ` (${req.headers.range})` : ''}`);
    if (req.url?.split('?')[0] !== `/models/${fileName}`) {
      res.writeHead(404).end();
      return;
    }
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    if (from >= body.length && from > 0) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
      return;
    }
    const rest = body.subarray(from);
    if (from > 0) res.writeHead(206, { 'content-length': rest.length, 'content-range': `bytes ${from}-${body.length - 1}/${body.length}` });
    else res.writeHead(200, { 'content-length': body.length, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : rest);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/models/${fileName}`,
    fileName,
    bytes: body.length,
    sha256: createHash('sha256').update(body).digest('hex'),
    requests,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** The extension's output channel as VS Code wrote it under the profile's logs ('' until it exists). */
function outputChannelText(userData) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/CodeRAG\.log$/.test(entry.name)) files.push(path);
    }
  };
  if (existsSync(join(userData, 'logs'))) walk(join(userData, 'logs'));
  return files.map((f) => readFileSync(f, 'utf8')).join('\n');
}

async function waitForLog(userData, pattern, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const text = outputChannelText(userData);
    const match = pattern.exec(text);
    if (match) return match[0];
    if (Date.now() > deadline) {
      const tail = text.split('\n').slice(-12).join(' | ');
      throw new Error(
        `${what}: the output channel has no ${pattern} after ${ms / 1000} s (its last lines: ${tail.slice(-1500) || 'none'})`,
      );
    }
    await sleep(500);
  }
}

/**
 * A fresh profile with the VSIX and no model server (Ollama's host a closed port, provider `auto`):
 * "CodeRAG: Download a Local Completion Model" from the Command Palette, the modal accepted, the
 * download's progress; then the status bar says llama.cpp and a suggestion comes from the GGUF run
 * in the language server (its log line, and the trace's model).
 */
async function localChecks(context, env) {
  const name =
    'local: a fresh VS Code with no model server downloads the local model with the command (modal, progress), the status says llama.cpp, a suggestion comes from it';
  const tmp = mkdtempSync(join(env.tmp, 'local-'));
  let files;
  let codeServer;
  await check(
    name,
    async () => {
      files = await startGgufServer(shippedGguf());
      const settings = {
        ...EDITOR_SETTINGS,
        // No server answers there: `auto` falls back, then picks the downloaded model.
        'coderag.ollama.host': `http://127.0.0.1:${await freePort()}`,
        'coderag.local.downloadUrl': files.url,
        'coderag.local.downloadSha256': files.sha256,
        'coderag.local.threads': 1,
      };
      const started = await freshCodeServer(env, tmp, settings, 'local-code-server.log', ['--disable-getting-started-override']);
      codeServer = started.child;
      const { url, ws, userData } = started;
      const { page, wb } = await workbenchPage(context, ws);
      const previous = currentWorkbench;
      currentWorkbench = wb;
      try {
        await openMainPy(page, wb, url, ws);
        // Before the download: no server answered, so the shipped model (the status says so).
        const before = await wb.waitForStatus((s) => /shipped model/.test(s.text), 90_000, 'the shipped model before the download');
        await wb.shot('local-before-download');

        await wb.runCommand('CodeRAG: Download a Local Completion Model');
        const dialog = page.locator('.monaco-dialog-box').first();
        await dialog.waitFor({ state: 'visible', timeout: 20_000 });
        await sleep(300);
        const question = (await dialog.locator('.dialog-message-text, .dialog-message-detail').allTextContents())
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim();
        const questionShot = await wb.shot('local-download-question');
        const host = new URL(files.url).host;
        // The size as src/client/downloadQuestion.ts words it (`14 MB`).
        const size = files.bytes >= 1e7 ? `${Math.round(files.bytes / 1e6)} MB` : `${(files.bytes / 1e6).toFixed(1)} MB`;
        for (const words of [host, files.fileName, size])
          if (!question.includes(words))
            throw new Error(`the consent question does not name ${words}: ${JSON.stringify(question)} [${questionShot}]`);
        await dialog
          .locator('.monaco-button', { hasText: /^Download$/ })
          .first()
          .click();
        // The progress notification, then the verified message (the recorder sees both, however fast).
        const done = page.locator('.notifications-toasts .notification-toast', { hasText: /downloaded and verified/i }).first();
        await done.waitFor({ timeout: 120_000 });
        await wb.shot('local-download-done');
        const toasts = await wb.toasts();
        const progressToast = toasts.find((t) => /downloading/i.test(t.message));
        if (!progressToast)
          throw new Error(`no download progress notification was seen (toasts: ${toasts.map((t) => t.message).join(' | ')})`);
        const failed = toasts.find((t) => t.severity === 'error');
        if (failed) throw new Error(`an error notification: ${failed.message}`);
        const gets = files.requests.filter((r) => r.startsWith('GET '));
        if (gets.length === 0) throw new Error(`the file server was never asked for the file (requests: ${files.requests.join(', ')})`);
        await page.keyboard.press('Escape');

        // The model side chose again: llama.cpp in the status text and its tooltip.
        const local = await wb.waitForStatus(
          (s) => /llama\.cpp/.test(s.text) && /codicon-check/.test(s.icon),
          60_000,
          'llama.cpp after the download',
        );
        const tooltip = await wb.statusTooltip();
        const aria =
          (await wb
            .statusItem()
            .locator('a')
            .first()
            .getAttribute('aria-label')
            .catch(() => null)) ?? '';
        await wb.shot('local-status-llama-cpp');
        await page.mouse.move(10, 10);
        const stem = files.fileName.replace(/\.gguf$/, '');
        // Loaded on first use: until then the tooltip names the file and llama.cpp, not yet the device.
        if (!tooltip.includes(`Model: ${stem}, run by llama.cpp in the language server`))
          throw new Error(`the status tooltip does not say the GGUF runs in llama.cpp: ${JSON.stringify(tooltip.slice(0, 400))}`);

        // A suggestion from the local model.
        await retypeLine(wb, LOCAL_PY_LINE, LOCAL_PY_TYPED);
        const ghost = await wb.waitForGhostText(90_000, 15_000);
        const ghostShot = await wb.shot('local-ghost-text');
        if (!ghost.trim())
          throw new Error(
            `no ghost text after typing \`${LOCAL_PY_TYPED}\` with the local model (status: ${(await wb.currentStatus())?.text}) [${ghostShot}]`,
          );
        sane(ghost, 'pyshop/app/main.py', LOCAL_PY_TYPED);
        const loaded = await waitForLog(
          userData,
          new RegExp(`loaded ${files.fileName.replace(/\./g, '\\.')} .*into llama\\.cpp in the language server[^\\n]*`),
          30_000,
          'the local model loaded',
        );

        // Loaded: the tooltip says where it runs (1 thread, as set) and what the file lacks.
        await page.keyboard.press('Escape');
        const loadedTooltip = await wb.statusTooltip();
        await wb.shot('local-status-loaded');
        await page.mouse.move(10, 10);
        // The shipped LM's GGUF has no fill-in-the-middle tokens: the tooltip says what that means.
        if (!/run by llama\.cpp in the language server \(CPU, 1 thread\) \(ok\): \S+ has no fill-in-the-middle tokens/.test(loadedTooltip))
          throw new Error(
            `after a completion the status tooltip does not say llama.cpp on 1 CPU thread and the file's missing FIM tokens: ${JSON.stringify(loadedTooltip.slice(0, 400))}`,
          );

        // The trace names the backend and the GGUF's model.
        await wb.runCommand('CodeRAG: Explain Last Completion');
        await page
          .locator('.editor-group-container.active .tabs-container .tab.active', { hasText: /trace/i })
          .first()
          .waitFor({ timeout: 20_000 });
        await sleep(800);
        await wb.goToLine(1);
        const modelLine = `local \`${stem}`;
        const count = await wb.findCount(modelLine);
        const traceShot = await wb.shot('local-explain');
        await page.keyboard.press('Escape');
        if (!/\d+ of \d+/.test(count))
          throw new Error(
            `the trace does not say the model was ${JSON.stringify(modelLine + '`')} (find: ${JSON.stringify(count)}) [${traceShot}]`,
          );
        return (
          `before: ${JSON.stringify(before.text)}; question ${JSON.stringify(question.slice(0, 110))}; ` +
          `${gets.length} GET(s) of ${files.fileName} (${(files.bytes / 1e6).toFixed(1)} MB); status ${JSON.stringify(local.text)} ` +
          `(aria ${JSON.stringify(aria.slice(0, 60))}); loaded tooltip ${JSON.stringify(/Model: [^\n]*?\(ok\)/.exec(loadedTooltip)?.[0] ?? '')}; log ${JSON.stringify(loaded.slice(0, 140))}; ghost text ${JSON.stringify(ghost.slice(0, 60))}; ` +
          `trace: ${modelLine}\` (${count})`
        );
      } finally {
        currentWorkbench = previous;
        await page.close().catch(() => undefined);
        const logs = join(userData, 'logs');
        if (existsSync(logs)) cpSync(logs, join(artifacts, 'local-vscode-logs'), { recursive: true });
      }
    },
    420_000,
  );
  await files?.close().catch(() => undefined);
  if (codeServer && codeServer.exitCode === null) codeServer.kill('SIGTERM');
}

// ---------------------------------------------------------------------------------------------

async function main() {
  rmSync(artifacts, { recursive: true, force: true });
  mkdirSync(artifacts, { recursive: true });
  mkdirSync(cacheDir, { recursive: true });
  let env;
  let codeServer;
  let model;
  const tmp = mkdtempSync(join(tmpdir(), 'coderag-e2e-'));
  try {
    ensureSystemPackages();
    const entry = ensureCodeServer();
    const vsix = ensureVsix();
    const suite = await buildSuite();
    model = await startModelServer();
    log(`model server (embedded model) at ${model.url}`);
    const ws = setUpWorkspace(tmp, model.url);
    const home = join(tmp, 'home');
    mkdirSync(home, { recursive: true });
    const processEnv = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_CACHE_HOME: join(home, '.cache'),
      TMPDIR: join(tmp),
    };
    const config = join(tmp, 'code-server.yaml');
    writeFileSync(config, 'auth: none\ncert: false\n');
    const common = ['--user-data-dir', ws.userData, '--extensions-dir', ws.extensions, '--config', config];
    const t = Date.now();
    sh(process.execPath, [entry, ...common, '--install-extension', vsix], { env: processEnv });
    log(
      `installed ${relative(root, vsix)} (${(statSync(vsix).size / 1048576).toFixed(1)} MiB) in ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    const port = await freePort();
    codeServer = startChild(
      process.execPath,
      [
        entry,
        '--bind-addr',
        `127.0.0.1:${port}`,
        '--auth',
        'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        ...common,
        ws.ws,
      ],
      { env: processEnv, cwd: tmp },
      join(artifacts, 'code-server.log'),
    );
    const url = `http://127.0.0.1:${port}`;
    await waitForHealth(url, 30_000);
    log(`code-server ${CODE_SERVER_VERSION} at ${url}`);
    env = { ...ws, url, model, suite, entry, vsix, config, processEnv, tmp };
  } catch (e) {
    record('setup (system packages, code-server, VSIX, model server)', 'failed', e instanceof Error ? e.message : String(e));
  }

  if (env) {
    const { chromium } = await import('playwright-core');
    const context = await chromium.launchPersistentContext(join(tmp, 'chromium'), {
      executablePath: CHROMIUM,
      headless: !args.headed,
      viewport: { width: 1440, height: 900 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
    try {
      if (args.only === undefined || args.only === 'ui') {
        const page = context.pages()[0] ?? (await context.newPage());
        await page.addInitScript(recorderScript);
        const wb = new Workbench(page, env.ws);
        currentWorkbench = wb;
        try {
          await uiChecks(wb, env);
        } catch (e) {
          record('UI checks', 'failed', e.message);
        }
        await page.close().catch(() => undefined);
      }
      if (args.only === undefined || args.only === 'host') await hostChecks(context, env);
      if (args.only === undefined || args.only === 'readme') await readmeChecks(context, env);
      if (args.only === undefined || args.only === 'local') await localChecks(context, env);
    } finally {
      await context.close().catch(() => undefined);
    }
    // The extension's own logs (server log included) beside the screenshots.
    const logs = join(env.userData, 'logs');
    if (existsSync(logs)) cpSync(logs, join(artifacts, 'vscode-logs'), { recursive: true });
  }

  await model?.command('close').catch(() => undefined);
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  await sleep(300);
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (!args.keep) rmSync(tmp, { recursive: true, force: true });
  else log(`kept ${tmp}`);

  console.log('\nScreenshots:');
  for (const s of screenshots) console.log(`  ${s}`);
  const passed = results.filter((r) => r.status === 'passed').length;
  const failed = results.filter((r) => r.status === 'failed').length;
  const skipped = results.filter((r) => r.status === 'skipped').length;
  console.log(`\ne2e took ${elapsed()}`);
  console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  console.log('0 passed, 1 failed');
  process.exit(1);
});

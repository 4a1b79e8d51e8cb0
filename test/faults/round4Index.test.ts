// The indexer under a hostile tester: what git ignores (the global excludes file above all) stays
// out of the index and the prompts, with git and without it; and the index follows the files
// (folders renamed, workspace folders removed or deleted, every indexed extension watched,
// events through symlink loops), observed through the real language server, the CLI and the status.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, matchesGlob } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SOURCE_EXTENSIONS } from '../../src/engine/kb/parsers';
import { indexFolderFor, loadIndex } from '../../src/engine/kb/store';
import type { StatusParams } from '../../src/protocol/protocol';
import { tempDir } from '../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../helpers/ollamaServer';
import { startLsp, type LspSession } from '../server/lspHarness';
import { coderag, makeUnreadable, writeTree, type IndexJson } from './helpers';
import { startIndexer } from './indexerHelpers';

const MODEL = 'coderag-lm:test';

/** A user's git setup that is the test's own: HOME, XDG_CONFIG_HOME and the global config under `dir`, no system config. */
function gitHome(dir: string, globalConfig = ''): Record<string, string> {
  const home = join(dir, 'home');
  mkdirSync(join(home, '.config'), { recursive: true });
  writeFileSync(join(home, 'gitconfig'), globalConfig);
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    GIT_CONFIG_GLOBAL: join(home, 'gitconfig'),
    GIT_CONFIG_NOSYSTEM: '1',
  };
}

/** The same environment with no git to be found on PATH. */
function withoutGit(env: Record<string, string>, dir: string): Record<string, string> {
  const bin = join(dir, 'no-git-bin');
  mkdirSync(bin, { recursive: true });
  return { ...env, PATH: bin };
}

function git(env: Record<string, string>, cwd: string, ...args: string[]): void {
  const r = spawnSync('git', args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
}

function hasItem(repo: string, cache: string, name: string, env: Record<string, string>): boolean {
  const r = coderag(['kb', repo, '--name', name, '--index-dir', cache], env);
  assert.ok(r.code === 0 || /no knowledge-base item named/.test(r.stderr), r.stderr);
  return r.code === 0;
}

function indexJson(repo: string, cache: string, env: Record<string, string>): IndexJson {
  const r = coderag(['index', repo, '--json', '--index-dir', cache], env);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as IndexJson;
}

const LINE_MODE = (server: OllamaTestServer): unknown => ({
  debounceMs: 0,
  model: { provider: 'ollama', family: 'plain', timeoutMs: 5000 },
  ollama: { host: server.url, completionModel: MODEL },
  rerank: { kind: 'none' },
  experimental: { model: { maxNewTokens: 16 }, query: { strategy: 'last10' } },
});

/** Everything the model server has received, as one string. */
function sent(server: OllamaTestServer): string {
  return JSON.stringify(server.requests.map((q) => q.body));
}

function allReady(s: StatusParams): boolean {
  return s.folders.length > 0 && s.folders.every((f) => f.state === 'ready');
}

/** Complete at the end of line `line` of `file` (opened first). */
async function completeAt(lsp: LspSession, file: string, text: string, line: number): Promise<void> {
  const uri = lsp.open(file, 'python', text);
  await lsp.complete(uri, line, (text.split('\n')[line] ?? '').length);
}

void describe('item 3: nothing git ignores is indexed', () => {
  const APP = 'from notes_private import private_rate_limit\n\n\ndef main():\n    value = private_rate_limit()\n    return value\n';
  const IGNORED = {
    'notes_private.py': 'def private_rate_limit():\n    return "PRIVATE-NOTES-4412"\n',
    'drafts/scratch.py': 'def private_rate_limit_draft():\n    return "DRAFT-SCRATCH-9031"\n',
  };

  void test('server: files ignored by the global excludes file (core.excludesFile of the global config) are not indexed and never reach the model', async () => {
    const dir = tempDir();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    try {
      const env = gitHome(dir.path, '[core]\n\texcludesFile = ~/.gitignore_global\n');
      writeFileSync(join(env.HOME!, '.gitignore_global'), '# mine, never shared\nnotes_private.py\ndrafts/\n');
      const repo = join(dir.path, 'repo');
      writeTree(repo, { 'app.py': APP, ...IGNORED });
      git(env, repo, 'init', '-q');
      const check = spawnSync('git', ['check-ignore', 'notes_private.py', 'drafts/scratch.py'], {
        cwd: repo,
        env: { ...process.env, ...env },
        encoding: 'utf8',
      });
      assert.equal(check.stdout, 'notes_private.py\ndrafts/scratch.py\n', 'git itself ignores both');
      const lsp = await startLsp(repo, LINE_MODE(server), { env });
      try {
        const ready = await lsp.waitForStatus(allReady);
        assert.equal(ready.folders[0]?.files, 1, 'app.py alone');
        await completeAt(lsp, join(repo, 'app.py'), APP, 4);
        assert.ok(server.requests.length > 0, 'the model was asked');
        assert.doesNotMatch(
          (await lsp.explain())?.markdown ?? '',
          /notes_private\.py#|drafts\/scratch\.py#/,
          'nothing retrieved from the ignored files',
        );
        const body = sent(server);
        for (const marker of ['PRIVATE-NOTES-4412', 'DRAFT-SCRATCH-9031', 'notes_private.py', 'drafts/scratch.py'])
          assert.ok(!body.includes(marker), `sent to the model: ${marker}`);
      } finally {
        await lsp.close();
      }
    } finally {
      await server.close();
      dir.cleanup();
    }
  });

  void test("coderag index leaves out what the XDG default ignore file and the repository's own core.excludesFile ignore, with git and with no git on PATH", () => {
    const dir = tempDir();
    try {
      const env = gitHome(dir.path);
      mkdirSync(join(env.XDG_CONFIG_HOME!, 'git'), { recursive: true });
      writeFileSync(join(env.XDG_CONFIG_HOME!, 'git', 'ignore'), 'notes_private.py\n');
      // A repository whose own config names another excludes file (the XDG default does not apply there).
      const xdgRepo = join(dir.path, 'xdg-repo');
      writeTree(xdgRepo, { 'app.py': APP, ...IGNORED });
      git(env, xdgRepo, 'init', '-q');
      const localRepo = join(dir.path, 'local-repo');
      writeTree(localRepo, { 'app.py': APP, ...IGNORED, 'team.ignore': 'drafts/\n' });
      git(env, localRepo, 'init', '-q');
      git(env, localRepo, 'config', 'core.excludesFile', 'team.ignore');
      for (const [label, e] of [
        ['git', env],
        ['no git', withoutGit(env, dir.path)],
      ] as const) {
        const cache = join(dir.path, `cache-${label}`);
        assert.equal(indexJson(xdgRepo, cache, e).files, 2, `${label}: app.py and drafts/scratch.py`);
        assert.equal(hasItem(xdgRepo, cache, 'private_rate_limit', e), false, `${label}: notes_private.py is ignored`);
        assert.equal(hasItem(xdgRepo, cache, 'private_rate_limit_draft', e), true, `${label}: drafts/ is not ignored there`);
        assert.equal(indexJson(localRepo, cache, e).files, 2, `${label}: app.py and notes_private.py`);
        assert.equal(hasItem(localRepo, cache, 'private_rate_limit_draft', e), false, `${label}: drafts/ is ignored by team.ignore`);
        assert.equal(hasItem(localRepo, cache, 'private_rate_limit', e), true, `${label}: the XDG default is not read there`);
      }
    } finally {
      dir.cleanup();
    }
  });

  void test("coderag index takes git's own answer: an excludes file named through a config [include], a .gitignore above the opened folder", () => {
    const dir = tempDir();
    try {
      const env = gitHome(dir.path, '[include]\n\tpath = ~/more.gitconfig\n');
      writeFileSync(join(env.HOME!, 'more.gitconfig'), '[core]\n\texcludesFile = ~/included.ignore\n');
      writeFileSync(join(env.HOME!, 'included.ignore'), 'notes_private.py\n');
      const top = join(dir.path, 'mono');
      writeTree(top, {
        '.gitignore': 'drafts/\n',
        'service/app.py': APP,
        ...Object.fromEntries(Object.entries(IGNORED).map(([p, t]) => [`service/${p}`, t])),
      });
      git(env, top, 'init', '-q');
      const service = join(top, 'service');
      const cache = join(dir.path, 'cache');
      assert.equal(indexJson(service, cache, env).files, 1, 'app.py alone');
      assert.equal(hasItem(service, cache, 'private_rate_limit', env), false);
      assert.equal(hasItem(service, cache, 'private_rate_limit_draft', env), false);
    } finally {
      dir.cleanup();
    }
  });

  void test('an unreadable global excludes file hides the whole folder (fail closed), with git and without', () => {
    const dir = tempDir();
    try {
      const env = gitHome(dir.path, '[core]\n\texcludesFile = ~/.gitignore_global\n');
      writeFileSync(join(env.HOME!, '.gitignore_global'), 'notes_private.py\ndrafts/\n');
      makeUnreadable(join(env.HOME!, '.gitignore_global'));
      const repo = join(dir.path, 'repo');
      writeTree(repo, { 'app.py': APP, ...IGNORED });
      for (const [label, e] of [
        ['git', env],
        ['no git', withoutGit(env, dir.path)],
      ] as const) {
        const report = indexJson(repo, join(dir.path, `cache-${label}`), e);
        assert.equal(report.files, 0, label);
        assert.equal(report.skipped[0]?.reason, 'unreadableGitignore', label);
      }
    } finally {
      dir.cleanup();
    }
  });
});

void describe('item 4: the index follows the files', () => {
  const BILLING = 'def compute_invoice_total(items):\n    return sum(i.price for i in items)  # BILLING-MARKER\n';
  const APP =
    'from pkg.billing import compute_invoice_total\n\n\ndef main(items):\n    total = compute_invoice_total(items)\n    return total\n';

  void test('server: a package folder renamed (events for the two folders) leaves no old path in the saved index or the prompt, and the new one is indexed', async () => {
    const dir = tempDir();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    try {
      const repo = join(dir.path, 'repo');
      writeTree(repo, { 'app.py': APP, 'pkg/__init__.py': '', 'pkg/billing.py': BILLING });
      const cache = join(dir.path, 'cache');
      const env = gitHome(dir.path);
      const lsp = await startLsp(repo, LINE_MODE(server), { cacheDir: cache, env });
      try {
        assert.equal((await lsp.waitForStatus(allReady)).folders[0]?.files, 3);
        renameSync(join(repo, 'pkg'), join(repo, 'invoices'));
        // What an editor sends for a moved folder: the folder's deletion and creation, not its files'.
        lsp.fileEvent(join(repo, 'pkg'), 3);
        await lsp.waitForStatus((s) => s.folders[0]?.files === 1, 20_000);
        lsp.fileEvent(join(repo, 'invoices'), 1);
        await lsp.waitForStatus((s) => s.folders[0]?.files === 3, 20_000);
        // The user's code follows the move.
        const moved = APP.replace('from pkg.billing', 'from invoices.billing');
        writeFileSync(join(repo, 'app.py'), moved);
        const uri = lsp.open(join(repo, 'app.py'), 'python', moved);
        // The retrieval paths catch up with a change a moment after it: ask again (a new text each time) until they have.
        let explained = '';
        for (let i = 0; i < 50 && !explained.includes('invoices/billing.py#'); i++) {
          if (i > 0) await new Promise((r) => setTimeout(r, 200));
          lsp.change(uri, `${moved}# try ${i}\n`, 2 + i);
          await lsp.complete(uri, 4, (moved.split('\n')[4] ?? '').length);
          explained = (await lsp.explain())?.markdown ?? '';
        }
        assert.ok(explained.includes('invoices/billing.py#function:compute_invoice_total'), 'retrieved under its new path');
        assert.ok(!explained.includes('pkg/billing.py'), 'the old path is not retrieved');
        assert.ok(server.requests.length > 0 && !sent(server).includes('pkg/billing.py'), 'nor sent to the model');
      } finally {
        await lsp.close();
      }
      const saved = await loadIndex(indexFolderFor(cache, repo));
      assert.equal(saved.status, 'ok');
      if (saved.status === 'ok')
        assert.deepEqual(Object.keys(saved.index.files).sort(), ['app.py', 'invoices/__init__.py', 'invoices/billing.py']);
    } finally {
      await server.close();
      dir.cleanup();
    }
  });

  void test('server: a workspace folder added and removed by one event, or removed right after it was added, is never indexed and never answers completions', async () => {
    const dir = tempDir();
    const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
    try {
      const main = join(dir.path, 'main');
      writeTree(main, { 'main.py': 'def main():\n    return 1\n' });
      const folder = (name: string): { uri: string; name: string } => {
        writeTree(join(dir.path, name), { 'app.py': APP, 'pkg/__init__.py': '', 'pkg/billing.py': BILLING });
        return { uri: pathToFileURL(join(dir.path, name)).toString(), name };
      };
      const once = folder('once');
      const twice = folder('twice');
      const lsp = await startLsp(main, LINE_MODE(server), { env: gitHome(dir.path) });
      try {
        await lsp.waitForStatus(allReady);
        const change = (added: unknown[], removed: unknown[]): Promise<void> =>
          lsp.connection.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added, removed } });
        await change([once], [once]);
        await change([twice], []);
        await change([], [twice]);
        // A rebuild runs after the indexing those events started.
        const rebuilt = await lsp.rebuild();
        assert.deepEqual(
          rebuilt.folders.map((f) => f.uri),
          [pathToFileURL(main).toString()],
        );
        const status = await lsp.status();
        assert.deepEqual(
          status.folders.map((f) => f.uri),
          [pathToFileURL(main).toString()],
          'only the folder still open',
        );
        for (const f of [once, twice]) {
          await completeAt(lsp, join(dir.path, f.name, 'app.py'), APP, 4);
          assert.doesNotMatch((await lsp.explain())?.markdown ?? '', /billing\.py#/, `${f.name}: nothing retrieved from its index`);
        }
        assert.ok(server.requests.length > 0, 'the model was asked');
        assert.ok(!sent(server).includes('BILLING-MARKER'), 'no removed folder answered with its other files');
      } finally {
        await lsp.close();
      }
    } finally {
      await server.close();
      dir.cleanup();
    }
  });

  void test('server: a workspace folder deleted while open says in the status that it does not exist, not "ready"', async () => {
    const dir = tempDir();
    try {
      const repo = join(dir.path, 'repo');
      writeTree(repo, { 'app.py': APP, 'pkg/billing.py': BILLING });
      const lsp = await startLsp(
        repo,
        { model: { provider: 'ollama' }, ollama: { host: 'http://127.0.0.1:9' } },
        { env: gitHome(dir.path) },
      );
      try {
        await lsp.waitForStatus(allReady);
        rmSync(repo, { recursive: true, force: true });
        lsp.fileEvent(repo, 3);
        const after = await lsp.waitForStatus((s) => s.folders[0]?.state === 'failed', 20_000);
        assert.match(after.folders[0]?.message ?? '', /does not exist/);
      } finally {
        await lsp.close();
      }
    } finally {
      dir.cleanup();
    }
  });

  void test('server: a workspace folder deleted while it is being indexed ends failed with the reason, not "ready"', async () => {
    const dir = tempDir();
    try {
      const repo = join(dir.path, 'repo');
      const files: Record<string, string> = {};
      for (let i = 0; i < 40; i++) files[`pkg/m${i}.py`] = `def f${i}():\n    return ${i}\n`;
      writeTree(repo, files);
      const s = await startIndexer(join(dir.path, 'cache'), {});
      try {
        // The folder goes at the first progress report of its indexing (the files are listed, none read).
        const update = s.status.update.bind(s.status);
        let deleted = false;
        s.status.update = (change, urgent) => {
          if (change.indexing && !deleted) {
            deleted = true;
            rmSync(repo, { recursive: true, force: true });
          }
          update(change, urgent);
        };
        const [summary] = await s.index([repo]);
        assert.ok(deleted, 'deleted mid-indexing');
        assert.equal(summary?.state, 'failed');
        assert.match(summary?.message ?? '', /does not exist/);
        assert.deepEqual(
          s.indexer.summaries().map((f) => [f.state, f.files]),
          [['failed', 0]],
        );
        assert.equal(s.indexer.folderFor(pathToFileURL(join(repo, 'pkg', 'm1.py')).toString()), undefined, 'nothing answers for it');
      } finally {
        await s.close();
      }
    } finally {
      dir.cleanup();
    }
  });

  void test('server: the file watcher covers creating, changing and deleting every indexed extension (.pyi too); a created .pyi is indexed', async () => {
    const dir = tempDir();
    try {
      const repo = join(dir.path, 'repo');
      writeTree(repo, { 'app.py': APP });
      const lsp = await startLsp(
        repo,
        { model: { provider: 'ollama' }, ollama: { host: 'http://127.0.0.1:9' } },
        { env: gitHome(dir.path) },
      );
      try {
        await lsp.waitForStatus(allReady);
        const watchers = lsp.registrations
          .filter((r) => r.method === 'workspace/didChangeWatchedFiles')
          .flatMap((r) => (r.registerOptions as { watchers: Array<{ globPattern: string; kind?: number }> }).watchers);
        assert.ok(watchers.length > 0, 'the server registered file watchers');
        /** The change kinds (1 create, 2 change, 4 delete) an editor reports for `path`, as VS Code matches globs. */
        const kinds = (path: string): number =>
          watchers.filter((w) => matchesGlob(path, w.globPattern)).reduce((k, w) => k | (w.kind ?? 7), 0);
        for (const ext of Object.keys(SOURCE_EXTENSIONS)) {
          assert.equal(kinds(`src/pkg/mod.${ext}`), 7, `.${ext}: created, changed and deleted`);
          assert.equal(kinds(`mod.${ext}`), 7, `.${ext} at the top`);
        }
        assert.ok(kinds('src/pkg') & 1 && kinds('src/pkg') & 4, 'a folder created or deleted');
        writeTree(repo, { 'stubs/billing.pyi': 'def compute_invoice_total(items: list) -> float: ...\n' });
        lsp.fileEvent(join(repo, 'stubs', 'billing.pyi'), 1);
        await lsp.waitForStatus((s) => s.folders[0]?.files === 2, 20_000);
      } finally {
        await lsp.close();
      }
    } finally {
      dir.cleanup();
    }
  });

  void test('server: watched events through symlink loops (a file, a folder) do not index the same files again', async () => {
    const dir = tempDir();
    try {
      const repo = join(dir.path, 'repo');
      writeTree(repo, { 'app.py': APP, 'pkg/billing.py': BILLING, 'pkg/tax.py': 'def tax_rate():\n    return 0.2\n' });
      symlinkSync('..', join(repo, 'pkg', 'up'));
      symlinkSync('pkg', join(repo, 'lib'));
      const lsp = await startLsp(
        repo,
        { model: { provider: 'ollama' }, ollama: { host: 'http://127.0.0.1:9' } },
        { env: gitHome(dir.path) },
      );
      try {
        const ready = (await lsp.waitForStatus(allReady)).folders[0]!;
        const files = ready.files ?? 0;
        // What a watcher that follows links reports: the same files under ever longer paths.
        for (const p of ['pkg/up/app.py', 'pkg/up/pkg/billing.py', 'pkg/up/pkg/up/pkg/tax.py', 'pkg/billing.py', 'lib/tax.py'])
          lsp.fileEvent(join(repo, p), 2);
        lsp.fileEvent(join(repo, 'pkg', 'up'), 1);
        lsp.fileEvent(join(repo, 'pkg', 'up', 'pkg'), 1);
        // A real new file after them: once it is in, the events before it were handled.
        writeTree(repo, { 'zz_last.py': 'def last_one():\n    return 1\n' });
        lsp.fileEvent(join(repo, 'zz_last.py'), 1);
        await lsp.waitForStatus((s) => (s.folders[0]?.files ?? 0) > files, 20_000);
        await new Promise((r) => setTimeout(r, 1000));
        const after = (await lsp.status()).folders[0]!;
        // A rebuild scans the folder afresh: what the index should hold.
        const fresh = (await lsp.rebuild()).folders[0]!;
        assert.equal(fresh.files, files + 1, 'zz_last.py');
        assert.deepEqual([after.files, after.items], [fresh.files, fresh.items], 'nothing indexed twice through the loops');
      } finally {
        await lsp.close();
      }
    } finally {
      dir.cleanup();
    }
  });
});

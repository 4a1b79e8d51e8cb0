// The indexer under a hostile tester: what git ignores (the global excludes file above all) stays
// out of the index and the prompts, with git and without it, observed through the real language
// server and the CLI.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StatusParams } from '../../src/protocol/protocol';
import { tempDir } from '../helpers/paths';
import { startOllamaTestServer, type OllamaTestServer } from '../helpers/ollamaServer';
import { startLsp, type LspSession } from '../server/lspHarness';
import { coderag, makeUnreadable, writeTree, type IndexJson } from './helpers';

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

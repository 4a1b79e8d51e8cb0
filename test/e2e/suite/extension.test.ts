// Extension-host tests: the installed CodeRAG extension inside code-server, through the public
// VS Code API only (commands, configuration, editors). The workspace is a copy of
// test/fixtures/pyshop set up by test/e2e/run.mjs, with coderag.* pointed at the test model server.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { after, before, describe, it } from 'mocha';
import type { CodeRagApi } from '../../../src/client/api';
import type { FolderIndexSummary, StatusParams } from '../../../src/protocol/protocol';
import { assertSaneGhostText } from '../ghostSanity.mjs';

const EXTENSION_ID = 'coderag.coderag-vscode';
const COMMANDS = ['coderag.rebuildIndex', 'coderag.toggleReranker', 'coderag.explainLastCompletion', 'coderag.toggleCompletions'];
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(200);
  }
}

/** The API `activate()` returns: the status the server reported, as the status bar shows it. */
function api(): CodeRagApi {
  const exports = vscode.extensions.getExtension<CodeRagApi>(EXTENSION_ID)?.exports;
  assert.ok(exports, `${EXTENSION_ID} is active and returns its API`);
  return exports;
}

function serverStatus(): StatusParams {
  const status = api().status().server;
  assert.ok(status, 'the server has reported its status');
  return status;
}

/** The index summary of a workspace folder in the server's status. */
function summaryOf(status: StatusParams, uri: vscode.Uri): FolderIndexSummary {
  const summary = status.folders.find((f) => vscode.Uri.parse(f.uri).fsPath === uri.fsPath);
  assert.ok(summary, `the status has ${uri.fsPath}: ${JSON.stringify(status.folders)}`);
  return summary;
}

function folder(): vscode.Uri {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'a workspace folder is open');
  return f.uri;
}

describe('CodeRAG in the extension host', () => {
  let main: vscode.TextEditor;
  let original = '';

  before(async () => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder(), 'app', 'main.py'));
    original = doc.getText();
    main = await vscode.window.showTextDocument(doc);
  });

  after(async () => {
    // Leave the fixture copy as it was.
    const doc = main.document;
    if (doc.getText() !== original) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(0, 0, doc.lineCount, 0), original);
      await vscode.workspace.applyEdit(edit);
      await doc.save();
    }
  });

  it('activates on a Python file', async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is installed`);
    await until('activation', 60_000, () => (extension.isActive ? true : undefined));
    assert.equal(extension.packageJSON.main, './dist/client.js');
  });

  it('registers every contributed command', async () => {
    const all = new Set(await vscode.commands.getCommands(true));
    const missing = COMMANDS.filter((c) => !all.has(c));
    assert.deepEqual(missing, [], `commands not registered: ${missing.join(', ')}`);
    const contributed = (
      vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON.contributes.commands as Array<{
        command: string;
        title: string;
        category?: string;
      }>
    ).map((c) => `${c.category}: ${c.title}`);
    for (const title of [
      'CodeRAG: Rebuild Repository Index',
      'CodeRAG: Toggle Reranker (LLM / Distilled)',
      'CodeRAG: Explain Last Completion',
      'CodeRAG: Enable/Disable Completions',
    ])
      assert.ok(contributed.includes(title), `palette title ${title}`);
  });

  it('reads the coderag.* settings the harness wrote (model endpoint on 127.0.0.1)', () => {
    const config = vscode.workspace.getConfiguration('coderag');
    assert.equal(config.get('model.provider'), 'ollama');
    assert.match(config.get<string>('ollama.host') ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(config.get('enable'), true);
  });

  // The client reports command outcomes as notifications, which the extension API cannot observe
  // (they are checked in the browser by run.mjs), and its command wrapper turns a failure into an
  // error notification, so the command resolves either way: the tests read the server's status
  // through the extension's API instead (what the status bar shows).
  // Also the barrier before completing: the command resolves when the server's index is built.
  it('"Rebuild Repository Index" brings the index up to date with the files on disk before it resolves', async () => {
    const workspace = vscode.workspace.workspaceFolders ?? [];
    const allReady = (s: StatusParams | undefined): boolean =>
      s !== undefined && s.folders.length === workspace.length && s.folders.every((f) => f.state === 'ready');
    await until('the first index of every folder', 90_000, () => (allReady(api().status().server) ? true : undefined));
    const previous = summaryOf(serverStatus(), folder());
    // A file the index has not seen, asserted on as soon as the command resolves (the file
    // watcher indexes it as well, but on its own time).
    const added = vscode.Uri.joinPath(folder(), 'app', 'e2e_rebuild_probe.py');
    await vscode.workspace.fs.writeFile(added, new TextEncoder().encode('def e2e_rebuild_probe(order):\n    return order.total\n'));
    try {
      await vscode.commands.executeCommand('coderag.rebuildIndex');
      const status = serverStatus();
      assert.equal(status.folders.length, workspace.length, JSON.stringify(status.folders));
      for (const f of status.folders) {
        assert.equal(f.state, 'ready', `${f.uri} is indexed: ${JSON.stringify(f)}`);
        assert.ok((f.files ?? 0) > 0 && (f.items ?? 0) > 0, `${f.uri} has files and items: ${JSON.stringify(f)}`);
      }
      const rebuilt = summaryOf(status, folder());
      assert.equal(
        rebuilt.files,
        (previous.files ?? 0) + 1,
        `the new file is indexed: before ${JSON.stringify(previous)}, after ${JSON.stringify(rebuilt)}`,
      );
      assert.ok(
        (rebuilt.items ?? 0) > (previous.items ?? 0),
        `its function is an item: before ${JSON.stringify(previous)}, after ${JSON.stringify(rebuilt)}`,
      );
      // What the user sees once the background embeddings are done: ready, with the reranker named.
      const bar = await until('the status bar shows ready', 30_000, () =>
        api().status().server?.state === 'ready' ? api().status().statusBar : undefined,
      );
      assert.match(bar.text, /^\$\(check\) CodeRAG · (llm|distilled|none)$/);
      assert.match(serverStatus().message, /^Ready: \d+ items indexed/);
    } finally {
      await vscode.workspace.fs.delete(added);
    }
  }).timeout(150_000);

  it('the registered inline completion provider answers: triggering and committing inserts a completion', async () => {
    // `    receipt = service.checkout()`: the arguments of a method another file defines (at
    // `CheckoutService(cart, ` the test model writes only what the junk filters hide: see run.mjs PY_TYPED).
    const line = 19;
    const prefix = '    receipt = service.checkout(';
    await main.edit((e) => e.replace(main.document.lineAt(line).range, prefix));
    const cursor = new vscode.Position(line, prefix.length);
    main.selection = new vscode.Selection(cursor, cursor);
    const inserted = await until('an inline completion committed at main.py:20', 90_000, async () => {
      await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      await sleep(1500);
      await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
      const text = main.document.lineAt(line).text;
      return text.length > prefix.length ? text.slice(prefix.length) : undefined;
    });
    assert.ok(inserted.trim().length > 0);
    assertSaneGhostText(inserted, { lang: 'python', typed: prefix });
  });

  it('"Explain Last Completion" opens the trace with the retrieved snippets and their paths', async () => {
    await vscode.commands.executeCommand('coderag.explainLastCompletion');
    const editor = await until('the trace editor', 20_000, () =>
      vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'coderag-trace'),
    );
    const text = editor.document.getText();
    assert.match(text, /pyshop\/services\/checkout\.py/, `the trace names the cross-file definition's path: ${text.slice(0, 400)}`);
    await vscode.window.showTextDocument(main.document);
  });

  it('"Enable/Disable Completions" flips coderag.enable and back', async () => {
    const config = () => vscode.workspace.getConfiguration('coderag');
    const before = config().get<boolean>('enable');
    await vscode.commands.executeCommand('coderag.toggleCompletions');
    await until('coderag.enable flipped', 10_000, () => (config().get<boolean>('enable') !== before ? true : undefined));
    await vscode.commands.executeCommand('coderag.toggleCompletions');
    await until('coderag.enable restored', 10_000, () => (config().get<boolean>('enable') === before ? true : undefined));
  });

  it('"Toggle Reranker" switches LLM <-> distilled in the server and the status bar, and back', async () => {
    const start = serverStatus().reranker.current;
    assert.ok(start === 'llm' || start === 'distilled', `the harness starts with a reranker (coderag.rerank.kind): ${start}`);
    const other = start === 'llm' ? 'distilled' : 'llm';
    const shows = (kind: string) => (): true | undefined => {
      const { server, statusBar } = api().status();
      return server?.reranker.current === kind && statusBar.text.endsWith(`· ${kind}`) ? true : undefined;
    };
    await vscode.commands.executeCommand('coderag.toggleReranker');
    await until(`the server's reranker switched to ${other}`, 10_000, shows(other));
    await vscode.commands.executeCommand('coderag.toggleReranker');
    await until(`the server's reranker back to ${start}`, 10_000, shows(start));
  });
});

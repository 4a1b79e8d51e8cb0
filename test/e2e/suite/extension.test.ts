// Extension-host tests: the installed CodeRAG extension inside code-server, through the public
// VS Code API only (commands, configuration, editors). The workspace is a copy of
// test/fixtures/pyshop set up by test/e2e/run.mjs, with coderag.* pointed at the test model server.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { after, before, describe, it } from 'mocha';

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
    const contributed = (vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON.contributes.commands as Array<{ command: string; title: string; category?: string }>).map((c) => `${c.category}: ${c.title}`);
    for (const title of ['CodeRAG: Rebuild Repository Index', 'CodeRAG: Toggle Reranker (LLM / Distilled)', 'CodeRAG: Explain Last Completion', 'CodeRAG: Enable/Disable Completions']) assert.ok(contributed.includes(title), `palette title ${title}`);
  });

  it('reads the coderag.* settings the harness wrote (model endpoint on 127.0.0.1)', () => {
    const config = vscode.workspace.getConfiguration('coderag');
    assert.equal(config.get('model.provider'), 'ollama');
    assert.match(config.get<string>('ollama.host') ?? '', /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(config.get('enable'), true);
  });

  // The client reports command outcomes as notifications, which the extension API cannot observe
  // (they are checked in the browser by run.mjs); here: the commands run to their end.
  // Also the barrier before completing: the command resolves when the server's index is built.
  it('"Rebuild Repository Index" runs to its end (the command awaits the server\'s rebuild)', async () => {
    const t = Date.now();
    await vscode.commands.executeCommand('coderag.rebuildIndex');
    assert.ok(Date.now() - t < 60_000);
  });

  it('the registered inline completion provider answers: triggering and committing inserts a completion', async () => {
    const line = 18; // `    service = CheckoutService(cart, gateway)` -> cut after `CheckoutService(`
    const prefix = '    service = CheckoutService(';
    await main.edit((e) => e.replace(main.document.lineAt(line).range, prefix));
    const cursor = new vscode.Position(line, prefix.length);
    main.selection = new vscode.Selection(cursor, cursor);
    const inserted = await until('an inline completion committed at main.py:19', 90_000, async () => {
      await vscode.commands.executeCommand('editor.action.inlineSuggest.trigger');
      await sleep(1500);
      await vscode.commands.executeCommand('editor.action.inlineSuggest.commit');
      const text = main.document.lineAt(line).text;
      return text.length > prefix.length ? text.slice(prefix.length) : undefined;
    });
    assert.ok(inserted.trim().length > 0);
  });

  it('"Explain Last Completion" opens the trace with the retrieved snippets and their paths', async () => {
    await vscode.commands.executeCommand('coderag.explainLastCompletion');
    const editor = await until('the trace editor', 20_000, () => (vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === 'coderag-trace')));
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

  it('"Toggle Reranker" runs, twice (back to the start)', async () => {
    await vscode.commands.executeCommand('coderag.toggleReranker');
    await vscode.commands.executeCommand('coderag.toggleReranker');
  });
});

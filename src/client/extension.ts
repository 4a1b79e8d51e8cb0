// The VS Code extension: the client's one composition root. It starts the language server
// (dist/server.js over IPC), forwards inline-completion requests to it with cancellation, and
// owns the commands, the status bar item, the trace view and the output channel. Nothing heavy
// runs in the extension host (docs/ARCHITECTURE.md "One completion, as data flowing through").
import * as vscode from 'vscode';
import {
  LanguageClient,
  TransportKind,
  WorkDoneProgress,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import {
  apiKeyProblem,
  CompletionOutcomeNotification,
  DownloadLocalModelRequest,
  ExplainRequest,
  GetStatusRequest,
  InlineCompletionRequest,
  LocalModelDownloadInfoRequest,
  PullModelRequest,
  RebuildIndexRequest,
  ResetLearningRequest,
  SetApiKeyNotification,
  SERVER_EXEC_ARGV,
  SERVER_PROCESS_ENV,
  SetRerankerRequest,
  StatusNotification,
  type ExplainResult,
  type InitializationOptions,
  type InlineCompletionItem as LspInlineItem,
  type RerankerChoice,
  type StatusParams,
} from '../protocol/protocol';
import type { CodeRagApi, CodeRagStatusSnapshot } from './api';
import { downloadQuestion } from './downloadQuestion';
import { OutcomeTracker, outcomeSender, type OutcomeReport } from './outcomeTracker';
import { modelFixes, statusBarView } from './statusBar';

export type { CodeRagApi, CodeRagStatusSnapshot } from './api';

const LANGUAGES = ['python', 'java'];
const TRACE_SCHEME = 'coderag-trace';
/** The OpenAI-compatible server's key in VS Code's SecretStorage (never a setting: a repository could set one). */
const API_KEY_SECRET = 'coderag.openai.apiKey';
/** The walkthrough of package.json (contributes.walkthroughs): connect a model, watch indexing, accept, explain. */
const WALKTHROUGH = 'coderag.gettingStarted';
/** Run by VS Code when a suggestion is accepted with Tab (an item's command); not in the palette. */
const ACCEPTED_COMMAND = 'coderag.suggestionAccepted';

/** Shows the server's work-done progress for `token` in a VS Code progress notification. */
function forwardProgress(
  client: LanguageClient,
  token: string,
  progress: vscode.Progress<{ message?: string; increment?: number }>,
): vscode.Disposable {
  let last = 0;
  return client.onProgress(WorkDoneProgress.type, token, (value) => {
    if (value.kind === 'end') return;
    const pct = value.percentage ?? last;
    progress.report({ message: value.message, increment: Math.max(0, pct - last) });
    last = pct;
  });
}

class CodeRagExtension implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private readonly output = vscode.window.createOutputChannel('CodeRAG');
  private readonly statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private readonly traces = new Map<string, string>();
  private readonly traceChanged = new vscode.EventEmitter<vscode.Uri>();
  private readonly statusChanged = new vscode.EventEmitter<CodeRagStatusSnapshot>();
  private readonly disposables: vscode.Disposable[] = [];
  /** What belongs to the running client (handlers registered on it); disposed on restart. */
  private clientDisposables: vscode.Disposable[] = [];
  private status: StatusParams | undefined;
  private lastTraceId: string | undefined;
  private offeredPull = new Set<string>();
  /** What became of each shown suggestion, sent to the server for learning (the `bandit` similar-code mode and the show gate learn). */
  private readonly outcomes = new OutcomeTracker(
    outcomeSender(
      () => {
        const settings = vscode.workspace.getConfiguration('coderag');
        return settings.get<string>('similar.mode', 'auto') === 'bandit' || settings.get<string>('suggestions.show', 'balanced') !== 'all';
      },
      (r) => this.sendOutcome(r),
    ),
  );

  constructor(private readonly context: vscode.ExtensionContext) {
    this.disposables.push(this.output, this.statusItem, this.traceChanged, this.statusChanged);
    this.showStatus(undefined);
    this.statusItem.show();
  }

  async start(): Promise<void> {
    this.registerCommands();
    this.registerProviders();
    this.disposables.push(
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.restart('the workspace is now trusted')),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.showStatus(this.status)),
      this.context.secrets.onDidChange((e) => {
        if (e.key === API_KEY_SECRET) void this.sendApiKey();
      }),
    );
    this.warnPlainApiKey();
    await this.startClient();
  }

  /** The deprecated plain setting is not read: say so once per session, offering the command. */
  private warnPlainApiKey(): void {
    const plain = vscode.workspace.getConfiguration('coderag').get<string>('openai.apiKey', '');
    if (!plain) return;
    void vscode.window
      .showWarningMessage(
        'CodeRAG: the coderag.openai.apiKey setting is ignored (a repository could set it); the key is kept in secret storage.',
        'Set API Key',
      )
      .then((choice) => {
        if (choice === 'Set API Key') void vscode.commands.executeCommand('coderag.setOpenAiApiKey');
      });
  }

  private async sendApiKey(): Promise<void> {
    const apiKey = (await this.context.secrets.get(API_KEY_SECRET)) ?? '';
    await this.client?.sendNotification(SetApiKeyNotification.type, { apiKey });
  }

  private async setApiKey(): Promise<void> {
    const value = await vscode.window.showInputBox({
      title: 'CodeRAG: OpenAI-compatible API Key',
      prompt: 'Kept in VS Code secret storage; leave empty to remove it.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => apiKeyProblem(v.trim()),
    });
    if (value === undefined || apiKeyProblem(value.trim())) return;
    if (value.trim() === '') await this.context.secrets.delete(API_KEY_SECRET);
    else await this.context.secrets.store(API_KEY_SECRET, value.trim());
    void vscode.window.showInformationMessage(`CodeRAG: the API key was ${value.trim() ? 'saved in secret storage' : 'removed'}.`);
  }

  private settings(): unknown {
    // The configuration proxy carries methods; send plain data (without the ignored plain key).
    const config = vscode.workspace.getConfiguration('coderag');
    const plain = JSON.parse(JSON.stringify(config)) as { openai?: { apiKey?: unknown } };
    if (plain.openai) delete plain.openai.apiKey;
    return plain;
  }

  private async startClient(): Promise<void> {
    const module = this.context.asAbsolutePath('dist/server.js');
    const env = { ...process.env, ...SERVER_PROCESS_ENV };
    const serverOptions: ServerOptions = {
      run: { module, transport: TransportKind.ipc, options: { env, execArgv: [...SERVER_EXEC_ARGV] } },
      debug: { module, transport: TransportKind.ipc, options: { env, execArgv: [...SERVER_EXEC_ARGV, '--nolazy', '--inspect=6009'] } },
    };
    const initializationOptions: InitializationOptions = {
      trusted: vscode.workspace.isTrusted,
      cacheDir: vscode.Uri.joinPath(this.context.globalStorageUri, 'index').fsPath,
      modelsDir: vscode.Uri.joinPath(this.context.globalStorageUri, 'models').fsPath,
      settings: this.settings(),
      openaiApiKey: (await this.context.secrets.get(API_KEY_SECRET)) ?? '',
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: LANGUAGES.map((language) => ({ scheme: 'file', language })),
      synchronize: { configurationSection: 'coderag' },
      outputChannel: this.output,
      initializationOptions,
    };
    const client = new LanguageClient('coderag', 'CodeRAG', serverOptions, clientOptions);
    this.client = client;
    // Before start: the client installs it with the connection, so the first statuses (indexing
    // progress right after initialize) are not lost.
    this.clientDisposables.push(client.onNotification(StatusNotification.type, (s) => this.onStatus(s)));
    await client.start();
    // Messages arrive in order: the answer is at least as new as any status received before it.
    this.onStatus(await client.sendRequest(GetStatusRequest.type));
  }

  private async restart(why: string): Promise<void> {
    this.output.appendLine(`Restarting the CodeRAG server: ${why}`);
    const old = this.client;
    this.client = undefined;
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    this.status = undefined;
    this.showStatus(undefined);
    await old?.stop().catch(() => undefined);
    await this.startClient();
  }

  private registerProviders(): void {
    const provider: vscode.InlineCompletionItemProvider = {
      provideInlineCompletionItems: async (document, position, context, token) => {
        const client = this.client;
        if (!client || !this.enabled() || !vscode.workspace.isTrusted) return undefined;
        try {
          // The client library sends $/cancelRequest when `token` fires; the server turns it into an AbortSignal.
          const result = await client.sendRequest(
            InlineCompletionRequest.type,
            {
              textDocument: { uri: document.uri.toString() },
              position: { line: position.line, character: position.character },
              context: { triggerKind: context.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 1 : 2 },
            },
            token,
          );
          if (!result || token.isCancellationRequested) return undefined;
          const items: LspInlineItem[] = Array.isArray(result) ? result : result.items;
          return items.map((item) => {
            if (item.traceId) this.lastTraceId = item.traceId;
            const text = typeof item.insertText === 'string' ? item.insertText : new vscode.SnippetString(item.insertText.value);
            const range = item.range
              ? new vscode.Range(item.range.start.line, item.range.start.character, item.range.end.line, item.range.end.character)
              : new vscode.Range(position, position);
            const shown = new vscode.InlineCompletionItem(text, range);
            if (item.traceId && typeof item.insertText === 'string') {
              this.outcomes.shown(item.traceId, document.uri.toString(), document.offsetAt(range.start), item.insertText);
              shown.command = { title: 'Accepted', command: ACCEPTED_COMMAND, arguments: [item.traceId] };
            }
            return shown;
          });
        } catch (e) {
          if (!token.isCancellationRequested)
            this.output.appendLine(`inline completion failed: ${e instanceof Error ? e.message : String(e)}`);
          return undefined;
        }
      },
    };
    this.disposables.push(
      vscode.languages.registerInlineCompletionItemProvider(
        LANGUAGES.map((language) => ({ scheme: 'file', language })),
        provider,
      ),
      // Following each shown suggestion: typed through, accepted, typed over or left.
      vscode.commands.registerCommand(ACCEPTED_COMMAND, (traceId: unknown) => {
        if (typeof traceId === 'string') this.outcomes.accepted(traceId);
      }),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length > 0) this.outcomes.edited(e.document.uri.toString(), e.contentChanges);
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        const sel = e.selections[0];
        if (!sel) return;
        const uri = e.textEditor.document.uri.toString();
        if (e.selections.length > 1 || !sel.isEmpty) this.outcomes.left(uri);
        else this.outcomes.cursorAt(uri, e.textEditor.document.offsetAt(sel.active));
      }),
      vscode.window.onDidChangeActiveTextEditor(() => this.outcomes.flush()),
      vscode.workspace.onDidCloseTextDocument((d) => this.outcomes.left(d.uri.toString())),
      vscode.workspace.registerTextDocumentContentProvider(TRACE_SCHEME, {
        onDidChange: this.traceChanged.event,
        provideTextDocumentContent: (uri) => this.traces.get(uri.path) ?? '# No trace\n',
      }),
    );
  }

  private enabled(): boolean {
    return vscode.workspace.getConfiguration('coderag').get<boolean>('enable', true);
  }

  private registerCommands(): void {
    const command = (id: string, run: () => Promise<unknown>): void => {
      this.disposables.push(
        vscode.commands.registerCommand(id, () =>
          run().catch((e: unknown) => void vscode.window.showErrorMessage(`CodeRAG: ${e instanceof Error ? e.message : String(e)}`)),
        ),
      );
    };
    command('coderag.rebuildIndex', () => this.rebuildIndex());
    command('coderag.toggleReranker', () => this.toggleReranker());
    command('coderag.explainLastCompletion', () => this.explainLast());
    command('coderag.toggleCompletions', () => this.toggleCompletions());
    command('coderag.pullModel', () => this.pullModel());
    command('coderag.downloadModel', () => this.downloadModel());
    command('coderag.showLog', () => Promise.resolve(this.output.show(true)));
    command('coderag.setOpenAiApiKey', () => this.setApiKey());
    command('coderag.resetLearning', () => this.resetLearning());
    command('coderag.fixModel', () => this.fixModel());
  }

  /** One suggestion's outcome to the server (outcomeSender has checked that learning is on). */
  private sendOutcome(report: OutcomeReport): void {
    const client = this.client;
    if (!client || !client.isRunning()) return;
    void client
      .sendNotification(CompletionOutcomeNotification.type, report)
      .catch((e: unknown) =>
        this.output.appendLine(`sending a suggestion's outcome failed: ${e instanceof Error ? e.message : String(e)}`),
      );
  }

  /** The status item's click on a model problem (or the shipped model standing in): the ways out, likeliest first. */
  private async fixModel(): Promise<void> {
    const picked = await vscode.window.showQuickPick(modelFixes(this.status), {
      title: 'CodeRAG: connect a model',
      placeHolder: this.status?.model.message ?? this.status?.message,
    });
    switch (picked?.action) {
      case 'pull':
        return this.pullModel(this.status?.model.model);
      case 'download':
        return this.downloadModel();
      case 'walkthrough':
        await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${this.context.extension.id}#${WALKTHROUGH}`, false);
        return;
      case 'useEmbedded':
        await vscode.workspace.getConfiguration('coderag').update('model.provider', 'embedded', vscode.ConfigurationTarget.Global);
        return;
      case 'settings':
        await vscode.commands.executeCommand('workbench.action.openSettings', `@ext:${this.context.extension.id}`);
        return;
      case 'log':
        this.output.show(true);
        return;
      case undefined:
        return;
    }
  }

  private async resetLearning(): Promise<void> {
    const client = this.requireClient();
    this.outcomes.flush();
    const result = await client.sendRequest(ResetLearningRequest.type);
    void vscode.window.showInformationMessage(
      `CodeRAG: learned preferences ` +
        `reset${result.folders > 0 ? ` (${result.folders} workspace folder${result.folders === 1 ? '' : 's'})` : ''}; ` +
        `similar code is chosen afresh.`,
    );
  }

  private requireClient(): LanguageClient {
    if (!this.client) throw new Error('the CodeRAG server is not running');
    return this.client;
  }

  private async rebuildIndex(): Promise<void> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage('CodeRAG does not index untrusted workspaces.');
      return;
    }
    const client = this.requireClient();
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'CodeRAG: Rebuilding repository index', cancellable: true },
      async (progress, token) => {
        const workDoneToken = `coderag-rebuild-${Date.now()}`;
        const sub = forwardProgress(client, workDoneToken, progress);
        try {
          // The command the user runs when the index seems wrong: drop the saved index and parse every file again.
          const result = await client.sendRequest(RebuildIndexRequest.type, { workDoneToken, full: true }, token);
          const items = result.folders.reduce((n, f) => n + (f.items ?? 0), 0);
          const failed = result.folders.filter((f) => f.state === 'failed');
          if (failed.length > 0)
            void vscode.window.showErrorMessage(
              `CodeRAG: indexing failed for ${failed.map((f) => `${f.uri} (${f.message ?? ''})`).join(', ')}`,
            );
          else void vscode.window.showInformationMessage(`CodeRAG: index rebuilt, ${items} items in ${result.folders.length} folder(s).`);
        } finally {
          sub.dispose();
        }
      },
    );
  }

  private async toggleReranker(): Promise<void> {
    const client = this.requireClient();
    const current = this.status?.reranker.current ?? 'none';
    const next: RerankerChoice = current === 'llm' ? 'distilled' : 'llm';
    const result = await client.sendRequest(SetRerankerRequest.type, { reranker: next });
    const note = result.available.includes(next) ? '' : ' (not available: candidates stay in retrieval order)';
    void vscode.window.showInformationMessage(`CodeRAG reranker: ${result.reranker}${note}`);
  }

  private async explainLast(): Promise<void> {
    this.requireClient();
    const explained = await this.lastTrace();
    if (!explained) {
      void vscode.window.showInformationMessage('CodeRAG: no completion to explain yet.');
      return;
    }
    const path = `/trace-${explained.trace.id}.md`;
    const server = explained.server
      ? `\n\n_Server: debounce ${explained.server.debounceMs.toFixed(0)} ms, handler ` +
        `${explained.server.handlerMs.toFixed(0)} ms, overhead ${explained.server.overheadMs.toFixed(1)} ms, cache ` +
        `${explained.server.cache}_\n`
      : '';
    this.traces.set(path, explained.markdown + server);
    const uri = vscode.Uri.from({ scheme: TRACE_SCHEME, path });
    this.traceChanged.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  }

  private async toggleCompletions(): Promise<void> {
    const config = vscode.workspace.getConfiguration('coderag');
    const next = !config.get<boolean>('enable', true);
    await config.update('enable', next, vscode.ConfigurationTarget.Global);
    void vscode.window.showInformationMessage(`CodeRAG completions ${next ? 'enabled' : 'disabled'}.`);
  }

  private async pullModel(model?: string): Promise<void> {
    const client = this.requireClient();
    const name = model ?? this.status?.model.model;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `CodeRAG: pulling ${name ?? 'the completion model'}`, cancellable: true },
      async (progress, token) => {
        const workDoneToken = `coderag-pull-${Date.now()}`;
        const sub = forwardProgress(client, workDoneToken, progress);
        try {
          const result = await client.sendRequest(PullModelRequest.type, { workDoneToken, ...(name ? { model: name } : {}) }, token);
          if (result.ok) void vscode.window.showInformationMessage(`CodeRAG: ${name ?? 'the model'} is ready.`);
          else void vscode.window.showErrorMessage(`CodeRAG: pulling failed: ${result.message ?? 'unknown error'}`);
        } finally {
          sub.dispose();
        }
      },
    );
  }

  /** The local model's GGUF file (coderag.local.*), downloaded by the server after the user agreed to host, file and size. */
  private async downloadModel(): Promise<void> {
    const client = this.requireClient();
    const info = await client.sendRequest(LocalModelDownloadInfoRequest.type, {});
    if (!info.ok) {
      const choice = await vscode.window.showErrorMessage(`CodeRAG: no local model to download: ${info.message ?? ''}`, 'Open Settings');
      if (choice === 'Open Settings') await vscode.commands.executeCommand('workbench.action.openSettings', 'coderag.local.download');
      return;
    }
    if (info.downloadedPath) {
      void vscode.window.showInformationMessage(`CodeRAG: ${info.fileName ?? 'the model'} is downloaded and verified already.`);
      return;
    }
    const question = downloadQuestion(info);
    const choice = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, 'Download');
    if (choice !== 'Download') return;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `CodeRAG: downloading ${info.fileName ?? 'the model'}`, cancellable: true },
      async (progress, token) => {
        const workDoneToken = `coderag-download-${Date.now()}`;
        const sub = forwardProgress(client, workDoneToken, progress);
        try {
          // Cancel sends $/cancelRequest; the server stops and keeps the partial file.
          const result = await client.sendRequest(DownloadLocalModelRequest.type, { workDoneToken }, token);
          if (result.ok) void vscode.window.showInformationMessage(`CodeRAG: ${info.fileName ?? 'the model'} is downloaded and verified.`);
          else if (result.cancelled)
            void vscode.window.showInformationMessage('CodeRAG: download cancelled; run the command again to resume it.');
          else void vscode.window.showErrorMessage(`CodeRAG: the download failed: ${result.message ?? 'unknown error'}`);
        } finally {
          sub.dispose();
        }
      },
    );
  }

  /** The trace of the last completion shown (else the server's last one). */
  async lastTrace(): Promise<ExplainResult | undefined> {
    const client = this.client;
    if (!client) return undefined;
    return (await client.sendRequest(ExplainRequest.type, this.lastTraceId ? { traceId: this.lastTraceId } : {})) ?? undefined;
  }

  snapshot(): CodeRagStatusSnapshot {
    return { server: this.status, statusBar: statusBarView(this.status, vscode.workspace.isTrusted) };
  }

  get onDidChangeStatus(): vscode.Event<CodeRagStatusSnapshot> {
    return this.statusChanged.event;
  }

  private onStatus(status: StatusParams): void {
    this.status = status;
    this.showStatus(status);
    this.statusChanged.fire(this.snapshot());
    if (status.model.state === 'modelMissing' && status.model.backend === 'ollama' && !this.offeredPull.has(status.model.model)) {
      this.offeredPull.add(status.model.model);
      void vscode.window
        .showWarningMessage(
          `CodeRAG: the model "${status.model.model}" is not pulled in Ollama (${status.model.endpoint}).`,
          'Pull now',
          'Open settings',
        )
        .then((choice) => {
          if (choice === 'Pull now') void this.pullModel(status.model.model);
          else if (choice === 'Open settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'coderag');
        });
    }
  }

  private showStatus(status: StatusParams | undefined): void {
    const view = statusBarView(status, vscode.workspace.isTrusted);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = new vscode.MarkdownString(view.tooltip);
    this.statusItem.backgroundColor = view.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.statusItem.command = view.command;
  }

  async dispose(): Promise<void> {
    await this.client?.stop().catch(() => undefined);
    for (const d of this.clientDisposables.splice(0)) d.dispose();
    for (const d of this.disposables) d.dispose();
  }
}

let extension: CodeRagExtension | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<CodeRagApi> {
  extension = new CodeRagExtension(context);
  const ext = extension;
  context.subscriptions.push({ dispose: () => void ext.dispose() });
  await ext.start();
  return {
    status: () => ext.snapshot(),
    onDidChangeStatus: (listener) => ext.onDidChangeStatus(listener),
    lastTrace: () => ext.lastTrace(),
  };
}

export async function deactivate(): Promise<void> {
  await extension?.dispose();
  extension = undefined;
}

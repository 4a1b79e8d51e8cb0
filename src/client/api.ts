// The API `activate()` returns (`vscode.extensions.getExtension('coderag.coderag-vscode').exports`):
// a read-only view for tests and other extensions. Types only.
import type { ExplainResult, StatusParams } from '../protocol/protocol';
import type { StatusBarView } from './statusBar';

export interface CodeRagStatusSnapshot {
  /** The server's last status (undefined until the server has reported one). */
  server: StatusParams | undefined;
  /** What the status-bar item shows now. */
  statusBar: StatusBarView;
}

export interface CodeRagApi {
  /** The current status: the server's and what the status bar shows for it. */
  status(): CodeRagStatusSnapshot;
  /** Called with every status the server sends; returns a disposable that unsubscribes. */
  onDidChangeStatus(listener: (status: CodeRagStatusSnapshot) => void): { dispose(): void };
  /** The trace of the last completion shown in the editor (else the server's last one); undefined when there is none or no server. */
  lastTrace(): Promise<ExplainResult | undefined>;
}

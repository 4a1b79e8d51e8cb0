// `coderag serve --stdio`: the CodeRAG language server for any LSP client (inline completion via
// LSP 3.18 textDocument/inlineCompletion, plus the coderag/* requests of src/protocol).
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { assetsDir, cacheRoot } from '../context';
import { Server } from '../../server/Server';

export const serveCommand: CliCommand = {
  name: 'serve',
  usage: 'serve --stdio [--index-dir DIR]',
  async run(argv) {
    const { values } = parseCommandArgs(argv, { stdio: { type: 'boolean' }, 'index-dir': { type: 'string' } } as const);
    if (!values.stdio) throw new UsageError('only --stdio is supported (the VS Code extension starts dist/server.js itself)');
    const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout);
    new Server(connection, { assetsDir: assetsDir(), cacheRoot: cacheRoot(values['index-dir'] as string | undefined), logLevel: process.env.CODERAG_LOG === 'debug' ? 'debug' : 'info' }).start();
    // The connection owns the process from here: it exits on the client's `exit` notification.
    await new Promise<never>(() => undefined);
    return 0;
  },
};

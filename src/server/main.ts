// The language server process (dist/server.js), started by the VS Code client over IPC and by
// `coderag serve --stdio` over stdio. The bundle sits next to the copied grammars/ and models/.
import '../engine/util/consoleToStderr';
import { createConnection, ProposedFeatures, type Connection } from 'vscode-languageserver/node';
import { LifecycleGuard } from './lifecycle';
import { Server } from './Server';
import { FrameLimit } from './frameLimit';

// The connection kind comes from the process arguments (--node-ipc, --stdio, --socket=N); every
// message passes the server's lifecycle guard before a handler sees it.
const lifecycle = new LifecycleGuard();
const connection = process.argv.includes('--stdio')
  ? stdioConnection()
  : createConnection(ProposedFeatures.all, { messageStrategy: lifecycle });
new Server(connection, { assetsDir: __dirname, logLevel: process.env.CODERAG_LOG === 'debug' ? 'debug' : 'info' }, lifecycle).start();

/**
 * stdio through the frame limit: a frame declared over MAX_FRAME_BYTES ends the connection (the
 * library exits the process when its input closes) with a line on stderr, before its body is read.
 */
function stdioConnection(): Connection {
  const input = new FrameLimit();
  input.once('error', (e) => process.stderr.write(`[error lsp] connection closed: ${e.message}\n`));
  process.stdin.pipe(input);
  return createConnection(ProposedFeatures.all, input, process.stdout, { messageStrategy: lifecycle });
}

// The language server process (dist/server.js), started by the VS Code client over IPC and by
// `coderag serve --stdio` over stdio. The bundle sits next to the copied grammars/ and models/.
import '../engine/util/consoleToStderr';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { LifecycleGuard } from './lifecycle';
import { Server } from './Server';

// The connection kind comes from the process arguments (--node-ipc, --stdio, --socket=N); every
// message passes the server's lifecycle guard before a handler sees it.
const lifecycle = new LifecycleGuard();
const connection = createConnection(ProposedFeatures.all, { messageStrategy: lifecycle });
new Server(connection, { assetsDir: __dirname, logLevel: process.env.CODERAG_LOG === 'debug' ? 'debug' : 'info' }, lifecycle).start();

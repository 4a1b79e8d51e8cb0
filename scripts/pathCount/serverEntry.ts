// The language server from source, as src/server/main.ts starts it over stdio, with the bundle's
// assets (grammars, models: dist/, or CODERAG_ASSETS_DIR) since src/server has none beside it.
import '../../src/engine/util/consoleToStderr';
import { join } from 'node:path';
import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { LifecycleGuard } from '../../src/server/lifecycle';
import { Server } from '../../src/server/Server';
import { FrameLimit } from '../../src/server/frameLimit';

const lifecycle = new LifecycleGuard();
const input = new FrameLimit();
process.stdin.pipe(input);
const connection = createConnection(ProposedFeatures.all, input, process.stdout, { messageStrategy: lifecycle });
const assetsDir = process.env.CODERAG_ASSETS_DIR ?? join(process.cwd(), 'dist');
new Server(connection, { assetsDir, logLevel: 'info' }, lifecycle).start();

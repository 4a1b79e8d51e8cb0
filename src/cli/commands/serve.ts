// `coderag serve --stdio`: the CodeRAG language server for any LSP client (inline completion via
// LSP 3.18 textDocument/inlineCompletion, plus the coderag/* requests of src/protocol). The CLI
// starts the bundled server (dist/server.js, the one the VS Code extension runs) on this
// process's stdin/stdout; the CLI itself imports nothing of src/server (docs/ARCHITECTURE.md layers).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, UsageError } from '../command';
import { assetsDir, cacheRoot } from '../context';
import { UserError } from '../../engine/util/errors';

export const serveCommand: CliCommand = {
  name: 'serve',
  usage: 'serve --stdio [--index-dir DIR]',
  async run(argv) {
    const { values } = parseCommandArgs(argv, { stdio: { type: 'boolean' }, 'index-dir': { type: 'string' } } as const);
    if (!values.stdio) throw new UsageError('only --stdio is supported (the VS Code extension starts dist/server.js itself)');
    const server = join(assetsDir(), 'server.js');
    if (!existsSync(server)) throw new UserError(`the language server bundle is missing: ${server} (run npm run build)`);
    const child = spawn(process.execPath, [server, '--stdio'], {
      stdio: 'inherit',
      env: { ...process.env, CODERAG_CACHE_DIR: cacheRoot(values['index-dir'] as string | undefined) },
    });
    // The server owns stdin/stdout from here: it exits on the client's `exit` notification.
    return new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : 1)));
    });
  },
};

// Imported first by each process entry (the language server, the CLI): stdout carries only the LSP
// stream or a command's output (`--json`). A dependency that logs with console.log (the ollama
// package does on an HTTP error) writes to stderr instead, where the editor's log and the
// terminal show it and no protocol or JSON reader sees it.
/* eslint-disable no-console -- the one place that redirects the process's console */
import { format } from 'node:util';

const toStderr = (...args: unknown[]): void => {
  process.stderr.write(`${format(...args)}\n`);
};
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;
console.warn = toStderr;

// Imported first by each process entry (the language server, the CLI): stdout carries only the LSP
// stream or a command's output (`--json`). A dependency that logs with console.log (the ollama
// package does on an HTTP error) writes to stderr instead, where the editor's log and the
// terminal show it and no protocol or JSON reader sees it. What a dependency prints may quote a
// server (the ollama package's "invalid json:" warning quotes the line it could not parse): it is
// sanitised and bounded like any outside text.
/* eslint-disable no-console -- the one place that redirects the process's console */
import { format } from 'node:util';
import { stripControlChars } from './outsideText';

/** Most characters of one console line a dependency writes. */
const MAX_CONSOLE_CHARS = 2000;

const toStderr = (...args: unknown[]): void => {
  const text = format(...args);
  const line = stripControlChars(text.length > MAX_CONSOLE_CHARS ? `${text.slice(0, MAX_CONSOLE_CHARS)}…` : text);
  process.stderr.write(`${line}\n`);
};
console.log = toStderr;
console.info = toStderr;
console.debug = toStderr;
console.warn = toStderr;
console.error = toStderr;

// The `coderag` command-line entry: one composition root that dispatches to src/cli/commands.
import '../engine/util/consoleToStderr';
import { setLogSink } from '../engine/util/logger';
import { errorMessage, isCancellationError, isUserError } from '../engine/util/errors';
import type { CliCommand } from './command';
import { UsageError } from './command';
import { takeDeviceOption } from './context';
import { indexCommand } from './commands/index';
import { kbCommand } from './commands/kb';
import { serveCommand } from './commands/serve';
import { completeCommand } from './commands/complete';
import { retrieveCommand } from './commands/retrieve';
import { benchCommand } from './commands/bench';
import { evalCommand } from './commands/eval';
import { rerankCommand } from './commands/rerank';
import { modelsCommand } from './commands/models';

const commands: CliCommand[] = [
  indexCommand,
  kbCommand,
  serveCommand,
  completeCommand,
  retrieveCommand,
  benchCommand,
  evalCommand,
  rerankCommand,
  modelsCommand,
];

function usage(): string {
  return [
    'usage: coderag <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.usage}`),
    '',
    'every command that runs a model: --device auto|cpu|cuda|dml|coreml (onnxruntime execution provider; default auto)',
  ].join('\n');
}

/** Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it. */
const INTERRUPTED = 130;

async function main(argv: string[], signal: AbortSignal): Promise<number> {
  setLogSink(
    (level, tag, message) => process.stderr.write(`[${tag}] ${level}: ${message}\n`),
    process.env.CODERAG_LOG === 'debug' ? 'debug' : 'warn',
  );
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`coderag: unknown command "${name}"\n${usage()}\n`);
    return 2;
  }
  try {
    const code = await command.run(takeDeviceOption(rest), signal);
    return signal.aborted ? INTERRUPTED : code;
  } catch (e) {
    if (signal.aborted || isCancellationError(e)) {
      process.stderr.write(`coderag ${name}: interrupted\n`);
      return INTERRUPTED;
    }
    if (e instanceof UsageError) {
      process.stderr.write(`coderag ${name}: ${e.message}\nusage: ${command.usage}\n`);
      return 2;
    }
    process.stderr.write(`coderag ${name}: ${isUserError(e) ? e.message : errorMessage(e)}\n`);
    if (process.env.CODERAG_LOG === 'debug' && e instanceof Error) process.stderr.write(`${e.stack}\n`);
    return 1;
  }
}

// Ctrl-C aborts the command's signal: it stops at its next check (index writes are atomic, output
// files are written whole or not at all). A second Ctrl-C exits at once.
const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(INTERRUPTED);
  interrupt.abort();
});

main(process.argv.slice(2), interrupt.signal).then(
  (code) => {
    process.exitCode = code;
    // Model sessions and timers of a stopped command must not hold the process open.
    if (code === INTERRUPTED) process.exit(INTERRUPTED);
  },
  (e: unknown) => {
    process.stderr.write(`coderag: ${errorMessage(e)}\n`);
    process.exitCode = 1;
  },
);

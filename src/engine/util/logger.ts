// Tagged loggers; the host decides where lines go (stderr for the CLI, the LSP console for the server).
// Every message loses terminal escapes and control characters first: it may quote a server.
import { stripControlChars } from './outsideText';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
type LogSink = (level: LogLevel, tag: string, message: string) => void;

interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

const levels: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

// The logger registry is the one module-level singleton the style allows.
const registry = {
  sink: ((level, tag, message) => {
    if (levels[level] >= levels.warn) process.stderr.write(`[${tag}] ${level}: ${message}\n`);
  }) as LogSink,
  minLevel: 'info' as LogLevel,
};

export function setLogSink(sink: LogSink, minLevel: LogLevel = 'info'): void {
  registry.sink = sink;
  registry.minLevel = minLevel;
}

export function getLogger(tag: string): Logger {
  const emit = (level: LogLevel, message: string): void => {
    if (levels[level] >= levels[registry.minLevel]) registry.sink(level, tag, stripControlChars(message));
  };
  return {
    debug: (m) => emit('debug', m),
    info: (m) => emit('info', m),
    warn: (m) => emit('warn', m),
    error: (m) => emit('error', m),
  };
}

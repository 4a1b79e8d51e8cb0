// A CLI subcommand and the small argument parser they share.
import { parseArgs } from 'node:util';

export interface CliCommand {
  name: string;
  /** One line: `name <args> [options]`. */
  usage: string;
  /**
   * Returns the exit code: 0 ok, 1 failure (throw), 2 bad arguments (throw UsageError). `signal`
   * aborts on Ctrl-C; the command stops at its next check and leaves no half-written file.
   */
  run(argv: string[], signal: AbortSignal): Promise<number>;
}

export class UsageError extends Error {}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** parseArgs with strict checking; unknown options become UsageError. */
export function parseCommandArgs<T extends OptionSpec>(
  argv: string[],
  options: T,
): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | string[] | undefined>, positionals };
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** `--name N`: a positive integer; `fallback` when the option is absent. */
export function positiveInt(values: Record<string, unknown>, name: string, fallback: number): number;
export function positiveInt(values: Record<string, unknown>, name: string): number | undefined;
export function positiveInt(values: Record<string, unknown>, name: string, fallback?: number): number | undefined {
  const v = values[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got "${String(v)}"`);
  return n;
}

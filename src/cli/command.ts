// A CLI subcommand and the small argument parser they share.
import { parseArgs } from 'node:util';

export interface CliCommand {
  name: string;
  /** One line: `name <args> [options]`. */
  usage: string;
  /** Returns the exit code: 0 ok, 1 failure (throw), 2 bad arguments (throw UsageError). */
  run(argv: string[]): Promise<number>;
}

export class UsageError extends Error {}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** parseArgs with strict checking; unknown options become UsageError. */
export function parseCommandArgs<T extends OptionSpec>(argv: string[], options: T): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | string[] | undefined>, positionals };
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

// Loads web-tree-sitter and the Python/Java grammars from a grammars folder given by the host.
import { Language, Parser } from 'web-tree-sitter';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import type { Lang } from './types';
import { UserError } from '../util/errors';

export interface Parsers {
  /** A parser for the language; callers must not keep trees across calls to parse(). */
  parser(lang: Lang): Parser;
  language(lang: Lang): Language;
}

const grammarFiles: Record<Lang, string> = {
  python: 'tree-sitter-python.wasm',
  java: 'tree-sitter-java.wasm',
};

/**
 * web-tree-sitter's runtime is process-wide state of the library itself (a second init replaces it
 * under the parsers already made), so it is initialised only when no parser can be made yet. The
 * host that loads parsers keeps them (one load per composition root).
 */
function runtimeReady(): boolean {
  try {
    new Parser().delete();
    return true;
  } catch {
    return false;
  }
}

/** Load both grammars from `grammarsDir` (holding tree-sitter.wasm and the language .wasm files). */
export async function loadParsers(grammarsDir: string): Promise<Parsers> {
  for (const file of ['tree-sitter.wasm', ...Object.values(grammarFiles)]) {
    if (!existsSync(join(grammarsDir, file))) {
      throw new UserError(`Grammar file ${file} is missing from ${grammarsDir}; run "npm run build" to copy the grammars.`);
    }
  }
  if (!runtimeReady()) await Parser.init({ locateFile: (name: string) => join(grammarsDir, name) });
  const languages = {} as Record<Lang, Language>;
  const parsers = {} as Record<Lang, Parser>;
  for (const lang of Object.keys(grammarFiles) as Lang[]) {
    const language = await Language.load(join(grammarsDir, grammarFiles[lang]));
    const parser = new Parser();
    parser.setLanguage(language);
    languages[lang] = language;
    parsers[lang] = parser;
  }
  return {
    parser: (lang) => parsers[lang],
    language: (lang) => languages[lang],
  };
}

/** The file extensions that are indexed, each with its language: the scan, saves and the file watcher read this one list. */
export const SOURCE_EXTENSIONS: Readonly<Record<string, Lang>> = { py: 'python', pyi: 'python', java: 'java' };

export function langOfPath(path: string): Lang | undefined {
  const ext = path.slice(path.lastIndexOf('.') + 1);
  return path.includes('.') && Object.hasOwn(SOURCE_EXTENSIONS, ext) ? SOURCE_EXTENSIONS[ext] : undefined;
}

/** A glob matching every indexed file at any depth, for a file watcher. */
export function sourceFileGlob(): string {
  return `**/*.{${Object.keys(SOURCE_EXTENSIONS).join(',')}}`;
}

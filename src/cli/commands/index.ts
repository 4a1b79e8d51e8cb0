// `coderag index <repo>`: build or refresh a repository's knowledge base and print what it holds.
import { homedir } from 'node:os';
import type { CliCommand } from '../command';
import { parseCommandArgs, positiveInt, UsageError } from '../command';
import { cacheRoot, openKnowledgeBase, progressPrinter, requireRepo } from '../context';
import { indexFilePath, indexFolderFor } from '../../engine/kb/store';
import { ITEM_KINDS } from '../../engine/kb/types';
import { DEFAULT_MAX_FILES, SKIP_REASON_TEXT, workspaceRootProblem } from '../../engine/kb/scan';
import type { IndexReport, KnowledgeBase } from '../../engine/kb/KnowledgeBase';
import { UserError } from '../../engine/util/errors';

export const indexOptions = {
  'index-dir': { type: 'string' },
  exclude: { type: 'string', multiple: true },
  'max-file-bytes': { type: 'string' },
  'max-files': { type: 'string' },
  force: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

export function parseMaxBytes(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--max-file-bytes must be a positive integer, got "${String(value)}"`);
  return n;
}

/**
 * The repository's knowledge base opened with the index options of `values` (`--index-dir`,
 * `--exclude`, `--max-file-bytes`) and brought up to date, with progress on stderr.
 */
export async function indexedKnowledgeBase(
  repo: string,
  values: Record<string, unknown>,
  signal: AbortSignal,
): Promise<{ kb: KnowledgeBase; report: IndexReport }> {
  const maxFileBytes = parseMaxBytes(values['max-file-bytes']);
  const maxFiles = positiveInt(values, 'max-files', DEFAULT_MAX_FILES);
  // The file-system root or the home folder: tens of thousands of files, most of them private.
  const refusal = values.force === true ? undefined : workspaceRootProblem(repo, homedir());
  if (refusal) throw new UserError(`${refusal} (--force indexes it anyway)`);
  const kb = await openKnowledgeBase(repo, {
    indexDir: values['index-dir'] as string | undefined,
    exclude: values.exclude as string[] | undefined,
    maxFileBytes,
    maxFiles,
  });
  const progress = progressPrinter('indexing');
  try {
    const report = await kb.index((p) => progress.update(p), signal);
    return { kb, report };
  } catch (e) {
    kb.dispose();
    throw e;
  } finally {
    progress.done();
  }
}

function formatReport(repo: string, report: IndexReport, indexPath: string): string {
  const fmt = (n: number): string => n.toLocaleString('en-US');
  const seconds = report.elapsedMs / 1000;
  const out: string[] = [];
  out.push(`Indexed ${repo}: ${fmt(report.files)} files, ${fmt(report.lines)} lines in ${report.elapsedMs.toFixed(0)} ms`);
  if (report.parsed > 0) {
    const t = report.timings;
    out.push(
      `  parsed ${fmt(report.parsed)} files (${fmt(report.parsedLines)} lines, ` +
        `${fmt(Math.round(report.parsedLines / Math.max(seconds, 1e-6)))} lines/s overall, ` +
        `${fmt(Math.round(report.parsedLines / Math.max(t.extractMs / 1000, 1e-6)))} lines/s parse + items; ` +
        `${fmt(Math.round(report.parsedLines / Math.max(t.extractCpuMs / 1000, 1e-6)))} lines per CPU-second)`,
    );
    out.push(
      `  time: scan ${t.scanMs.toFixed(0)} ms, read ${t.readMs.toFixed(0)} ms, parse + items ${t.extractMs.toFixed(0)} ` +
        `ms, save ${t.saveMs.toFixed(0)} ms`,
    );
  }
  out.push(`  reused ${fmt(report.reused)} unchanged files from the saved index, removed ${fmt(report.removed)}`);
  if (typeof report.savedIndex === 'object') out.push(`  saved index was invalid (${report.savedIndex.invalid}); rebuilt`);
  if (report.savedIndex === 'discarded') out.push('  saved index discarded; rebuilt');
  out.push('Items:');
  for (const kind of ITEM_KINDS) out.push(`  ${kind.padEnd(15)} ${fmt(report.items[kind])}`);
  out.push(`  ${'class'.padEnd(15)} ${fmt(report.classes)}`);
  out.push('Languages:');
  for (const [lang, s] of Object.entries(report.byLang)) out.push(`  ${lang.padEnd(15)} ${fmt(s.files)} files, ${fmt(s.items)} items`);
  if (report.syntaxErrorFiles.length > 0)
    out.push(
      `Files with syntax errors (indexed what parsed): ${report.syntaxErrorFiles.length}`,
      ...report.syntaxErrorFiles.slice(0, 20).map((p) => `  ${p}`),
    );
  if (report.skipped.length > 0) {
    out.push(`Skipped ${report.skipped.length} files:`);
    const width = Math.max(...report.skipped.slice(0, 50).map((s) => SKIP_REASON_TEXT[s.reason].length));
    for (const s of report.skipped.slice(0, 50))
      out.push(`  ${SKIP_REASON_TEXT[s.reason].padEnd(width)} ${s.path}${s.detail ? ` (${s.detail})` : ''}`);
    if (report.skipped.length > 50) out.push(`  ... and ${report.skipped.length - 50} more (use --json for all)`);
  }
  out.push(`Index: ${indexPath}`);
  return out.join('\n');
}

export const indexCommand: CliCommand = {
  name: 'index',
  usage:
    'index <repo> [--json] [--index-dir DIR] [--exclude GLOB]... [--max-file-bytes N] [--max-files N (default 50000)] ' +
    '[--force (index the home folder or /)]',
  async run(argv, signal) {
    const { values, positionals } = parseCommandArgs(argv, indexOptions);
    if (positionals.length !== 1) throw new UsageError('expected exactly one repository folder');
    const repo = requireRepo(positionals[0]);
    const { kb, report } = await indexedKnowledgeBase(repo, values, signal);
    const indexPath = indexFilePath(indexFolderFor(cacheRoot(values['index-dir'] as string | undefined), repo));
    if (values.json) process.stdout.write(JSON.stringify({ repo, indexPath, ...report }, null, 2) + '\n');
    else process.stdout.write(formatReport(repo, report, indexPath) + '\n');
    kb.dispose();
    return 0;
  },
};

// `coderag bench fetch|build`: get benchmark repositories (Debian sources) and mine cross-file
// completion cases from them in CCEval's line format (docs/BENCHMARKS.md).
import { existsSync, promises as fs, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { CliCommand } from '../command';
import { parseCommandArgs, positiveInt, UsageError } from '../command';
import { openKnowledgeBase, parsers, progressPrinter } from '../context';
import { fetchPackages, parsePackageList, type FetchResult } from '../../bench/fetch';
import { listRepositories, mineRepository, type MineTask } from '../../bench/mine';
import { readCases, writeCases, type BenchCase } from '../../bench/cases';
import { midLineCases } from '../../bench/midLine';
import type { Lang } from '../../engine/kb/types';
import { errorMessage, UserError } from '../../engine/util/errors';

const FETCH_USAGE = 'bench fetch <list-file> <dest-dir> [--json]';
const BUILD_USAGE =
  'bench build --repos DIR --lang python|java --task line|body|dot --per-repo N --seed S --out cases.jsonl [--index-dir DIR] [--json]';
const MIDLINE_USAGE = 'bench midline --cases cases.jsonl --out mid.jsonl';

async function fetchCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { json: { type: 'boolean' } });
  if (positionals.length !== 2) throw new UsageError(`expected a list file and a destination folder\nusage: coderag ${FETCH_USAGE}`);
  const [listFile, dest] = positionals as [string, string];
  let text: string;
  try {
    text = await fs.readFile(listFile, 'utf8');
  } catch {
    throw new UserError(`package list not found: ${listFile}`);
  }
  let packages: string[];
  try {
    packages = parsePackageList(text);
  } catch (e) {
    throw new UserError(`${listFile}: ${errorMessage(e)}`);
  }
  if (packages.length === 0) throw new UserError(`${listFile} names no packages`);
  if (existsSync(dest) && !statSync(dest).isDirectory()) throw new UserError(`destination is not a folder: ${dest}`);
  const json = values.json === true;
  const line = (r: FetchResult): string => {
    if (r.status === 'failed') return `  failed  ${r.package}: ${r.reason ?? 'unknown reason'}`;
    if (r.status === 'cached') return `  cached  ${r.package} (already unpacked in ${r.folder})`;
    return `  ok      ${r.package} <- ${r.tarball}${r.note ? ` (note: ${r.note})` : ''}`;
  };
  const results = await fetchPackages({
    packages,
    dest,
    onResult: (r) => {
      if (!json) process.stdout.write(line(r) + '\n');
    },
    onStep: (m) => process.stderr.write(`${m}\n`),
  });
  const failed = results.filter((r) => r.status === 'failed').length;
  if (json) process.stdout.write(JSON.stringify({ dest: resolve(dest), results }, null, 2) + '\n');
  else
    process.stdout.write(
      `${results.length - failed}/${results.length} packages ready in ${resolve(dest)}${failed > 0 ? `, ${failed} failed` : ''}\n`,
    );
  return failed > 0 ? 1 : 0;
}

async function buildCommand(argv: string[], signal: AbortSignal): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, {
    repos: { type: 'string' },
    lang: { type: 'string' },
    task: { type: 'string' },
    'per-repo': { type: 'string' },
    seed: { type: 'string' },
    out: { type: 'string' },
    'index-dir': { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const reposDir = values.repos as string | undefined;
  const out = values.out as string | undefined;
  if (!reposDir) throw new UsageError('--repos is required');
  if (!out) throw new UsageError('--out is required');
  const lang = values.lang as string | undefined;
  if (lang !== 'python' && lang !== 'java') throw new UsageError('--lang must be python or java');
  const task = (values.task as string | undefined) ?? 'line';
  if (task !== 'line' && task !== 'body' && task !== 'dot') throw new UsageError('--task must be line, body or dot');
  const perRepo = positiveInt(values, 'per-repo');
  if (perRepo === undefined) throw new UsageError('--per-repo is required');
  const seed = (values.seed as string | undefined) ?? '0';
  if (!existsSync(reposDir) || !statSync(reposDir).isDirectory()) throw new UserError(`repositories folder not found: ${reposDir}`);
  const outDir = dirname(resolve(out));
  if (!existsSync(outDir)) throw new UserError(`output folder does not exist: ${outDir}`);

  const repos = await listRepositories(reposDir);
  if (repos.length === 0) throw new UserError(`no repository folders under ${reposDir}`);
  const p = await parsers();
  const all: BenchCase[] = [];
  const report: { repository: string; files: number; candidates: number; cases: number; indexMs: number; mineMs: number }[] = [];
  for (const name of repos) {
    const start = performance.now();
    const kb = await openKnowledgeBase(resolve(reposDir, name), { indexDir: values['index-dir'] as string | undefined });
    const progress = progressPrinter(`indexing ${name}`);
    await kb.index((x) => progress.update(x), signal);
    progress.done();
    const indexMs = performance.now() - start;
    const mined = await mineRepository(kb, p, name, { lang: lang as Lang, task: task as MineTask, perRepo, seed }, signal);
    kb.dispose();
    all.push(...mined.cases);
    report.push({
      repository: name,
      files: mined.files,
      candidates: mined.candidates,
      cases: mined.cases.length,
      indexMs,
      mineMs: mined.elapsedMs,
    });
    if (!values.json) {
      process.stderr.write(
        `${name}: ${mined.files} ${lang} files, ${mined.candidates} ${task} candidates, ${mined.cases.length} cases ` +
          `(index ${(indexMs / 1000).toFixed(1)} s, mine ${(mined.elapsedMs / 1000).toFixed(1)} s)\n`,
      );
    }
  }
  await writeCases(out, all);
  if (values.json)
    process.stdout.write(
      JSON.stringify({ out: resolve(out), lang, task, perRepo, seed, repositories: report, cases: all.length }, null, 2) + '\n',
    );
  else process.stdout.write(`wrote ${all.length} ${task} cases from ${repos.length} repositories to ${out}\n`);
  return 0;
}

/** `bench midline`: the mid-line variants of line cases (cursor inside the first repository name the line uses). */
async function midLineCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(argv, { cases: { type: 'string' }, out: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const casesFile = values.cases as string | undefined;
  const out = values.out as string | undefined;
  if (!casesFile || !out) throw new UsageError(`--cases and --out are required\nusage: coderag ${MIDLINE_USAGE}`);
  const cases = await readCases(casesFile);
  const mid = midLineCases(cases);
  await writeCases(out, mid);
  process.stdout.write(
    `wrote ${mid.length} mid-line cases (of ${cases.length}; the others use no cross-file name on their line) to ${out}\n`,
  );
  return 0;
}

export const benchCommand: CliCommand = {
  name: 'bench',
  usage:
    `bench fetch <list-file> <dest-dir> | bench build --repos DIR --lang python|java --task line|body|dot ` +
    `--per-repo N --seed S --out FILE | ${MIDLINE_USAGE}`,
  async run(argv, signal) {
    const [sub, ...rest] = argv;
    if (sub === 'fetch') return fetchCommand(rest);
    if (sub === 'build') return buildCommand(rest, signal);
    if (sub === 'midline') return midLineCommand(rest);
    throw new UsageError(
      sub
        ? `unknown subcommand "${sub}" (expected fetch, build or midline)\n  ${FETCH_USAGE}\n  ${BUILD_USAGE}\n  ${MIDLINE_USAGE}`
        : `expected a subcommand\n  ${FETCH_USAGE}\n  ${BUILD_USAGE}\n  ${MIDLINE_USAGE}`,
    );
  },
};

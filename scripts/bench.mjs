// `npm run bench`: the standard comparison on the dev repositories (docs/BENCHMARKS.md). Fetches
// the Debian sources listed in bench/lists/dev-{python,java}.txt into a gitignored cache,
// mines cross-file line cases with a fixed seed, runs `coderag eval compare` per language, and
// writes the report under bench-out/ (gitignored).
//
// Usage: npm run bench -- [--generate] [--dense] [--per-repo N] [--seed S] [--methods m1,m2] [--query probe|last3|last10]
//                         [--lang python|java] [--repos-python DIR] [--repos-java DIR] [--out DIR]
// Default: retrieval only (recall@10, coverage@10, per-path timings), 8 cases per repository;
// --generate adds completions by the embedded model (EM/ES) and takes much longer.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = resolve(new URL('..', import.meta.url).pathname);
const { values } = parseArgs({
  options: {
    generate: { type: 'boolean', default: false },
    dense: { type: 'boolean', default: false },
    'per-repo': { type: 'string', default: '8' },
    seed: { type: 'string', default: '1' },
    methods: { type: 'string' },
    query: { type: 'string', default: 'probe' },
    lang: { type: 'string', multiple: true },
    'repos-python': { type: 'string' },
    'repos-java': { type: 'string' },
    out: { type: 'string' },
  },
  strict: true,
});

// The dense path embeds every item of every repository once (~33k items for the dev set: about
// half an hour on 2 busy cores, then cached in .coderag-cache/bench/index): opt in with --dense.
const RETRIEVAL_METHODS = values.dense ? 'rg1,draco,s,d,df,df+s,df+s+d' : 'rg1,draco,s,df,df+s';
const GENERATION_METHODS = values.dense ? 'zero-shot,rg1,repocoder,draco,df+s,df+s+d' : 'zero-shot,rg1,repocoder,draco,df+s';
const methods = values.methods ?? (values.generate ? GENERATION_METHODS : RETRIEVAL_METHODS);
const langs = values.lang ?? ['python', 'java'];
const cache = join(root, '.coderag-cache', 'bench');
const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const outDir = resolve(values.out ?? join(root, 'bench-out', stamp));
const cli = join(root, 'bin', 'coderag.js');

function run(args, what) {
  process.stderr.write(`\n$ coderag ${args.join(' ')}\n`);
  const started = Date.now();
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    process.stderr.write(r.stdout ?? '');
    throw new Error(`${what} failed (exit ${r.status})`);
  }
  process.stderr.write(`(${what}: ${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  return r.stdout;
}

function ensureBuilt() {
  if (existsSync(join(root, 'dist', 'cli.js'))) return;
  process.stderr.write('building the CLI (dist/cli.js)...\n');
  const r = spawnSync(process.execPath, [join(root, 'esbuild.config.mjs')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('the build failed: run `node esbuild.config.mjs` and fix what it reports');
}

ensureBuilt();
mkdirSync(outDir, { recursive: true });
const started = Date.now();
const sections = [];
for (const lang of langs) {
  if (lang !== 'python' && lang !== 'java') throw new Error(`--lang must be python or java, got ${lang}`);
  let repos = values[`repos-${lang}`];
  if (!repos) {
    repos = join(cache, `repos-${lang}`);
    const list = join(root, 'bench', 'lists', `dev-${lang}.txt`);
    if (!existsSync(list)) throw new Error(`package list not found: ${list} (or pass --repos-${lang} DIR)`);
    // Cached and idempotent: a second run only checks the folders.
    run(['bench', 'fetch', list, repos], `fetch ${lang} repositories`);
  }
  const cases = join(outDir, `cases-${lang}.jsonl`);
  const index = join(cache, 'index');
  run(['bench', 'build', '--repos', repos, '--lang', lang, '--task', 'line', '--per-repo', values['per-repo'], '--seed', values.seed, '--index-dir', index, '--out', cases], `mine ${lang} cases`);
  const dir = join(outDir, lang);
  const args = ['eval', 'compare', '--cases', cases, '--repos', repos, '--methods', methods, '--query', values.query, '--index-dir', index, '--out', dir, '--quiet', '--title', `Dev repositories, ${lang}`];
  if (!values.generate) args.push('--no-generate');
  else args.push('--generator', 'embedded');
  run(args, `compare on ${lang}`);
  sections.push({ lang, report: readFileSync(join(dir, 'report.md'), 'utf8'), chart: `${lang}/chart.svg` });
}

const minutes = ((Date.now() - started) / 60000).toFixed(1);
const summary = [
  '# CodeRAG bench',
  '',
  `${new Date().toISOString()}; ${values.generate ? 'with generation (embedded model)' : 'retrieval only'}; methods ${methods}; query ${values.query}; ${values['per-repo']} cases per repository, seed ${values.seed}; ${minutes} min.`,
  '',
  'How to read it: recall@10 = share of each case\'s cross-file definitions whose file and name appear in the first 10 contexts;',
  'full@10 = share of cases with all of them; coverage@10 = share of the names found in any context; EM/ES/ID-EM/ID-F1',
  'only mean something with --generate. Timings: median / p95 ms per stage on this machine.',
  '',
  ...sections.flatMap((s) => [s.report, '', `![${s.lang} chart](${s.chart})`, '']),
].join('\n');
writeFileSync(join(outDir, 'README.md'), summary);
process.stdout.write(summary + '\n');
process.stdout.write(`\nReport: ${join(outDir, 'README.md')} (charts: ${sections.map((s) => join(outDir, s.chart)).join(', ')})\n`);

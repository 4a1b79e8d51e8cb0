// `npm run bench:defaults`: every default that has alternatives, measured on the VALIDATION
// repositories (bench/lists/validation-{python,java}.txt) with the shipped models. Fetches the
// repositories into a gitignored cache, mines line, dot and body cases with fixed seeds, runs
// `coderag eval compare --methods product` once per alternative (product with one setting changed)
// and records one dated table with the model files' hashes: bench/defaults/latest.json and
// docs/defaults/DEFAULTS-<date>.md (docs/BENCHMARKS-history.md "Defaults chosen on validation repositories").
//
// Usage: npm run bench:defaults -- [--lang python|java] [--only product,check,prior,...] [--every line=4,dot=2,body=4]
//          [--repos-python DIR] [--repos-java DIR] [--cases-dir DIR] [--index-dir DIR] [--out DIR] [--no-record]
// A run is resumable: an alternative whose scores.json exists under --out is read, not run again;
// --no-run only reads (a table of what a cut-short run finished, the rest left out and listed in its notes).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PIPELINE_DEFAULTS } from '../src/engine/pipeline/defaults';
import { DEFAULT_SHOW_LEVEL, gateOptionsOf, SHOW_LEVELS, type ShowLevel } from '../src/engine/gate/levels';
import { defaultsRow, formatDefaultsMarkdown, modelHashes, type DefaultsRow, type DefaultsTask } from '../src/bench/defaultsTable';
import type { ScoreReport } from '../src/bench/score';
import { BODY_COMPOSES } from '../src/bench/variants/bodyCompose';

const root = resolve(__dirname, '..');
const { values } = parseArgs({
  options: {
    lang: { type: 'string', multiple: true },
    only: { type: 'string' },
    every: { type: 'string' },
    'repos-python': { type: 'string' },
    'repos-java': { type: 'string' },
    'cases-dir': { type: 'string' },
    'index-dir': { type: 'string' },
    out: { type: 'string' },
    'no-record': { type: 'boolean', default: false },
    'no-run': { type: 'boolean', default: false },
  },
  strict: true,
});

/** Cases per repository and the seed of each task (the validation cases of docs/BENCHMARKS.md). */
const MINE: Record<DefaultsTask, { perRepo: number; seed: number }> = {
  line: { perRepo: 40, seed: 3 },
  dot: { perRepo: 15, seed: 3 },
  body: { perRepo: 10, seed: 3 },
};

interface Alternative {
  /** The setting's name in the table (`check=off`). */
  name: string;
  setting: string;
  tasks: DefaultsTask[];
  args: string[];
}

// The share is measured with a perspective on: the default's own, or lexical (what `auto` turns on where it turns one on).
const similarOn =
  PIPELINE_DEFAULTS.similar.mode === 'off' || PIPELINE_DEFAULTS.similar.mode === 'auto' ? 'lexical' : PIPELINE_DEFAULTS.similar.mode;

/** Each setting's alternatives; the default's value is the `product` row itself. */
const SETTINGS: Array<{ setting: string; tasks: DefaultsTask[]; values: string[]; current: string; args: (v: string) => string[] }> = [
  {
    setting: 'check',
    tasks: ['line', 'dot'],
    values: ['constrain', 'repair', 'off'],
    current: PIPELINE_DEFAULTS.check.mode,
    args: (v) => ['--check', v],
  },
  {
    setting: 'prior',
    tasks: ['line', 'dot'],
    values: ['0', '8', '32'],
    current: typeof PIPELINE_DEFAULTS.check.prior === 'number' ? String(PIPELINE_DEFAULTS.check.prior) : 'per language',
    args: (v) => ['--check-prior', v],
  },
  {
    setting: 'similar',
    tasks: ['line'],
    values: ['auto', 'off', 'lexical', 'hypothetical', 'summary', 'union', 'bandit'],
    current: PIPELINE_DEFAULTS.similar.mode,
    args: (v) => ['--similar', v],
  },
  {
    // The share only matters with similar code on: measured with the mode on (the table's notes say which).
    setting: 'similar-share',
    tasks: ['line'],
    values: ['0.15', '0.3'],
    current:
      PIPELINE_DEFAULTS.similar.mode === similarOn || PIPELINE_DEFAULTS.similar.mode === 'auto'
        ? String(PIPELINE_DEFAULTS.similar.promptShare)
        : '',
    args: (v) => ['--similar', similarOn, '--similar-share', v],
  },
  {
    setting: 'query',
    tasks: ['line'],
    values: ['probe', 'last3', 'last10'],
    current: PIPELINE_DEFAULTS.query.strategy,
    args: (v) => ['--query', v],
  },
  {
    setting: 'compose',
    tasks: ['body'],
    values: [...BODY_COMPOSES],
    // The product composes in turns (engine/body/rambo.ts composeInTurns).
    current: 'turns',
    args: (v) => ['--body-compose', v],
  },
  {
    // coderag.suggestions.show: each level is a threshold of the show gate; `all` turns it off.
    setting: 'show',
    tasks: ['line', 'body'],
    values: [...SHOW_LEVELS],
    current: DEFAULT_SHOW_LEVEL,
    args: (v) => {
      const g = gateOptionsOf(v as ShowLevel);
      return g.mode === 'off'
        ? ['--gate', 'off']
        : ['--gate', 'on', '--gate-threshold', String(g.threshold), '--gate-body-threshold', String(g.bodyThreshold)];
    },
  },
];

const ALTERNATIVES: Alternative[] = [
  { name: 'product', setting: 'product', tasks: ['line', 'dot', 'body'], args: [] },
  ...SETTINGS.flatMap((s) =>
    s.values
      .filter((v) => v !== s.current)
      .map((v) => ({ name: `${s.setting}=${v}`, setting: s.setting, tasks: s.tasks, args: s.args(v) })),
  ),
];
/** Body cases also run the baselines body mode must beat; line cases CodeRAG's method without the right context. */
const BASELINES: Record<DefaultsTask, string[]> = { line: ['df+s+d+dr'], dot: [], body: ['rg1', 'zero-shot'] };

const only = values.only?.split(',').map((s) => s.trim());
// `--only similar` also picks `similar-share`.
const chosen = ALTERNATIVES.filter((a) => !only || only.some((o) => a.name === o || a.setting.startsWith(o)));
const every: Record<string, number> = Object.fromEntries(
  (values.every ?? '').split(',').flatMap((kv) => {
    const [k, v] = kv.split('=');
    return k && v ? [[k, Number(v)]] : [];
  }),
);
const langs = (values.lang ?? ['python', 'java']) as Array<'python' | 'java'>;
const cache = join(root, '.coderag-cache', 'bench');
const index = resolve(values['index-dir'] ?? join(cache, 'index'));
const outDir = resolve(values.out ?? join(root, 'bench-out', `defaults-${new Date().toISOString().slice(0, 10)}`));
const cli = join(root, 'bin', 'coderag.js');

function run(args: string[], what: string): void {
  process.stderr.write(`\n$ coderag ${args.join(' ')}\n`);
  const started = Date.now();
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status})`);
  process.stderr.write(`(${what}: ${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
}

if (!existsSync(join(root, 'dist', 'cli.js'))) {
  const r = spawnSync(process.execPath, [join(root, 'esbuild.config.mjs')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('the build failed: run `node esbuild.config.mjs` and fix what it reports');
}
mkdirSync(outDir, { recursive: true });
const started = Date.now();
const rows: DefaultsRow[] = [];
const notRun: string[] = [];
const counts: Record<string, number> = {};
for (const lang of langs) {
  let repos = values[`repos-${lang}`];
  if (!repos) {
    repos = join(cache, `val-repos-${lang}`);
    run(['bench', 'fetch', join(root, 'bench', 'lists', `validation-${lang}.txt`), repos], `fetch ${lang} validation repositories`);
  }
  for (const task of ['line', 'dot', 'body'] as const) {
    const alts = chosen.filter((a) => a.tasks.includes(task));
    if (alts.length === 0) continue;
    let cases = values['cases-dir'] ? join(values['cases-dir'], `val-${lang}-${task}.jsonl`) : join(outDir, `val-${lang}-${task}.jsonl`);
    if (!existsSync(cases)) {
      const { perRepo, seed } = MINE[task];
      const args = ['--repos', repos, '--lang', lang, '--task', task, '--per-repo', String(perRepo), '--seed', String(seed)];
      run(['bench', 'build', ...args, '--index-dir', index, '--out', cases], `mine ${lang} ${task} cases`);
    }
    const k = every[task] ?? 1;
    if (k > 1) {
      const kept = readFileSync(cases, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .filter((_, i) => i % k === 0);
      cases = join(outDir, `val-${lang}-${task}-every${k}.jsonl`);
      writeFileSync(cases, kept.join('\n') + '\n');
    }
    counts[`${lang} ${task}`] = readFileSync(cases, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '').length;
    for (const alt of alts) {
      const dir = join(outDir, `${task}-${lang}-${alt.name.replace(/[^A-Za-z0-9._-]/g, '_')}`);
      const methods = alt.name === 'product' ? ['product', ...BASELINES[task]] : ['product'];
      if (!existsSync(join(dir, 'scores.json')) && values['no-run']) {
        notRun.push(`${lang} ${task} ${alt.name}`);
        continue;
      }
      if (!existsSync(join(dir, 'scores.json'))) {
        const args = ['eval', 'compare', '--methods', methods.join(','), '--cases', cases, '--repos', repos, '--index-dir', index];
        run([...args, '--generator', 'embedded', '--out', dir, '--quiet', ...alt.args], `${lang} ${task} ${alt.name}`);
      }
      const scores = JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8')) as {
        rows: Array<{ method: string; group: string } & ScoreReport>;
      };
      // Baselines come from the product's run only (an alternative's folder may hold them too).
      for (const r of scores.rows.filter((x) => x.group === lang && (alt.name === 'product' || x.method === 'product'))) {
        const name = r.method === 'product' ? alt.name : r.method;
        rows.push(defaultsRow(name, task, lang, r.overall, r.timings_ms.total?.median ?? null));
      }
    }
  }
}

const date = new Date().toISOString().slice(0, 10);
const table = {
  date,
  models: modelHashes(join(root, 'models')),
  command: `npm run bench:defaults -- ${process.argv.slice(2).join(' ')}`.trim(),
  cases: counts,
  rows,
  notes: [
    values['no-run']
      ? 'Read from the finished runs under --out (--no-run); generator: the embedded model.'
      : `${((Date.now() - started) / 60000).toFixed(1)} min on this machine; generator: the embedded model.`,
    ...(notRun.length > 0 ? [`Not run (time): ${notRun.join(', ')}.`] : []),
    `similar-share rows run with similar=${similarOn}; line rows \`df+s+d+dr\` and body rows \`rg1\`, \`zero-shot\` are baselines, not settings.`,
  ],
};
const markdown = formatDefaultsMarkdown(table);
writeFileSync(join(outDir, 'defaults.json'), JSON.stringify(table, null, 2) + '\n');
writeFileSync(join(outDir, 'DEFAULTS.md'), markdown);
if (!values['no-record']) {
  mkdirSync(join(root, 'bench', 'defaults'), { recursive: true });
  mkdirSync(join(root, 'docs', 'defaults'), { recursive: true });
  writeFileSync(join(root, 'bench', 'defaults', 'latest.json'), JSON.stringify(table, null, 2) + '\n');
  writeFileSync(join(root, 'docs', 'defaults', `DEFAULTS-${date}.md`), markdown);
}
process.stdout.write(markdown + '\n');
process.stdout.write(`\nwrote ${join(outDir, 'DEFAULTS.md')}${values['no-record'] ? '' : ' and recorded bench/defaults/latest.json'}\n`);

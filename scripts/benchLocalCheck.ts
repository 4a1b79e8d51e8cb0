// Checked decoding through the in-process llama.cpp engine (the `local` provider) against the ONNX
// path, on the validation dot cases as `npm run bench:defaults` mines them (15 a repository, seed 3):
// the shipped LM's GGUF with the embedded client's decoding (`--shipped-decoding`), everything else
// the embedded run's. Four arms per language, `coderag eval --method product`: ONNX checked, ONNX
// unchecked (`--check off`), local checked, local unchecked; then NIM and ES per arm, the paired
// difference local − ONNX checked with a 95% bootstrap interval over cases, and how many predictions differ.
// Java's `auto` similar code is the lexical window with the embedded model only (stages/similar.ts):
// both engines get `--similar lexical` there (what `auto` gives the embedded one), Python `off` (auto's).
//
// Usage: node --import tsx scripts/benchLocalCheck.ts --cases-dir DIR --repos-python DIR --repos-java DIR
//          [--index-dir DIR] [--gguf FILE] [--lang python|java] [--every N] [--threads 1] [--out DIR]
// Resumable: an arm whose predictions file exists under --out is read, not run again.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchCase, Prediction } from '../src/bench/cases';
import { bootstrapInterval, scoreCompletion } from '../src/bench/metrics';
import { nextIdentifierMatch } from '../src/bench/score';

const root = resolve(__dirname, '..');
const { values } = parseArgs({
  options: {
    'cases-dir': { type: 'string' },
    'repos-python': { type: 'string' },
    'repos-java': { type: 'string' },
    'index-dir': { type: 'string' },
    gguf: { type: 'string', default: join(root, 'bench', 'engine', '.cache', 'coderag-lm.f32.gguf') },
    lang: { type: 'string', multiple: true },
    every: { type: 'string', default: '1' },
    threads: { type: 'string', default: '1' },
    out: { type: 'string', default: join(root, 'bench-out', 'local-check') },
  },
  strict: true,
});

const ARMS = [
  { name: 'onnx-checked', args: ['--generator', 'embedded'] },
  { name: 'onnx-unchecked', args: ['--generator', 'embedded', '--check', 'off'] },
  { name: 'local-checked', args: ['--generator', `local:${values.gguf}`, '--shipped-decoding', '--local-threads', values.threads] },
  {
    name: 'local-unchecked',
    args: ['--generator', `local:${values.gguf}`, '--shipped-decoding', '--local-threads', values.threads, '--check', 'off'],
  },
] as const;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const f2 = (x: number): string => x.toFixed(2);
const signed = (x: number): string => (x >= 0 ? '+' : '') + x.toFixed(2);

function readJsonl<T>(file: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

const outDir = resolve(values.out);
mkdirSync(outDir, { recursive: true });
const every = Math.max(1, Number(values.every));
const langs = (values.lang ?? ['python', 'java']) as Array<'python' | 'java'>;
const cli = join(root, 'bin', 'coderag.js');
const lines: string[] = [];
const table = ['| dot cases | arm | NIM | ES |', '|---|---|---:|---:|'];
const pairs = [
  '| dot cases | local − ONNX checked NIM (95% CI) | ES (95% CI) | predictions differ | local checked − unchecked NIM (95% CI) |',
  '|---|---:|---:|---:|---:|',
];
for (const lang of langs) {
  const repos = values[`repos-${lang}`];
  if (!repos || !values['cases-dir']) throw new Error('--cases-dir and --repos-<lang> are required');
  const all = readJsonl<BenchCase>(join(values['cases-dir'], `val-${lang}-dot.jsonl`));
  const cases = all.filter((_, i) => i % every === 0);
  const casesFile = join(outDir, `val-${lang}-dot${every > 1 ? `-every${every}` : ''}.jsonl`);
  writeFileSync(casesFile, cases.map((c) => JSON.stringify(c)).join('\n') + '\n');
  const similar = lang === 'java' ? ['--similar', 'lexical'] : ['--similar', 'off'];
  const scores = new Map<string, { nim: number[]; es: number[]; preds: string[] }>();
  for (const arm of ARMS) {
    const file = join(outDir, `${lang}-${arm.name}${every > 1 ? `-every${every}` : ''}.jsonl`);
    if (!existsSync(file)) {
      const args = ['eval', '--method', 'product', '--cases', casesFile, '--repos', repos, ...similar, ...arm.args];
      const all = [...args, ...(values['index-dir'] ? ['--index-dir', values['index-dir']] : []), '--out', `${file}.part`, '--quiet'];
      process.stderr.write(`$ coderag ${all.join(' ')}\n`);
      const started = Date.now();
      const r = spawnSync(process.execPath, [cli, ...all], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
      if (r.status !== 0) throw new Error(`${lang} ${arm.name} failed (exit ${r.status})`);
      writeFileSync(file, readFileSync(`${file}.part`));
      process.stderr.write(`(${lang} ${arm.name}: ${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
    }
    const byTask = new Map(readJsonl<Prediction>(file).map((p) => [p.task_id, p]));
    const preds = cases.map((c) => byTask.get(c.metadata.task_id)?.prediction ?? '');
    scores.set(arm.name, {
      preds,
      nim: cases.map((c, i) => (nextIdentifierMatch(preds[i]!, c.groundtruth) ? 100 : 0)),
      es: cases.map((c, i) => scoreCompletion(preds[i], c.groundtruth, lang).es),
    });
    const s = scores.get(arm.name)!;
    table.push(`| ${lang} (${cases.length}) | ${arm.name} | ${f2(mean(s.nim))} | ${f2(mean(s.es))} |`);
  }
  const onnx = scores.get('onnx-checked')!;
  const local = scores.get('local-checked')!;
  const localOff = scores.get('local-unchecked')!;
  const dNim = local.nim.map((x, i) => x - onnx.nim[i]!);
  const dEs = local.es.map((x, i) => x - onnx.es[i]!);
  const dCheck = local.nim.map((x, i) => x - localOff.nim[i]!);
  const ci = (d: number[]): string => {
    const [lo, hi] = bootstrapInterval(d, 2000); // the mean of paired differences, 2,000 resamples of cases
    return `${signed(mean(d))} (${signed(lo)} to ${signed(hi)})`;
  };
  const differ = local.preds.filter((p, i) => p !== onnx.preds[i]).length;
  const differOff = localOff.preds.filter((p, i) => p !== scores.get('onnx-unchecked')!.preds[i]).length;
  pairs.push(`| ${lang} (${cases.length}) | ${ci(dNim)} | ${ci(dEs)} | ${differ} (unchecked: ${differOff}) | ${ci(dCheck)} |`);
}
lines.push(...table, '', ...pairs);
const report = lines.join('\n') + '\n';
writeFileSync(join(outDir, 'report.md'), report);
process.stdout.write(report);

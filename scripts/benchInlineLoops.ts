// `node --import tsx scripts/benchInlineLoops.ts [--windows 3] [--examples 30] DIR...`: how often the
// loop rules would cut REAL code, not a test. Every non-blank line of the `.py` and `.java` files under
// each DIR (trimmed, as a line suggestion would be) goes through the product's near-loop rule
// (junk.ts cutNearLoop), the older in-line rule (cutInlineLoop) and the bench's loop kind
// (bench/junk.ts); so does every window of --windows consecutive lines (a short multi-line
// suggestion), counted for the near-loop rule where neither one of its lines alone nor the rules for
// lines written three times (cutRepeatedLines, cutRecurringLine) would cut it. Prints the counts, shares and examples.
//
// `... --predictions --cases CASES.jsonl PREDS.jsonl...`: for prediction files, the share of shown
// predictions the product's junk filters would change now (filterJunk) and the bench's junk share
// before and after applying them offline to the prediction's text.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { cutInlineLoop, cutNearLoop, cutRecurringLine, cutRepeatedLines } from '../src/engine/generate/postprocess/junk';
import { filterJunk } from '../src/engine/generate/postprocess/filterJunk';
import { junkOf } from '../src/bench/junk';
import { readCases, readPredictions } from '../src/bench/cases';

const { values, positionals } = parseArgs({
  options: {
    windows: { type: 'string', default: '3' },
    examples: { type: 'string', default: '30' },
    predictions: { type: 'boolean' },
    cases: { type: 'string', multiple: true },
  },
  allowPositionals: true,
});

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) yield* sourceFiles(path);
    else if (st.isFile() && /\.(py|java)$/.test(name) && st.size < 2_000_000) yield path;
  }
}

const pct = (a: number, b: number): string => `${((100 * a) / Math.max(1, b)).toFixed(4)}%`;

interface Tally {
  n: number;
  cut: number;
  examples: string[];
}
const tally = (): Tally => ({ n: 0, cut: 0, examples: [] });
const maxExamples = Number(values.examples);
function note(t: Tally, hit: boolean, example: () => string): void {
  t.n++;
  if (!hit) return;
  t.cut++;
  if (t.examples.length < maxExamples) t.examples.push(example());
}

function realLines(dirs: readonly string[]): void {
  const span = Number(values.windows);
  for (const dir of dirs) {
    const near = tally();
    const inline = tally();
    const bench = tally();
    const nearWin = tally();
    const olderWin = tally();
    const benchWin = tally();
    let files = 0;
    const t0 = Date.now();
    for (const file of sourceFiles(dir)) {
      files++;
      const where = relative(dir, file);
      const lines = readFileSync(file, 'utf8').split('\n');
      const nearCut: boolean[] = [];
      const benchCut: boolean[] = [];
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!.trim();
        nearCut.push(false);
        benchCut.push(false);
        if (line === '') continue;
        const c = cutNearLoop(line);
        nearCut[i] = c.cut !== undefined;
        note(near, nearCut[i]!, () => `${where}:${i + 1}: ${line.slice(0, 160)}   [${c.cut!.note.split(' (')[0]}]`);
        note(inline, cutInlineLoop(line).cut !== undefined, () => `${where}:${i + 1}: ${line.slice(0, 160)}`);
        benchCut[i] = junkOf(line, '', false).includes('loop');
        note(bench, benchCut[i]!, () => `${where}:${i + 1}: ${line.slice(0, 160)}`);
      }
      for (let i = 0; i + span <= lines.length; i++) {
        const window = lines.slice(i, i + span);
        if (window.every((l) => l.trim() === '')) continue;
        // Indentation as a suggestion has it: relative to the window's first line.
        const indent = /^\s*/.exec(window[0]!)![0].length;
        const text = window.map((l) => l.slice(Math.min(indent, /^\s*/.exec(l)![0].length))).join('\n');
        const alone = (cut: boolean[]): boolean => cut.slice(i, i + span).some(Boolean);
        const older = cutRepeatedLines(text).cut !== undefined || cutRecurringLine(text).cut !== undefined;
        note(olderWin, older, () => `${where}:${i + 1}: ${JSON.stringify(text).slice(0, 200)}`);
        const c = cutNearLoop(text);
        note(nearWin, c.cut !== undefined && !alone(nearCut) && !older, () => `${where}:${i + 1}: ${JSON.stringify(text).slice(0, 200)}   [${c.cut!.note.split(' (')[0]}]`);
        note(benchWin, junkOf(text, '', false).includes('loop') && !alone(benchCut), () => `${where}:${i + 1}: ${JSON.stringify(text).slice(0, 200)}`);
      }
    }
    console.log(`\n## ${dir}: ${files} files, ${near.n} non-blank lines, ${nearWin.n} windows of ${span} lines (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    const rows: [string, Tally][] = [
      ['product near loop (cutNearLoop), lines', near],
      ['product in-line loop (cutInlineLoop), lines', inline],
      ['bench loop kind, lines', bench],
      [`product lines written three times (cutRepeatedLines, cutRecurringLine), ${span}-line windows`, olderWin],
      [`product near loop, ${span}-line windows (no line alone cut, nor by the line rules)`, nearWin],
      [`bench loop kind, ${span}-line windows (no line alone cut)`, benchWin],
    ];
    for (const [what, t] of rows) console.log(`- ${what}: ${t.cut} of ${t.n} (${pct(t.cut, t.n)})`);
    for (const [what, t] of rows) {
      if (t.examples.length === 0) continue;
      console.log(`\n### ${what}: examples`);
      for (const e of t.examples) console.log(`    ${e}`);
    }
  }
}

async function predictions(files: readonly string[]): Promise<void> {
  const rightContext = new Map<string, string>();
  for (const f of values.cases ?? []) for (const c of await readCases(f)) rightContext.set(c.metadata.task_id, c.right_context ?? '');
  console.log('| predictions | shown | changed by the junk filters now | of them by the near-loop rule | bench junk before | bench junk after | bench loop before → after |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const file of files) {
    let shown = 0;
    let changed = 0;
    let near = 0;
    let junkBefore = 0;
    let junkAfter = 0;
    let loopBefore = 0;
    let loopAfter = 0;
    const examples: string[] = [];
    for (const p of await readPredictions(file)) {
      if (p.prediction.trim() === '' || p.shown === false) continue;
      shown++;
      const right = rightContext.get(p.task_id) ?? '';
      const before = junkOf(p.prediction, right, p.unknown_member);
      const filtered = filterJunk(p.prediction);
      const after = filtered.text.trim() === '' ? [] : junkOf(filtered.text, right, p.unknown_member);
      if (filtered.text !== p.prediction) changed++;
      if (filtered.cuts.some((c) => c.rule === 'nearRepeat')) {
        near++;
        examples.push(`${p.task_id}: ${JSON.stringify(p.prediction).slice(0, 200)} -> ${JSON.stringify(filtered.text).slice(0, 80)}`);
      }
      if (before.length > 0) junkBefore++;
      if (after.length > 0) junkAfter++;
      if (before.includes('loop')) loopBefore++;
      if (after.includes('loop')) {
        loopAfter++;
        examples.push(`${p.task_id}: the bench still counts a loop in ${JSON.stringify(filtered.text).slice(0, 200)}`);
      }
    }
    console.log(
      `| ${file} | ${shown} | ${changed} (${pct(changed, shown)}) | ${near} | ${junkBefore} (${pct(junkBefore, shown)}) | ${junkAfter} (${pct(junkAfter, shown)}) | ${loopBefore} → ${loopAfter} |`,
    );
    for (const e of examples) console.log(`    ${e}`);
  }
}

/**
 * The near-loop rule's time on the longest text it reads, where it must follow long chains of copies
 * from every start: the first call (a cold start), then the median and the slowest of 50 more.
 */
function worstCase(): void {
  const texts = {
    'near copies, each naming something new (kept)': Array.from({ length: 80 }, (_, i) => `self.fx.a${i}, `).join(''),
    'one word written again and again (cut)': 'a '.repeat(500),
    'a loop with variations (cut)': 'int min = max; int min = max; int max = min; int min = max; int min = max + 1; '.repeat(12),
  };
  for (const [what, text] of Object.entries(texts)) {
    const times: number[] = [];
    let cut = false;
    for (let k = 0; k < 51; k++) {
      const t0 = process.hrtime.bigint();
      cut = cutNearLoop(text).cut !== undefined;
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const warm = times.slice(1).sort((a, b) => a - b);
    const ms = (t: number): string => `${t.toFixed(1)} ms`;
    console.log(`- ${what}, ${text.length} characters: ${ms(times[0]!)} cold, ${ms(warm[25]!)} median, ${ms(warm.at(-1)!)} at most, ${cut ? 'cut' : 'kept'}`);
  }
}

if (positionals.length === 0) throw new Error('usage: benchInlineLoops.ts [--windows 3] DIR... | --predictions [--cases F] PREDS.jsonl...');
if (values.predictions) void predictions(positionals);
else {
  worstCase();
  realLines(positionals);
}

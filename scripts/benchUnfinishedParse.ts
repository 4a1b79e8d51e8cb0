// `node --import tsx scripts/benchUnfinishedParse.ts CASES.jsonl...`: what one parse of the
// unfinished file per request saves, not a test. For each dot case it runs the analyses
// a line-mode request with checking asks for: dataflow retrieval at the cursor, then receiver typing
// at the dereference (the prefix cut before the receiver). Separate: each stage with its own
// UnfinishedAnalyses, as before the request shared one; shared: one for both. The two are
// interleaved over several rounds; it prints the parses and the median / p95 ms per request.
// `--typing` (line cases): the ground-truth line typed one character at a time (at most 40), each
// keystroke one request at the cursor; per request: a new UnfinishedAnalyses each time, as one
// request makes; kept: the one a pipeline keeps across requests (4 texts).
import { parseArgs } from 'node:util';
import type { Parser } from 'web-tree-sitter';
import { grammarsDir } from '../test/helpers/paths';
import { caseLang, readCases } from '../src/bench/cases';
import { findDereference } from '../src/engine/check/receiverMembers';
import { UnfinishedAnalyses } from '../src/engine/flow/unfinished';
import { loadParsers, type Parsers } from '../src/engine/kb/parsers';

const { values, positionals } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, typing: { type: 'boolean', default: false } }, allowPositionals: true });

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

async function main(): Promise<void> {
  const real = await loadParsers(grammarsDir);
  let parses = 0;
  const parsers: Parsers = {
    language: (lang) => real.language(lang),
    parser: (lang) => {
      const p = real.parser(lang);
      return { parse: (text: string) => (parses++, p.parse(text)) } as unknown as Parser;
    },
  };
  if (values.typing) return typing(parsers, () => parses);
  const requests: Array<{ path: string; lang: 'python' | 'java'; prefix: string; atReceiver: string }> = [];
  for (const file of positionals) {
    for (const c of await readCases(file)) {
      const lang = caseLang(c);
      const deref = lang ? findDereference(c.prompt, lang) : undefined;
      if (!lang || !deref) continue;
      const cut = c.prompt.length - deref.partial.length - 1 - deref.receiver.length;
      requests.push({ path: c.metadata.file, lang, prefix: c.prompt, atReceiver: c.prompt.slice(0, cut) });
    }
  }
  const ms = { separate: [] as number[], shared: [] as number[] };
  const parsed = { separate: 0, shared: 0 };
  const rounds = Number(values.rounds);
  for (let round = 0; round < rounds; round++) {
    for (const r of requests) {
      for (const how of round % 2 === 0 ? (['separate', 'shared'] as const) : (['shared', 'separate'] as const)) {
        const before = parses;
        const start = performance.now();
        const first = new UnfinishedAnalyses();
        first.analyse(parsers, r.path, r.lang, r.prefix);
        (how === 'shared' ? first : new UnfinishedAnalyses()).analyse(parsers, r.path, r.lang, r.atReceiver);
        ms[how].push(performance.now() - start);
        if (round === 0) parsed[how] += parses - before;
      }
    }
  }
  console.log(`${requests.length} requests (dot cases), ${rounds} rounds interleaved`);
  console.log('| analyses | parses per request | median ms | p95 ms |');
  console.log('|---|---:|---:|---:|');
  for (const how of ['separate', 'shared'] as const)
    console.log(
      `| ${how} | ${(parsed[how] / requests.length).toFixed(2)} | ${quantile(ms[how], 0.5).toFixed(2)} | ${quantile(ms[how], 0.95).toFixed(2)} |`,
    );
}

async function typing(parsers: Parsers, parseCount: () => number): Promise<void> {
  const lines: Array<{ path: string; lang: 'python' | 'java'; prefix: string; line: string }> = [];
  for (const file of positionals) {
    for (const c of await readCases(file)) {
      const lang = caseLang(c);
      const line = c.groundtruth.split('\n')[0] ?? '';
      if (lang && line.trim() !== '') lines.push({ path: c.metadata.file, lang, prefix: c.prompt, line: line.slice(0, 40) });
    }
  }
  const ms = { 'per request': [] as number[], kept: [] as number[] };
  const parsed = { 'per request': 0, kept: 0 };
  let requests = 0;
  const rounds = Number(values.rounds);
  for (let round = 0; round < rounds; round++) {
    for (const l of lines) {
      for (const how of round % 2 === 0 ? (['per request', 'kept'] as const) : (['kept', 'per request'] as const)) {
        const kept = new UnfinishedAnalyses({ keep: 4 });
        for (let k = 0; k <= l.line.length; k++) {
          const before = parseCount();
          const start = performance.now();
          (how === 'kept' ? kept : new UnfinishedAnalyses()).analyse(parsers, l.path, l.lang, l.prefix + l.line.slice(0, k));
          ms[how].push(performance.now() - start);
          if (round === 0) {
            parsed[how] += parseCount() - before;
            if (how === 'kept') requests++;
          }
        }
      }
    }
  }
  console.log(`${lines.length} lines typed (${requests} keystrokes, a request each), ${rounds} rounds interleaved`);
  console.log('| analyses | parses per request | median ms | p95 ms |');
  console.log('|---|---:|---:|---:|');
  for (const how of ['per request', 'kept'] as const)
    console.log(`| ${how} | ${(parsed[how] / requests).toFixed(2)} | ${quantile(ms[how], 0.5).toFixed(2)} | ${quantile(ms[how], 0.95).toFixed(2)} |`);
}

void main();

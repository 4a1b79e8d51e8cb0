// `node --import tsx scripts/benchDataflow.ts --repos DIR --index-dir DIR CASES.jsonl [--rounds 4]`:
// where the dataflow path's time goes per request, not a test. For each case, on the
// knowledge base indexed in --index-dir: the prefix made parseable (folded), its import header
// (text, parse, extraction), the parse of the folded text, the dataflow graph, the chains used
// above, the names and words of the code lines, and the resolution with and without those chains.
// Round 1 is one pass over all the cases, run while V8 still compiles (as the eval's one pass
// does); the later rounds are warm. It also counts how many of the chains' prefixes (a, a.b, a.b.c) repeat within a
// request: what a per-request cache of resolved prefixes could skip, and how many cases' parseable
// text still has syntax errors (the graph then comes from tree-sitter's error recovery).
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { caseLang, readCases, type BenchCase } from '../src/bench/cases';
import { chainText } from '../src/engine/flow/flowGraph';
import { buildJavaFlow } from '../src/engine/flow/javaFlow';
import { buildPythonFlow } from '../src/engine/flow/pythonFlow';
import { moduleHeader, parseableText, UnfinishedAnalyses } from '../src/engine/flow/unfinished';
import { extractJava } from '../src/engine/kb/extract/java';
import { extractPython } from '../src/engine/kb/extract/python';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../src/engine/kb/parsers';
import { indexFolderFor } from '../src/engine/kb/store';
import {
  attributesUsed,
  codeLines,
  NEAR_WORD_LINES,
  nearWords,
  namesUsed,
  recentChains,
} from '../src/engine/retrieve/dataflow/dataflowRetrieve';
import { FlowRanker } from '../src/engine/retrieve/dataflow/rankFlow';
import { grammarsDir } from '../test/helpers/paths';

const { values, positionals } = parseArgs({
  options: { repos: { type: 'string' }, 'index-dir': { type: 'string' }, rounds: { type: 'string', default: '4' } },
  allowPositionals: true,
});

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
}

async function main(): Promise<void> {
  if (!values.repos || !values['index-dir'] || positionals.length === 0) {
    process.stderr.write('usage: node --import tsx scripts/benchDataflow.ts --repos DIR --index-dir DIR CASES.jsonl... [--rounds 4]\n');
    process.exit(2);
  }
  const rounds = Math.max(2, Number(values.rounds) || 4);
  const parsers = await loadParsers(grammarsDir);
  const byRepo = new Map<string, BenchCase[]>();
  for (const file of positionals)
    for (const c of await readCases(file)) byRepo.set(c.metadata.repository, [...(byRepo.get(c.metadata.repository) ?? []), c]);
  // times[cold|warm][step] in ms
  const times = { cold: new Map<string, number[]>(), warm: new Map<string, number[]>() };
  let prefixes = 0;
  let repeated = 0;
  // Cases whose parseable text still has syntax errors: the graph is then read from tree-sitter's recovery.
  let parsed = 0;
  const broken: string[] = [];
  const kbs = new Map<string, KnowledgeBase>();
  for (const repo of byRepo.keys()) {
    const repoRoot = join(values.repos, repo);
    kbs.set(repo, await KnowledgeBase.open({ repoRoot, indexFolder: indexFolderFor(values['index-dir'], repoRoot), parsers }));
  }
  // One pass over every case first (as the eval makes), then the warm rounds.
  for (let round = 0; round < rounds; round++) {
    const into = round === 0 ? times.cold : times.warm;
    for (const [repo, cases] of byRepo) {
      const symbols = kbs.get(repo)!.symbols.table();
      for (const c of cases) {
        const lang = caseLang(c);
        if (!lang) continue;
        const path = c.metadata.file;
        const prefix = c.prompt;
        let t = performance.now();
        const step = (name: string): void => {
          const now = performance.now();
          into.set(name, [...(into.get(name) ?? []), now - t]);
          t = now;
        };
        // The pieces of one analysis, as UnfinishedAnalyses does them.
        const parser = parsers.parser(lang);
        const { text, cursor } = parseableText(prefix, lang);
        step('parseable text (fold)');
        const header = moduleHeader(text, lang);
        const headerTree = parser.parse(header)!;
        step('import header: text + parse');
        (lang === 'python' ? extractPython : extractJava)(headerTree, path, headerTree.rootNode.text);
        headerTree.delete();
        step('import header: extraction');
        const tree = parser.parse(text)!;
        step('parse of the folded text');
        if (round === 0) {
          parsed++;
          if (tree.rootNode.hasError) broken.push(c.metadata.task_id);
        }
        (lang === 'python' ? buildPythonFlow : buildJavaFlow)(tree.rootNode, cursor);
        tree.delete();
        step('dataflow graph');
        // The path itself, on one analysis.
        const { flow, extraction } = new UnfinishedAnalyses().analyse(parsers, path, lang, prefix);
        t = performance.now();
        const scope = { path, lang, extraction, flow };
        const recent = recentChains(prefix, lang, flow.seedLine);
        step('chains used above');
        const code = codeLines(prefix, lang);
        const used = namesUsed(code);
        const near = nearWords(code, NEAR_WORD_LINES);
        step('code lines, names, near words');
        const joined = code.join('\n');
        const attributes = (bound: string): Set<string> => attributesUsed(joined, bound);
        new FlowRanker(symbols, scope).resolve(scope, recent, used, near, attributes);
        step('resolution');
        new FlowRanker(symbols, scope).resolve(scope, [], used, near, attributes);
        step('resolution without the chains used above');
        if (round === 0) {
          const seen = new Set<string>();
          for (const chain of recent) {
            for (let i = 1; i <= chain.length; i++) {
              const key = chainText(chain.slice(0, i));
              prefixes++;
              if (seen.has(key)) repeated++;
              else seen.add(key);
            }
          }
        }
      }
    }
  }
  for (const kb of kbs.values()) kb.dispose();
  process.stdout.write(`# dataflow path per request, ms: median / p95 (cold: round 1; warm: rounds 2-${rounds})\n\n`);
  process.stdout.write('| step | cold | warm |\n|---|---:|---:|\n');
  for (const [name, cold] of times.cold) {
    const warm = times.warm.get(name) ?? [];
    const f = (xs: number[]): string => `${quantile(xs, 0.5).toFixed(2)} / ${quantile(xs, 0.95).toFixed(2)}`;
    process.stdout.write(`| ${name} | ${f(cold)} | ${f(warm)} |\n`);
  }
  process.stdout.write(
    `\nchain prefixes resolved per request: ${prefixes}, of which repeats within their request: ${repeated} (${((100 * repeated) / Math.max(1, prefixes)).toFixed(0)}%)\n`,
  );
  process.stdout.write(
    `parseable texts with syntax errors: ${broken.length} of ${parsed} cases${broken.length > 0 ? ` (${broken.slice(0, 8).join(', ')}${broken.length > 8 ? ', ...' : ''})` : ''}\n`,
  );
}

void main();

// `node --import tsx scripts/symbolsSnapshot.ts OUT.json`: what dataflow retrieval, receiver typing
// and the bench miner's cross-file analysis give on every fixture repository, as JSON, so that a
// refactoring of the symbol table and the evaluator can be diffed against the code before it (not a
// test: the positions are exhaustive, not chosen). Positions: the start of every line (line
// completion), right after every `.` (a dereference) and every `(` (a call's arguments), and a
// `self.` / `this.` typed on a new line after every line.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fixturesDir, grammarsDir } from '../test/helpers/paths';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../src/engine/kb/parsers';
import type { Lang } from '../src/engine/kb/types';
import { DataflowRetriever } from '../src/engine/retrieve/dataflow/dataflowRetrieve';
import { ReceiverTyper } from '../src/engine/check/receiverMembers';
import { lastLinesQuery } from '../src/engine/query/lastLinesQuery';
import { analyzeFile, CrossfileSymbols } from '../src/bench/crossfile';

const REPOS = ['pyshop', 'javashop', 'twocopies', 'benchrepos/minipy', 'benchrepos/minijava'];

function sourceFiles(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(root, p));
    else if (/\.(py|java)$/.test(name)) out.push(relative(root, p));
  }
  return out;
}

async function main(): Promise<void> {
  const outPath = process.argv[2] ?? 'symbols-snapshot.json';
  const parsers = await loadParsers(grammarsDir);
  const signal = new AbortController().signal;
  const snapshot: Record<string, unknown> = {};
  for (const repo of REPOS) {
    const root = join(fixturesDir, repo);
    const kb = await KnowledgeBase.open({ repoRoot: root, parsers });
    await kb.index(undefined, new AbortController().signal);
    const retriever = new DataflowRetriever(kb, parsers);
    const typer = new ReceiverTyper(kb, parsers);
    const mined = new CrossfileSymbols(kb);
    const files: Record<string, unknown> = {};
    for (const path of sourceFiles(root)) {
      const lang: Lang = path.endsWith('.java') ? 'java' : 'python';
      const text = readFileSync(join(root, path), 'utf8').replace(/\r\n?/g, '\n');
      const lines = text.split('\n');
      const retrieval: Record<string, unknown> = {};
      const receivers: Record<string, unknown> = {};
      const calls: Record<string, unknown> = {};
      const at = async (key: string, prefix: string): Promise<void> => {
        const r = await retriever.retrieve({ file: { path, lang, prefix }, query: lastLinesQuery(prefix, 10), topJ: 15 }, signal);
        retrieval[key] = { results: r.results.map((x) => [x.snippet.id, Number(x.score.toFixed(6)), x.reason ?? '', x.lead === true]), notes: r.notes };
      };
      let offset = 0;
      for (let l = 0; l < lines.length; l++) {
        await at(`L${l + 1}`, text.slice(0, offset));
        const line = lines[l]!;
        const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
        const tail = `${text.slice(0, offset + line.length)}\n${indent}${lang === 'python' ? 'self.' : 'this.'}`;
        const m = typer.membersAt({ path, lang, prefix: tail }, signal);
        if (m) receivers[`L${l + 1}+self`] = { entities: m.entities, names: [...m.names].sort() };
        for (let c = 0; c < line.length; c++) {
          const prefix = text.slice(0, offset + c + 1);
          if (line[c] === '.') {
            await at(`L${l + 1}:${c + 1}`, prefix);
            const r = typer.membersAt({ path, lang, prefix }, signal);
            receivers[`L${l + 1}:${c + 1}`] = r ? { receiver: r.receiver, entities: r.entities, names: [...r.names].sort() } : null;
          } else if (line[c] === '(') {
            const s = typer.callAt({ path, lang, prefix }, signal);
            if (s) calls[`L${l + 1}:${c + 1}`] = s;
          }
        }
        offset += line.length + 1;
      }
      const analysis = analyzeFile(mined, kb, parsers, path, lang, text);
      files[path] = {
        retrieval,
        receivers,
        calls,
        mined: {
          defsByRow: [...analysis.defsByRow].sort((a, b) => a[0] - b[0]),
          excludedRows: [...analysis.excludedRows].sort((a, b) => a - b),
          functions: analysis.functions,
        },
      };
    }
    retriever.dispose();
    typer.dispose();
    kb.dispose();
    snapshot[repo] = files;
  }
  writeFileSync(outPath, JSON.stringify(snapshot, null, 1) + '\n');
  console.log(`wrote ${outPath}`);
}

void main();

// `node --import tsx scripts/benchRenderings.ts [--max-files N] DIR...`: what a knowledge item costs in a
// prompt as today's stub text (the whole definition) and as renderKnowledge.ts renders it (compact,
// string values masked), per language and item kind: median and p90 of estimateTokens, and the time per
// rendered snippet; beside it, the string masker's time and a tree-sitter parse of the same text (why
// the masker is a lexer). Each DIR is a folder of repositories (e.g. /work/bench/repos/dev-python).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { grammarsDir } from '../test/helpers/paths';
import { loadParsers } from '../src/engine/kb/parsers';
import { extractFile } from '../src/engine/kb/extract';
import type { Lang } from '../src/engine/kb/types';
import { snippetOfItem } from '../src/engine/retrieve/types';
import { estimateTokens } from '../src/engine/prompt/fitPromptBudget';
import { renderSnippet } from '../src/engine/prompt/renderKnowledge';
import { maskStrings } from '../src/engine/prompt/maskStrings';

const { values, positionals } = parseArgs({ options: { 'max-files': { type: 'string', default: '400' } }, allowPositionals: true });
const maxFiles = Number(values['max-files']);

function sourceFiles(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || name === 'node_modules') continue;
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue; // a broken link
    }
    if (st.isDirectory()) sourceFiles(p, out);
    else if (/\.(py|java)$/.test(name) && st.size < 300_000) out.push(p);
  }
  return out;
}

function q(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
}

/** Without the stub's `# path` line, as today's snippetForPrompt shows it. */
function oldText(text: string): string {
  const nl = text.indexOf('\n');
  return /^\s*(#|\/\/)\s*\S+\s*$/.test(text.slice(0, nl)) ? text.slice(nl + 1) : text;
}

void (async () => {
  const parsers = await loadParsers(grammarsDir);
  for (const dir of positionals) {
    // Every repository of the set contributes, up to maxFiles files spread evenly.
    const all = sourceFiles(dir, []);
    const step = Math.max(1, Math.ceil(all.length / maxFiles));
    const files = all.filter((_, i) => i % step === 0);
    const rows = new Map<string, { old: number[]; now: number[] }>();
    let renderMs = 0;
    let maskMs = 0;
    let parseMs = 0;
    let n = 0;
    let lang: Lang = 'python';
    for (const file of files) {
      lang = file.endsWith('.java') ? 'java' : 'python';
      const x = extractFile(parsers, lang, relative(dir, file), readFileSync(file, 'utf8'));
      for (const item of x.items) {
        const snippet = snippetOfItem(item);
        const before = oldText(item.text);
        let t = performance.now();
        const shown = renderSnippet(snippet).text;
        renderMs += performance.now() - t;
        t = performance.now();
        maskStrings(before, lang);
        maskMs += performance.now() - t;
        t = performance.now();
        parsers.parser(lang).parse(before)?.delete();
        parseMs += performance.now() - t;
        n++;
        for (const key of [item.kind, 'all']) {
          const row = rows.get(key) ?? { old: [], now: [] };
          row.old.push(estimateTokens(before));
          row.now.push(estimateTokens(shown));
          rows.set(key, row);
        }
      }
    }
    console.log(`\n${dir}: ${files.length} of ${all.length} files, ${n} items`);
    console.log('kind | n | today median / p90 | rendered median / p90 | total tokens, rendered / today');
    for (const [kind, r] of [...rows].sort()) {
      const sum = (v: number[]): number => v.reduce((a, b) => a + b, 0);
      console.log(
        `${kind} | ${r.old.length} | ${q(r.old, 0.5)} / ${q(r.old, 0.9)} | ${q(r.now, 0.5)} / ${q(r.now, 0.9)} | ${(sum(r.now) / sum(r.old)).toFixed(2)}`,
      );
    }
    console.log(
      `per snippet: render ${((renderMs / n) * 1000).toFixed(0)} us, mask ${((maskMs / n) * 1000).toFixed(0)} us, tree-sitter parse ${((parseMs / n) * 1000).toFixed(0)} us`,
    );
  }
})();

// `node --import tsx scripts/benchOtherFileValues.ts --cases F --repos DIR [--limit N] [--index-dir DIR] [--out LIST.md]`:
// what of other files reaches a model server, by construction. `coderag eval --method product` (the editor's
// defaults) runs the cases against the capturing test model server as an Ollama model; every context a
// prediction holds (another file's code as the prompt showed it) that is found in a captured request is read
// for what stayed as written: each string literal that was not masked, with the shape it was kept for
// (maskStrings.keepReason), and each comment or docstring line. Printed: the counts per kind and reason, and
// the distinct kept literals of each reason; `--out` writes every kept literal and documentation line with
// its reason and file. A literal or line the detector (redactGeneric) would still change is flagged.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { keptText } from '../src/engine/prompt/maskStrings';
import { redactGeneric } from '../src/engine/prompt/secretRules';
import { langOfPath } from '../src/engine/prompt/renderKnowledge';
import { startOllamaTestServer } from '../test/helpers/ollamaServer';
import { requestText } from '../test/helpers/otherFileRepo';
import { repoRoot } from '../test/helpers/paths';

const MODEL = 'qwen2.5-coder:1.5b-base';

interface Prediction {
  task_id: string;
  contexts: Array<{ path: string; text: string }>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cases: { type: 'string', multiple: true },
      repos: { type: 'string', multiple: true },
      limit: { type: 'string', default: '40' },
      'index-dir': { type: 'string' },
      out: { type: 'string' },
    },
  });
  const cases = values.cases ?? [];
  const repos = values.repos ?? [];
  if (cases.length === 0 || cases.length !== repos.length) throw new Error('give --cases F --repos DIR, once per language');
  const server = await startOllamaTestServer(() => Promise.resolve({ text: 'x' }), { models: [MODEL] });
  const dir = mkdtempSync(join(tmpdir(), 'coderag-other-values-'));
  const rows: Array<{ kind: string; text: string; reason: string; path: string; flagged: boolean }> = [];
  let contexts = 0;
  let reached = 0;
  try {
    for (let i = 0; i < cases.length; i++) {
      const out = join(dir, `preds-${i}.jsonl`);
      const args = ['eval', '--method', 'product', '--generator', `ollama:${MODEL}`, '--ollama-host', server.url];
      args.push('--cases', cases[i]!, '--repos', repos[i]!, '--limit', values.limit!, '--out', out);
      if (values['index-dir']) args.push('--index-dir', values['index-dir']);
      const before = server.requests.length;
      // Asynchronously: the capturing server answers from this process.
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
        child.on('error', reject);
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`coderag eval exited ${code}`))));
      });
      const sent = requestText(server.requests.slice(before));
      for (const line of readFileSync(out, 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        const p = JSON.parse(line) as Prediction;
        for (const c of p.contexts) {
          contexts++;
          if (!sent.includes(c.text)) continue;
          reached++;
          for (const k of keptText(c.text, langOfPath(c.path)))
            rows.push({ ...k, path: c.path, flagged: redactGeneric(k.kind === 'literal' ? `x = "${k.text}"` : `# ${k.text}`).count > 0 });
        }
      }
    }
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`${contexts} contexts of other files in the predictions, ${reached} found in a captured request\n`);
  const groups = new Map<string, Set<string>>();
  const counts = new Map<string, number>();
  for (const r of rows) {
    const key = `${r.kind}: ${r.reason}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (!groups.has(key)) groups.set(key, new Set());
    groups.get(key)!.add(r.text);
  }
  console.log('| kind: why kept | occurrences | distinct |');
  console.log('|---|---:|---:|');
  for (const [key, n] of [...counts].sort()) console.log(`| ${key} | ${n} | ${groups.get(key)!.size} |`);
  for (const [key, set] of [...groups].sort())
    if (key.startsWith('literal')) console.log(`\n${key}: ${[...set].map((v) => JSON.stringify(v)).join(', ')}`);
  const flagged = rows.filter((r) => r.flagged);
  console.log(`\nkept text the detector would still change: ${flagged.length}${flagged.map((r) => `\n  ${r.path}: ${r.text}`).join('')}`);
  if (values.out) {
    const lines = rows.map((r) => `| ${r.kind} | ${r.reason} | ${r.path} | ${r.text.replace(/\|/g, '\\|').slice(0, 200)} |`);
    writeFileSync(values.out, ['| kind | why kept | file | text |', '|---|---|---|---|', ...[...new Set(lines)]].join('\n') + '\n');
  }
}

void main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);

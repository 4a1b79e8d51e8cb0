// Prompt recall: how often the prompt the product sends to a Qwen2.5-Coder model through Ollama,
// at default settings, holds every cross-file definition a line case needs (each definition's
// name in a snippet from its file), beside the reranked top ten's recall. The model server
// answers at once with nothing (a prompt is built the same whatever the answer), so the figure is
// the prompt's alone and a thousand cases take minutes.
//
// Usage: node --import tsx scripts/benchPromptRecall.ts --cases F.jsonl --repos DIR [--index-dir DIR]
//   [--cli OTHER/bin/coderag.js] [--model qwen2.5-coder:1.5b-base] [--out DIR] [--read-rate TOKENS_PER_S: prompts laid out as for
//   a server of that speed; default: what the server's answers measure] [--session first|paused: each repository's cases as the
//   places of one editor session, a pause at each; the prompt before the pause or after it]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { bootstrapInterval } from '../src/bench/metrics';
import { startOllamaTestServer } from '../test/helpers/ollamaServer';

const root = resolve(__dirname, '..');

interface Prediction {
  task_id: string;
  contexts?: Array<{ path: string; text: string }>;
}
interface CaseLine {
  metadata: { task_id: string; crossfile_defs?: Array<{ name: string; file: string }> };
}

function holds(text: string, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_$])${name.replace(/\$/g, '\\$')}([^A-Za-z0-9_$]|$)`).test(text);
}

/** Per case with definitions: whether every one is in a context of its file (the first `k` contexts). */
export function fullRecall(cases: readonly CaseLine[], predictions: readonly Prediction[], k = Infinity): boolean[] {
  const byTask = new Map(predictions.map((p) => [p.task_id, p]));
  return cases
    .filter((c) => (c.metadata.crossfile_defs ?? []).length > 0)
    .map((c) => {
      const contexts = (byTask.get(c.metadata.task_id)?.contexts ?? []).slice(0, k);
      return c.metadata.crossfile_defs!.every((d) => contexts.some((x) => x.path === d.file && holds(x.text, d.name)));
    });
}

/** 95% bootstrap interval of a share over cases (1,000 resamples, fixed seed). */
export function bootstrap(hits: readonly boolean[], seed = 1): [number, number] {
  return bootstrapInterval(hits.map((h) => (h ? 1 : 0)), 1000, seed);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cases: { type: 'string' },
      repos: { type: 'string' },
      'index-dir': { type: 'string' },
      cli: { type: 'string', multiple: true, default: [] },
      model: { type: 'string', default: 'qwen2.5-coder:1.5b-base' },
      out: { type: 'string' },
      'read-rate': { type: 'string' },
      session: { type: 'string' },
    },
  });
  if (!values.cases || !values.repos) throw new Error('usage: benchPromptRecall.ts --cases F.jsonl --repos DIR [--cli PATH ...]');
  const server = await startOllamaTestServer(async () => ({ text: '' }), { models: [values.model] });
  const out = values.out ?? mkdtempSync(join(tmpdir(), 'coderag-prompt-recall-'));
  mkdirSync(out, { recursive: true });
  const cases = readFileSync(values.cases, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as CaseLine);
  const clis = values.cli.length > 0 ? values.cli : [join(root, 'bin', 'coderag.js')];
  try {
    // Each build's prompt, then the reranked top ten of the last build without a prompt (retrieval recall@10).
    const runs = [...clis.map((cli) => ({ cli, generate: true })), { cli: clis.at(-1)!, generate: false }];
    for (const [i, { cli, generate }] of runs.entries()) {
      const file = join(out, `predictions-${i}.jsonl`);
      // Asynchronous: the model server answers from this process.
      const status = await new Promise<number | null>((done) => {
        const child = spawn(
          process.execPath,
          [
            cli,
            'eval',
            '--cases',
            values.cases,
            '--repos',
            values.repos,
            '--method',
            'product',
            ...(generate ? ['--generator', `ollama:${values.model}`] : ['--no-generate']),
            '--ollama-host',
            server.url,
            '--out',
            file,
            ...(values['index-dir'] ? ['--index-dir', values['index-dir']] : []),
            ...(values['read-rate'] ? ['--read-rate', values['read-rate']] : []),
            ...(values.session ? ['--session', values.session] : []),
          ],
          { stdio: ['ignore', 'inherit', 'inherit'] },
        );
        child.on('exit', (code) => done(code));
      });
      if (status !== 0) throw new Error(`${cli} eval exited ${status}`);
      const predictions = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Prediction);
      const inPrompt = fullRecall(cases, predictions, generate ? Infinity : 10);
      const share = inPrompt.filter(Boolean).length / inPrompt.length;
      const [lo, hi] = bootstrap(inPrompt);
      console.log(
        `${cli}: every definition in the prompt in ${(100 * share).toFixed(1)}% of ${inPrompt.length} cases (95% CI ${(100 * lo).toFixed(1)}-${(100 * hi).toFixed(1)})`,
      );
    }
  } finally {
    await server.close();
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : String(e));
    process.exit(1);
  });
}

// A moving session's requests as a llama.cpp server got them (scripts/benchMoving.ts --llama-url --json), read
// in the same order into the in-process engine (llama.cpp through node-llama-cpp, with the saved places the
// `local` provider keeps): the same prompts and the same warm-ups, so the tokens each engine read at a place
// compare their caches alone, whatever prompt layout each client would have chosen for itself.
//
//   node --import tsx scripts/replayMoving.ts --records OUT.json --gguf F.gguf [--threads 1] [--ctx 8192]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LlamaEngine } from '../src/engine/models/LlamaEngine';
import type { MoveRecord } from './benchMoving';

const PLACES = ['the first place', 'another function', 'a file of the package', 'back at the first place'];

interface PlaceRead {
  lang: string;
  task: string;
  place: number;
  /** The suggestion's prompt tokens, as the server counted them. */
  prompt: number;
  server: number;
  local: number;
  restored: boolean;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      records: { type: 'string' },
      gguf: { type: 'string' },
      threads: { type: 'string', default: '1' },
      ctx: { type: 'string', default: '8192' },
    },
  });
  if (!values.records || !values.gguf) throw new Error('usage: replayMoving.ts --records OUT.json --gguf F.gguf [--threads N] [--ctx N]');
  const records = JSON.parse(readFileSync(values.records, 'utf8')) as MoveRecord[];
  const signal = new AbortController().signal;
  const reads: PlaceRead[] = [];
  for (const task of [...new Set(records.map((r) => r.task))]) {
    // A fresh engine a case, as each case has a fresh language server.
    const states = mkdtempSync(join(tmpdir(), 'coderag-replay-'));
    const engine = new LlamaEngine({
      modelPath: values.gguf,
      threads: Number(values.threads),
      contextTokens: Number(values.ctx),
      gpu: false,
      stateDir: states,
    });
    try {
      // A place's read: every request from its first key up to its first answered suggestion (benchMoving's rule).
      const open = new Map<number, PlaceRead>();
      const done = new Set<number>();
      for (const r of records.filter((x) => x.task === task)) {
        let place = open.get(r.place);
        if (!place && !done.has(r.place)) {
          place = { lang: r.lang, task, place: r.place, prompt: 0, server: 0, local: 0, restored: false };
          open.set(r.place, place);
        }
        for (const sent of r.requests ?? []) {
          const read =
            sent.maxTokens <= 1
              ? await engine.warm(sent.prompt, signal)
              : (await engine.generate(sent.prompt, { maxNewTokens: Math.min(sent.maxTokens, 16) }, signal)).read;
          if (!place || !sent.counted) continue;
          place.server += sent.evaluatedTokens;
          place.local += read.evaluated;
          place.restored ||= read.restored;
        }
        if (place && r.promptTokens > 0) {
          place.prompt = r.promptTokens;
          reads.push(place);
          open.delete(r.place);
          done.add(r.place);
        }
      }
    } finally {
      await engine.unload();
      rmSync(states, { recursive: true, force: true });
    }
    process.stderr.write(`${task}: replayed\n`);
  }
  const rows = ['| case | place | prompt | llama-server read (share) | in-process read (share) |', '|---|---|---:|---:|---:|'];
  for (const p of reads)
    rows.push(
      `| ${p.task} | ${p.place}, ${PLACES[p.place - 1]} | ${p.prompt} | ${p.server} (${(p.server / p.prompt).toFixed(3)}) | ` +
        `${p.local} (${(p.local / p.prompt).toFixed(3)})${p.restored ? ', restored' : ''} |`,
    );
  console.log(rows.join('\n'));
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.stack : String(e));
    process.exit(1);
  });
}

// Latency of the shipped models through the engine's loader (run: npx tsx models/training/bench_latency.ts [threads]).
// Prints medians over repeated runs: one 256-token forward pass, a batch of 16, probing, generation, embedding.
import { join } from 'node:path';
import { ModelRegistry } from '../../src/engine/models';

const threads = Number(process.argv[2] ?? 2);
const repeats = Number(process.argv[3] ?? 7);

async function median(fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

async function main(): Promise<void> {
  const registry = new ModelRegistry({ modelsDir: join(__dirname, '..'), threads });
  const lm = await registry.causalLM();
  const enc = await registry.encoder();
  const ids = Array.from({ length: 256 }, (_, i) => (i * 37) % (lm.vocabSize - 1));
  const text = 'def f(x):\n    return x + 1\n'.repeat(40);
  const encIds = lm.encode(text).slice(0, 256);
  const rows: Record<string, number> = {
    'lm load ms': lm.timings.loadMs,
    'lm forward 1x256 ms': await median(() => lm.logitsNext([ids])),
    'lm forward 16x256 ms': await median(() => lm.logitsNext(Array.from({ length: 16 }, () => ids))),
    'lm greedyProbe 16 prompts x 5 steps ms': await median(() => lm.greedyProbe(Array.from({ length: 16 }, (_, i) => `x${i} = compute(a, b)\nif x${i}:\n    `), 5)),
    'lm generate ms/token (32 tokens after 256-token prompt)': (await median(() => lm.generate(lm.decode(ids), { maxNewTokens: 32 }))) / 32,
    'encoder forward 1x256 ms': await median(() => enc.embed([lm.decode(encIds)])),
    'encoder forward 16x256 ms': await median(() => enc.embed(Array.from({ length: 16 }, (_, i) => `${i}` + lm.decode(encIds)))),
  };
  process.stdout.write(`threads=${threads} repeats=${repeats}\n`);
  for (const [k, v] of Object.entries(rows)) process.stdout.write(`${k.padEnd(58)} ${v.toFixed(1)}\n`);
  await registry.dispose();
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exit(1);
});

// Prompt-processing speed of the engine on random-weight GGUFs with Qwen2.5-Coder-0.5B and -1.5B
// shapes: a 2,000-token prompt from scratch, then one that shares its first 1,800 tokens.
// Usage: node --import tsx bench/engine/speed.ts [--threads 1] [--sizes 0.5b,1.5b] [--no-flash-attention]
import { statSync } from 'node:fs';
import { fixtureCode } from './fixtureCode';
import { cacheDir, randomQwenGguf, repoRoot, type QwenSize } from './models';
import { startEngineServer, type EngineServer } from './server';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};

/** The longest start of `text` with at most `tokens` tokens. */
function prefixOfTokens(server: EngineServer, text: string, tokens: number): string {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (server.tokenize(text.slice(0, mid)).length <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo);
}

async function completion(url: string, prompt: string): Promise<void> {
  const res = await fetch(`${url}/completion`, {
    method: 'POST',
    body: JSON.stringify({ prompt, n_predict: 1, temperature: 0, cache_prompt: true }),
  });
  if (!res.ok) throw new Error(`/completion answered ${res.status}: ${await res.text()}`);
  await res.json();
}

async function main(): Promise<void> {
  const threads = Number(arg('--threads', '1'));
  const flashAttention = !process.argv.includes('--no-flash-attention');
  const sizes = arg('--sizes', '0.5b,1.5b').split(',') as QwenSize[];
  const text = fixtureCode(repoRoot);
  for (const size of sizes) {
    const t0 = performance.now();
    const file = await randomQwenGguf(size);
    const writeS = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const server = await startEngineServer({ modelPath: file, threads, contextSize: 4096, modelNames: [size], flashAttention });
    const loadS = (performance.now() - t1) / 1000;
    try {
      const full = prefixOfTokens(server, text, 2000);
      const shared = prefixOfTokens(server, full, 1800);
      const other = text.slice(full.length + 1000);
      const second = shared + prefixOfTokens(server, other, 2000 - server.tokenize(shared).length);
      await completion(server.url, full);
      await completion(server.url, second);
      const [a, b] = server.stats();
      const speed = (s: typeof a): string => `${((1000 * s!.evaluatedTokens) / s!.ttftMs).toFixed(1)} tok/s`;
      console.log(
        JSON.stringify({
          model: `random Qwen2.5-Coder-${size} shapes, Q8_0`,
          file: file.replace(cacheDir, 'bench/engine/.cache'),
          fileMB: Math.round(statSync(file).size / 1e6),
          writeS: Number(writeS.toFixed(1)),
          loadS: Number(loadS.toFixed(1)),
          threads,
          flashAttention,
          scratch: { ...a, promptSpeed: speed(a) },
          reused: { ...b, promptSpeed: speed(b) },
        }),
      );
    } finally {
      await server.close();
    }
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});

// `node --import tsx scripts/benchRedactionCost.ts [--repos DIR ...] [--prompts 100]`: what redaction costs a
// prompt, measured, not a test. Prompts of 7,000 and 28,000 characters (about 2,048 and 8,192 tokens, the
// window of a slow and of a fast model server) are cut from the .py and .java files under the repositories,
// each made unique so that the boundary's cache does not answer; each goes once through redactSecrets (the
// project's rules, then secretlint's preset: what the boundary runs on every prompt) after a warm-up. Printed:
// the median, p90 and p99 milliseconds per prompt, and the same for the project's rules alone.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { redactGeneric, redactSecrets } from '../src/engine/prompt/redact';

function sourceFiles(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const s = statSync(p, { throwIfNoEntry: false });
    if (s?.isDirectory() && !name.startsWith('.') && name !== 'node_modules') sourceFiles(p, out);
    else if (s?.isFile() && /\.(py|java)$/.test(name) && s.size < 200_000) out.push(p);
  }
  return out;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { repos: { type: 'string', multiple: true }, prompts: { type: 'string', default: '100' } } });
  const files = (values.repos ?? []).flatMap((d) => sourceFiles(d, []));
  if (files.length === 0) throw new Error('give --repos DIR (folders of .py and .java files)');
  let seed = 11;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  await redactSecrets('warm = 1');
  for (const size of [7000, 28000]) {
    const prompts: string[] = [];
    for (let k = 0; k < Number(values.prompts); k++) {
      let text = '';
      while (text.length < size) text += `${readFileSync(files[Math.floor(next() * files.length)]!, 'utf8').slice(0, 6000)}\n`;
      prompts.push(`${text.slice(0, size)}\n# prompt ${size}-${k}`);
    }
    const boundary: number[] = [];
    const own: number[] = [];
    for (const p of prompts) {
      let t0 = performance.now();
      redactGeneric(p);
      own.push(performance.now() - t0);
      t0 = performance.now();
      await redactSecrets(p);
      boundary.push(performance.now() - t0);
    }
    const row = (xs: number[]): string =>
      `median ${quantile(xs, 0.5).toFixed(2)}, p90 ${quantile(xs, 0.9).toFixed(2)}, p99 ${quantile(xs, 0.99).toFixed(2)} ms`;
    console.log(`${size} characters, ${prompts.length} prompts: the boundary ${row(boundary)}; the project's rules alone ${row(own)}`);
  }
}

void main();

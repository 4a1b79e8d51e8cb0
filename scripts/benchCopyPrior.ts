// `node --import tsx scripts/benchCopyPrior.ts --cases FILE [--limit 16]`: per-step cost of the
// embedded model's copy prior, not a test. For each case's code before the cursor (the prompt: its
// last 1,800 characters, about the embedded model's window; the file above it to copy from: the
// last 32,000 characters, as the pipeline passes), the embedded model writes 32 tokens with the
// copy prior on and off; it prints the median time per decoding step of each, the copy prior's
// own share (built and then voting and mixing alone on the same text) and how often the two
// outputs differ.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { repoRoot } from '../test/helpers/paths';
import { ModelRegistry } from '../src/engine/models';
import { EmbeddedClient } from '../src/engine/generate/EmbeddedClient';
import { CopyPrior, TokenLookup } from '../src/engine/generate/copyPrior';
import { embeddedLMOf } from '../src/engine/index/pipelineAdapters';

const { values } = parseArgs({ options: { cases: { type: 'string' }, limit: { type: 'string', default: '16' } } });
if (!values.cases) throw new Error('--cases FILE (a case file in the format of docs/BENCHMARKS.md) is required');
const prompts = readFileSync(values.cases, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .slice(0, Number(values.limit))
  .map((l) => (JSON.parse(l) as { prompt: string }).prompt)
  .map((file) => ({ prompt: file.slice(-1800), above: file.slice(-32000) }));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

void (async () => {
  const lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
  const signal = new AbortController().signal;
  const on = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
  const off = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)), copyPrior: false });
  const lookup = new TokenLookup(lm.tokenTexts());
  const perStep = { on: [] as number[], off: [] as number[], prior: [] as number[] };
  let differ = 0;
  await on.generate({ prompt: prompts[0]!.prompt, maxNewTokens: 4, stop: [] }, signal);
  for (const { prompt, above } of prompts) {
    const a = await off.generate({ prompt, maxNewTokens: 32, stop: [] }, signal);
    const b = await on.generate({ prompt, copyFrom: above, maxNewTokens: 32, stop: [] }, signal);
    const steps = (text: string): number => Math.max(1, lm.encode(text).length);
    perStep.off.push(a.elapsedMs / steps(a.text));
    perStep.on.push(b.elapsedMs / steps(b.text));
    if (a.text !== b.text) differ++;
    // The prior alone: built once per request, then one vote and mix per generated prefix.
    const logits = new Float32Array(lm.vocabSize);
    const start = performance.now();
    const prior = new CopyPrior(prompt, lookup, undefined, above);
    const n = Math.max(1, b.text.length);
    let applied = 0;
    for (let k = 0; k < n; k += Math.ceil(n / 32), applied++) prior.apply(b.text.slice(0, k), logits.fill(0));
    perStep.prior.push((performance.now() - start) / applied);
  }
  console.log(
    `${prompts.length} prompts; ms per decoding step, median: copy prior off ${median(perStep.off).toFixed(2)}, on ${median(perStep.on).toFixed(2)}; the prior alone ${median(perStep.prior).toFixed(2)} (${((100 * median(perStep.prior)) / median(perStep.off)).toFixed(1)}% of a step); outputs differ in ${differ} of ${prompts.length}`,
  );
})();

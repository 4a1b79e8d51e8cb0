// `node --import tsx scripts/benchCheck.ts [--runs N]`: per-step overhead of checked decoding
// not a test. The shipped embedded model completes at dereferences and calls of the pyshop and
// javashop fixtures with `check: constrain` and `off`; it prints, per case, the decoding steps, the
// model's time per step, the constraint's time per step (token mask and receiver typing of
// generated dots) and its share of the step, and the first identifiers written with and without
// the constraint. The first run of each case warms the model and the mask vocabulary; the figures
// are the median of the later runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fixturesDir, grammarsDir, repoRoot } from '../test/helpers/paths';
import { KnowledgeBase } from '../src/engine/kb/KnowledgeBase';
import { loadParsers } from '../src/engine/kb/parsers';
import { ModelRegistry } from '../src/engine/models';
import { EmbeddedClient } from '../src/engine/generate/EmbeddedClient';
import { createPipeline, resolveOptions, type CheckMode } from '../src/engine/pipeline';
import { createRepositoryIndex } from '../src/engine/index/repositoryIndex';
import { embeddedLMOf } from '../src/engine/index/pipelineAdapters';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '4' } } });
const runs = Math.max(2, Number(values.runs));

const JAVA = 'src/main/java/com/example/shop';
const CASES: Array<{ fixture: 'pyshop' | 'javashop'; path: string; line: number; tail: string }> = [
  { fixture: 'pyshop', path: 'app/main.py', line: 18, tail: '    cart.' },
  { fixture: 'pyshop', path: 'app/main.py', line: 18, tail: '    gateway.' },
  { fixture: 'pyshop', path: 'pyshop/services/checkout.py', line: 30, tail: '        self.' },
  { fixture: 'javashop', path: `${JAVA}/service/CheckoutService.java`, line: 30, tail: '            String id = gateway.' },
  { fixture: 'javashop', path: `${JAVA}/App.java`, line: 14, tail: '        Cart cart = new Cart("ann");\n        cart.' },
  // Calls: the arguments of a repository constructor (the call guide).
  { fixture: 'pyshop', path: 'app/main.py', line: 18, tail: '    service = CheckoutService(' },
  { fixture: 'javashop', path: `${JAVA}/App.java`, line: 18, tail: '        CheckoutService service = new CheckoutService(' },
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

async function main(): Promise<void> {
  const parsers = await loadParsers(grammarsDir);
  const lm = await new ModelRegistry({ modelsDir: join(repoRoot, 'models'), threads: 2 }).causalLM(undefined, new AbortController().signal);
  const model = new EmbeddedClient({ load: () => Promise.resolve(embeddedLMOf(lm)) });
  const t0 = performance.now();
  lm.tokenTexts?.();
  console.log(`vocabulary texts (${lm.vocabSize} ids, once per model): ${(performance.now() - t0).toFixed(0)} ms`);
  const kbs = new Map<string, { kb: KnowledgeBase; paths: ReturnType<typeof createRepositoryIndex> }>();
  for (const fixture of ['pyshop', 'javashop']) {
    const kb = await KnowledgeBase.open({ repoRoot: join(fixturesDir, fixture), parsers });
    await kb.index(undefined, new AbortController().signal);
    kbs.set(fixture, { kb, paths: createRepositoryIndex(kb, parsers, { paths: ['sparse', 'dataflow'] }) });
  }
  console.log('case | mode | steps | model ms/step | constraint ms/step (of it: typing generated dots) | share | written');
  const shares: number[] = [];
  for (const c of CASES) {
    const { paths } = kbs.get(c.fixture)!;
    const lines = readFileSync(join(fixturesDir, c.fixture, c.path), 'utf8').split('\n');
    const prefix = `${lines.slice(0, c.line).join('\n')}\n${c.tail}`;
    for (const mode of ['off', 'constrain'] as CheckMode[]) {
      const pipeline = createPipeline(resolveOptions({ query: { strategy: 'last10' }, generate: { maxNewTokens: 16 }, check: { mode } }), {
        env: { repo: { retrievers: paths.retrievers, receivers: paths.receivers }, model: model },
      });
      const perStep: number[] = [];
      const maskPerStep: number[] = [];
      const resolvePerStep: number[] = [];
      let written = '';
      let steps = 0;
      for (let r = 0; r < runs; r++) {
        const { trace } = await pipeline.complete(
          { filePath: c.path, lang: c.path.endsWith('.java') ? 'java' : 'python', prefix, suffix: '\n' },
          new AbortController().signal,
        );
        const raw = trace.model?.raw ?? '';
        written = /^[\w$]*/.exec(raw)?.[0] ?? '';
        steps = trace.check?.steps ?? lm.encode(raw).length;
        const maskMs = trace.check?.maskMs ?? 0;
        if (r === 0 || steps === 0) continue;
        perStep.push(((trace.model?.elapsedMs ?? 0) - maskMs) / steps);
        maskPerStep.push(maskMs / steps);
        resolvePerStep.push((trace.check?.resolveMs ?? 0) / steps);
      }
      const share = mode === 'constrain' ? median(maskPerStep) / median(perStep) : 0;
      if (mode === 'constrain') shares.push(share);
      console.log(
        `${c.fixture} ${c.tail.trim().split('\n').at(-1)} | ${mode} | ${steps} | ${median(perStep).toFixed(1)} | ${mode === 'constrain' ? `${median(maskPerStep).toFixed(2)} (${median(resolvePerStep).toFixed(2)})` : '-'} | ${mode === 'constrain' ? `${(share * 100).toFixed(1)}%` : '-'} | ${written}`,
      );
    }
  }
  console.log(`median constraint share of a decoding step: ${(median(shares) * 100).toFixed(1)}%`);
  for (const { kb, paths } of kbs.values()) {
    paths.dispose();
    kb.dispose();
  }
  await lm.dispose();
}

void main();

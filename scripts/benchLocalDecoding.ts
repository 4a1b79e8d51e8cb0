// Cost per generated token of LlamaEngine's two decoding paths: llama.cpp's own greedy choice, and
// the full next-token distribution read into JS (what checking needs) with a no-op filter and with
// a member mask after a `.` (check/dereferenceConstraint.ts, every `.` resolving to 60 names), on the
// shipped LM's GGUF and random-weight Qwen2.5-Coder 0.5B / 1.5B shapes (vocabulary 151,936).
// The prompt is read once (warm), then each run generates `--new` tokens after it: the figure is
// (generate time − what the prompt's last token read) / tokens, the median over `--runs`.
//
// Usage: node --import tsx scripts/benchLocalDecoding.ts [--models shipped,0.5b,1.5b] [--threads 1]
//          [--prompt-tokens 1000] [--new 32] [--runs 5] [--json OUT]
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fixtureCode } from '../bench/engine/fixtureCode';
import { randomQwenGguf, shippedLmGguf } from '../bench/engine/models';
import { DereferenceConstraint } from '../src/engine/check/dereferenceConstraint';
import type { ReceiverMembers } from '../src/engine/check/receiverMembers';
import { LlamaEngine, type LlamaGenerateOptions } from '../src/engine/models/LlamaEngine';

const root = resolve(__dirname, '..');
const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'shipped,0.5b,1.5b' },
    threads: { type: 'string', default: '1' },
    'prompt-tokens': { type: 'string', default: '1000' },
    new: { type: 'string', default: '32' },
    runs: { type: 'string', default: '5' },
    json: { type: 'string' },
  },
  strict: true,
});
const threads = Number(values.threads);
const newTokens = Number(values.new);
const runs = Number(values.runs);
const signal = new AbortController().signal;

/** The longest start of `text` with at most `tokens` tokens, ending in a dereference. */
async function promptOf(engine: LlamaEngine, text: string, tokens: number): Promise<string> {
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if ((await engine.tokenize(text.slice(0, mid) + '\n        self.')).length <= tokens) lo = mid;
    else hi = mid - 1;
  }
  return text.slice(0, lo) + '\n        self.';
}

const MEMBERS = new Set(
  [
    'items',
    'add_item',
    'remove_item',
    'total',
    'discount',
    'apply_coupon',
    'customer',
    'checkout',
    'currency',
    'tax_rate',
    'created_at',
    'updated_at',
    'shipping',
    'billing_address',
    'save',
    'load',
    'validate',
    'to_dict',
    'from_dict',
    'clear',
  ].flatMap((n) => [n, `${n}_async`, `_${n}`]),
);

interface Arm {
  name: string;
  make: (texts: readonly string[]) => { options: Omit<LlamaGenerateOptions, 'maxNewTokens'>; masked: () => number };
}

/** A receiver at every `.` the model writes: `self` with MEMBERS (a class of 60 members). */
const members = (text: string): ReceiverMembers | undefined =>
  text.endsWith('.') ? { receiver: 'self', partial: '', names: MEMBERS, entities: ['Cart'] } : undefined;

const ARMS: Arm[] = [
  { name: 'llama.cpp greedy', make: () => ({ options: {}, masked: () => 0 }) },
  { name: 'logits, no-op filter', make: () => ({ options: { logitsFilter: () => undefined }, masked: () => 0 }) },
  {
    name: 'logits, member mask, every step',
    make: (texts) => {
      const constraint = new DereferenceConstraint('', members, members('self.'));
      return {
        options: { logitsFilter: (generated, logits) => constraint.apply(texts, generated, logits) },
        masked: () => constraint.events.reduce((n, e) => n + e.steps, 0),
      };
    },
  },
  {
    // The product's path: the distribution only where the mask may act (DecodeConstraint.active).
    name: 'logits, member mask, where active',
    make: (texts) => {
      const constraint = new DereferenceConstraint('', members, members('self.'));
      return {
        options: {
          logitsFilter: (generated, logits) => constraint.apply(texts, generated, logits),
          filterActive: (generated) => constraint.active(generated),
        },
        masked: () => constraint.events.reduce((n, e) => n + e.steps, 0),
      };
    },
  },
];

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const text = fixtureCode(root);
  const rows: Array<{
    model: string;
    arm: string;
    promptTokens: number;
    tokens: number;
    msPerToken: number;
    runs: number[];
    masked: number;
  }> = [];
  for (const m of values.models.split(',')) {
    const path = m === 'shipped' ? await shippedLmGguf() : await randomQwenGguf(m as '0.5b' | '1.5b');
    const engine = new LlamaEngine({ modelPath: path, threads, contextTokens: 4096, gpu: false });
    const info = await engine.info();
    const texts = await engine.tokenTexts();
    // The shipped LM's context is 512 positions: its prompt leaves room for the new tokens.
    const want = Math.min(Number(values['prompt-tokens']), info.contextTokens - newTokens - 8);
    const prompt = await promptOf(engine, text, want);
    const promptTokens = (await engine.tokenize(prompt)).length;
    await engine.warm(prompt, signal);
    // Arms interleaved run by run: a shared machine's load moves all of them alike.
    const perRun = ARMS.map(() => [] as number[]);
    const last = ARMS.map(() => ({ tokens: 0, masked: 0, text: '' }));
    for (let r = 0; r < runs + 1; r++) {
      for (const [a, arm] of ARMS.entries()) {
        const made = arm.make(texts);
        const t0 = performance.now();
        const out = await engine.generate(prompt, { maxNewTokens: newTokens, ...made.options }, signal);
        const ms = performance.now() - t0 - out.read.ms;
        last[a] = { tokens: out.logprobs.length, masked: made.masked(), text: out.text };
        // The first round is a warm-up (allocations, the sampler's first use).
        if (r > 0) perRun[a]!.push(ms / Math.max(1, out.logprobs.length));
      }
    }
    for (const [a, arm] of ARMS.entries()) {
      const { tokens, masked } = last[a]!;
      const runsMs = perRun[a]!;
      rows.push({ model: m, arm: arm.name, promptTokens, tokens, msPerToken: median(runsMs), runs: runsMs, masked });
      process.stderr.write(
        `${m} ${arm.name}: ${median(runsMs).toFixed(2)} ms/token (${runsMs.map((x) => x.toFixed(1)).join(', ')}; ` +
          `${tokens} tokens, ${masked} masked)\n`,
      );
    }
    // Each path and its counterpart must write the same text: they change the cost, not the choice.
    const same = last[2]!.text === last[3]!.text && last[0]!.text === last[1]!.text;
    process.stderr.write(`${m}: greedy and no-op, mask every step and where active: ${same ? 'the same texts' : 'DIFFERENT texts'}\n`);
    if (!same) process.exitCode = 1;
    await engine.unload();
  }
  const lines = [
    `| model | vocabulary | prompt tokens | path | ms/token (median of ${runs}) | steps masked |`,
    '|---|---:|---:|---|---:|---:|',
  ];
  for (const r of rows)
    lines.push(
      `| ${r.model} | ${r.model === 'shipped' ? '' : '151,936'} | ${r.promptTokens} | ${r.arm} | ${r.msPerToken.toFixed(2)} | ${r.masked} of ${r.tokens} |`,
    );
  process.stdout.write(lines.join('\n') + '\n');
  if (values.json) writeFileSync(values.json, JSON.stringify({ threads, newTokens, runs, rows }, null, 2) + '\n');
}

void main();

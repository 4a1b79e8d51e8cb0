// TEST DOUBLE for the model behind the Ollama-compatible test server: a small deterministic scorer
// that reads a BestFit prompt, scores each labelled snippet by identifier overlap with the query,
// and answers `<answer>[X]</answer>` with per-token top logprobs (a softmax over the scores). It
// stands in until the project's embedded causal LM can back the server.
import { sampleIndex, type GenerateFn, type GenerateResult, type GeneratedToken } from '../../helpers/ollamaServer';

const identifiers = (text: string): Set<string> => new Set(text.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []);

/** The query and the labelled snippets of a BestFit prompt (as rendered into ChatML), or undefined. */
export function readBestFitPrompt(prompt: string): { query: string; docs: Array<{ label: string; text: string }> } | undefined {
  const q = prompt.indexOf('the code snippet to be completed:\n');
  const d = prompt.indexOf('\n\nthe retrieved code snippet(s):\n');
  const e = prompt.indexOf('\n\nPlease provide only the label');
  if (q < 0 || d < 0 || e < 0) return undefined;
  const query = prompt.slice(q + 'the code snippet to be completed:\n'.length, d);
  const block = prompt.slice(d + '\n\nthe retrieved code snippet(s):\n'.length, e);
  const docs: Array<{ label: string; text: string }> = [];
  for (const part of block.split(/^(?=\[[A-Z]\]$)/m)) {
    const m = /^\[([A-Z])\]\n?([\s\S]*)$/.exec(part);
    if (m?.[1]) docs.push({ label: m[1], text: (m[2] ?? '').replace(/\n$/, '') });
  }
  return { query, docs };
}

/** Identifier-overlap score of a snippet for a query (the fraction of the snippet's identifiers the query uses). */
export function overlapScore(query: string, doc: string): number {
  const q = identifiers(query);
  const d = identifiers(doc);
  if (d.size === 0) return 0;
  let shared = 0;
  for (const id of d) if (q.has(id)) shared++;
  return shared / d.size;
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Options: `sharpness` scales scores into logits; `seed` seeds sampling when temperature > 0 and the request has none. */
export function overlapModelTestDouble(options: { sharpness?: number; seed?: number } = {}): GenerateFn & { calls: number } {
  const sharpness = options.sharpness ?? 8;
  const fallbackRandom = seeded(options.seed ?? 1);
  const fn = (async (prompt, opts, signal) => {
    fn.calls++;
    if (signal.aborted) throw new Error('aborted');
    const parsed = readBestFitPrompt(prompt);
    if (!parsed || parsed.docs.length === 0) return { text: '' } satisfies GenerateResult;
    const logits = parsed.docs.map((doc) => sharpness * overlapScore(parsed.query, doc.text));
    const max = Math.max(...logits);
    const z = logits.reduce((s, l) => s + Math.exp(l - max), 0);
    const logprobs = logits.map((l) => l - max - Math.log(z));
    let chosen = 0;
    if (opts.temperature > 0) {
      const random = opts.seed !== undefined ? seeded(opts.seed) : fallbackRandom;
      chosen = sampleIndex(
        logprobs.map((lp) => Math.exp(lp / opts.temperature)),
        random,
      );
    } else {
      for (let i = 1; i < logprobs.length; i++) if (logprobs[i]! > logprobs[chosen]!) chosen = i;
    }
    const label = parsed.docs[chosen]!.label;
    const top = parsed.docs.map((doc, i) => ({ token: doc.label, logprob: logprobs[i]! })).sort((a, b) => b.logprob - a.logprob);
    const certain = (token: string): GeneratedToken => ({ token, logprob: 0, top: [{ token, logprob: 0 }] });
    const tokens: GeneratedToken[] = [
      certain('<answer>'),
      certain('['),
      { token: label, logprob: logprobs[chosen]!, top },
      certain(']'),
      certain('</answer>'),
    ];
    return { text: tokens.map((t) => t.token).join(''), topLogprobs: tokens };
  }) as GenerateFn & { calls: number };
  fn.calls = 0;
  return fn;
}

// The one table of defaults (CodeRAG's f=3, g=1, m=5, j=15, u=10; a prompt of at most 4,096 tokens, 48 new
// tokens) and of the model servers' defaults. The server's settings, every CLI command and every
// evaluation method start from here.
import { DEFAULT_SHOW_LEVEL, gateOptionsOf } from '../gate/levels';
import type { PipelineOptions } from './types';

export const PIPELINE_DEFAULTS: PipelineOptions = {
  // The last three lines, not CodeRAG's probing (still selectable: `probe`): the same validation recall at a fraction of
  // probing's time (docs/BENCHMARKS.md "Retrieval of classes and the query").
  query: { strategy: 'last3', fallback: 'jaccard', f: 3, g: 1, m: 5, maxProbes: 32 },
  retrieval: { topJ: 15, budgetsMs: {} },
  rerank: { topU: 10, timeoutMs: 1500 },
  // Snippets as the repository's files where the family was pretrained on that form (templates.ts), else a comment block.
  // CodeRAG's rule: the code before the cursor keeps at least half the budget when snippets want more.
  // The code after the cursor is read again at every keystroke (a fill-in-the-middle prompt puts it
  // after the code before the cursor): a tenth of the budget, not 15%, keeps that re-read near a
  // tenth of the prompt (docs/BENCHMARKS.md "Typing replay").
  // The budget is the most a prompt may hold: the model's window and its server's reading speed decide
  // within it (stages/model.ts promptBudget; docs/BENCHMARKS.md "Prompt recall").
  prompt: { budgetTokens: 4096, suffixShare: 0.1, contextShare: 0.5, repoFormat: 'auto' },
  generate: { maxNewTokens: 48, temperature: 0 },
  postprocess: { maxLines: 12, maxChars: 4000 },
  // Rambo: top-10 signature hits, top-20 usages; a short sketch under its own time limit, then the body.
  // The body prompt keeps 70% of the budget for the code before the cursor, the best ES on the tuning body cases; its sketch keeps
  // the line prompt's half, so the signature-similar methods it drafts from keep their room (docs/BENCHMARKS.md "Body mode").
  // CodeRAG's reranked items join Rambo's lists in turns with the others (bodyMode's composeInTurns): the best ES summed over both
  // languages on every validation body case (docs/BENCHMARKS.md "The Java body cut, star imports, and the table once more").
  body: {
    topSignature: 10,
    topUsages: 20,
    sketchTokens: 64,
    sketchTimeoutMs: 4000,
    maxNewTokens: 128,
    maxLines: 60,
    elements: 'sketch+similar',
    knowledge: true,
    contextShare: 0.7,
  },
  // The member prior lifts Python's dot cases but overrides a Java model that is right unaided, so Java runs the mask alone
  // (docs/BENCHMARKS.md "Defaults chosen on validation repositories").
  check: { mode: 'constrain', prior: { python: 32, java: 0 } },
  // ProCC: off unless asked for; the hypothetical line is a model call, so it gets the longest budget.
  similar: { mode: 'off', budgetsMs: { lexical: 300, hypothetical: 1500, summary: 200 }, fallback: 'lexical', topK: 5, promptShare: 0.15 },
  // The show gate at `coderag.suggestions.show`'s default level (gate/levels.ts; its curve: docs/BENCHMARKS.md).
  gate: gateOptionsOf(DEFAULT_SHOW_LEVEL),
};

/** Where the model servers are and which models they run, unless the user says otherwise. */
export const MODEL_DEFAULTS = {
  ollamaHost: 'http://127.0.0.1:11434',
  completionModel: 'qwen2.5-coder:1.5b-base',
  keepAlive: '30m',
  rerankModel: 'qwen3:8b',
  /** The reranker the editor uses unless told otherwise (the distilled one ships with the extension). */
  rerankKind: 'distilled',
  /** One completion request to a model server (ms). */
  timeoutMs: 7000,
} as const;

type DeepPartial<T> = { [K in keyof T]?: NonNullable<T[K]> extends object ? DeepPartial<NonNullable<T[K]>> : T[K] };
export type PipelineOverrides = DeepPartial<PipelineOptions>;

/** The defaults with `overrides` laid over them, stage by stage. */
export function pipelineOptions(overrides: PipelineOverrides = {}): PipelineOptions {
  const d = PIPELINE_DEFAULTS;
  return {
    query: { ...d.query, ...defined(overrides.query) },
    retrieval: {
      ...d.retrieval,
      ...defined(overrides.retrieval),
      budgetsMs: { ...d.retrieval.budgetsMs, ...defined(overrides.retrieval?.budgetsMs) },
    },
    rerank: { ...d.rerank, ...defined(overrides.rerank) },
    prompt: { ...d.prompt, ...defined(overrides.prompt) },
    generate: { ...d.generate, ...defined(overrides.generate) },
    postprocess: { ...d.postprocess, ...defined(overrides.postprocess) },
    body: { ...d.body, ...defined(overrides.body) },
    check: { mode: 'constrain', ...d.check, ...defined(overrides.check) },
    gate: { ...d.gate!, ...defined(overrides.gate) },
    similar: {
      ...d.similar!,
      ...defined(overrides.similar),
      budgetsMs: { ...d.similar!.budgetsMs, ...defined(overrides.similar?.budgetsMs) },
    },
  } as PipelineOptions;
}

/** The keys of `o` whose value is set (an absent CLI option must not override a default). */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

// The one table of defaults (CodeRAG's f=3, g=1, m=5, j=15, u=10; a prompt of at most 8,192 tokens, 48 new
// tokens) and of the model servers' defaults. The server's settings, every CLI command and every
// evaluation method start from here (resolveOptions.ts lays their choices over it).
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
  prompt: { budgetTokens: 8192, suffixShare: 0.1, contextShare: 0.5, repoFormat: 'auto' },
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
  // The member prior (a weight per language; 0: the mask alone): on the larger validation set Python's 32 cost its line cases
  // 1.2 ES and its dot cases did no better for it, and Java's model was right unaided before (docs/BENCHMARKS.md
  // "Defaults on the larger validation set").
  check: { mode: 'constrain', prior: 0 },
  // ProCC: `auto` is the lexical window for Java with the in-process model, off elsewhere (pipeline/stages/similar.ts similarModeFor);
  // a 0.3 share, not 0.15, let the window help in both languages (docs/BENCHMARKS.md "Similar code for Java"). The
  // hypothetical line is a model call, so it gets the longest budget.
  similar: { mode: 'auto', budgetsMs: { lexical: 300, hypothetical: 1500, summary: 200 }, fallback: 'lexical', topK: 5, promptShare: 0.3 },
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

// The one table of defaults (CodeRAG's f=3, g=1, m=5, j=15, u=10; a 2,048-token prompt, 48 new
// tokens) and of the model servers' defaults. The server's settings, every CLI command and every
// evaluation method start from here.
import { DEFAULT_SHOW_LEVEL, gateOptionsOf } from '../gate/levels';
import type { PipelineOptions } from './types';

export const PIPELINE_DEFAULTS: PipelineOptions = {
  // The last three lines, not CodeRAG's probing (still selectable: `probe`): on the validation line
  // cases with the distilled reranker, df+s+d+dr recall@10 Java / Python was 0.945 / 0.963 with
  // last3, 0.937 / 0.963 with last10 and 0.945 / 0.956 with probe (dev: 0.929 / 0.912, 0.929 /
  // 0.912, 0.938 / 0.900), while probing took a median 26-50 ms per request and the last lines
  // 0.1 ms (docs/BENCHMARKS.md, "Retrieval of classes and the query").
  query: { strategy: 'last3', fallback: 'jaccard', f: 3, g: 1, m: 5, maxProbes: 32 },
  retrieval: { topJ: 15, budgetsMs: {} },
  rerank: { topU: 10, timeoutMs: 1500 },
  // Snippets as the repository's files where the family was pretrained on that form (templates.ts), else a comment block.
  // CodeRAG's rule: the code before the cursor keeps at least half the budget when snippets want more.
  // The code after the cursor is read again at every keystroke (a fill-in-the-middle prompt puts it
  // after the code before the cursor): a tenth of the budget, not 15%, keeps that re-read near a
  // tenth of the prompt (docs/BENCHMARKS.md "Typing replay").
  prompt: { budgetTokens: 2048, suffixShare: 0.1, contextShare: 0.5, repoFormat: 'auto' },
  generate: { maxNewTokens: 48, temperature: 0 },
  postprocess: { maxLines: 12, maxChars: 4000 },
  // Rambo: top-10 signature hits, top-20 usages; a short sketch under its own time limit, then the body.
  // CodeRAG's reranked items join Rambo's lists, in turns with the others (bodyMode's composeInTurns; the validation figures chose it
  // over the other orders src/bench/variants/bodyCompose.ts keeps, docs/BENCHMARKS.md "Defaults chosen on validation repositories").
  // Rambo's body prompt keeps 70% of the budget for the code before the cursor (its sketch keeps the
  // line prompt's half, so the signature-similar methods it drafts from keep their room; the
  // line-retrieval baselines on body cases use the line prompt): on the tuning body cases (jinja2,
  // meson; antlr4, jsoup; 12 per language) with the shipped LM, the default's ES summed over both
  // languages was 32.1 / 31.7 / 35.8 / 38.5 / 37.5 / 36.2 at 0.5 / 0.6 / 0.65 / 0.7 / 0.8 / 0.9 (sketch
  // and body alike, under an earlier order of the lists), and 33.0 at 0.5 and 38.7 at 0.7 with the sketch at half under another.
  // (The line prompt keeps half: 0.6 / 0.7 gave Python line cases 1.3 / 2.2 less ES, Java 0.8 / 0.4 more.)
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
  // The member prior's weight, per language. Fitted at 32 on the tuning dot cases (jinja2, meson; antlr4, jsoup, commons-codec) when
  // the LM was weaker; on the validation dot cases with the shipped LM (2026-12-03, docs/BENCHMARKS.md "Defaults chosen on validation
  // repositories") Python's NIM was 28.3 at 32, 26.1 at 8, 21.7 at 0 and unchecked, while Java's was 22.2 at 32 and 8, 24.4 at 0 and
  // unchecked: the prior overrides a Java model that is right unaided, so Java runs the mask alone.
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

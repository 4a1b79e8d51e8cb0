// `coderag eval --method product`: what the editor does with default settings. Its options come
// from the options' one resolution (engine/pipeline/resolveOptions.ts, which the server's config uses), so
// the evaluated product and the editor cannot drift apart; the harness only lends the paths a
// generous time budget (an evaluation measures quality; the timings are recorded) and sets the
// research knobs `npm run bench:defaults` varies, one at a time.
import { MODEL_DEFAULTS, resolveOptions, type CheckMode, type PipelineOptions, type PipelineSettings } from '../engine/pipeline';
import type { PathName } from '../engine/retrieve/types';
import type { QueryStrategy } from '../engine/query/types';
import type { SimilarMode } from '../engine/similar/chooseWindows';
import type { BodyComposeName } from './variants/bodyCompose';

/** The editor's reranker unless told otherwise (server/config.ts DEFAULT_CONFIG.rerank.kind). */
export const PRODUCT_RERANK = MODEL_DEFAULTS.rerankKind;

export const PRODUCT_METHOD = 'product';

/** The folder pipeline's retrieval paths (server/EncoderHost.ts: createRepositoryIndex with the encoder). */
export const PRODUCT_PATHS: readonly PathName[] = ['dataflow', 'sparse', 'dense'];

/** What a product run may change: settings a user has (check, similar, query, top-j, top-u) and research knobs (no setting). */
interface ProductKnobs {
  check?: CheckMode;
  similarMode?: SimilarMode;
  query?: QueryStrategy;
  topJ?: number;
  topU?: number;
  checkPrior?: number;
  similarShare?: number;
  /** Rambo step e's order (the body mode's composer: runMethod's modeOf); absent: the product's turns. */
  bodyCompose?: BodyComposeName;
  contextShare?: number;
  /** Tokens a second the model server is taken to read at (ResearchHooks.readRate): a prompt laid out as for that server. */
  readRate?: number;
  bodyContextShare?: number;
  probeTop?: number;
  /** The show gate (`--gate`, `--gate-threshold`, `--gate-body-threshold`): a level of coderag.suggestions.show, as thresholds. */
  gate?: { mode: 'on' | 'off'; threshold?: number; bodyThreshold?: number };
  /** Harness: each retrieval path's and perspective's time budget, and the reranker's (ms). */
  pathBudgetMs: number;
  rerankTimeoutMs: number;
}

/** The editor's settings for a product run: the settings a user has that the run sets; the rest is the defaults table's. */
function productSettings(k: Pick<ProductKnobs, 'check' | 'similarMode' | 'query' | 'topJ' | 'topU'>): PipelineSettings {
  return {
    check: { mode: k.check },
    similar: { mode: k.similarMode },
    query: { strategy: k.query },
    retrieval: { topJ: k.topJ },
    rerank: { topU: k.topU },
  };
}

/** The product's pipeline options: the settings resolved as the server resolves them, then the harness's budgets and research knobs. */
export function productPipelineOptions(k: ProductKnobs): PipelineOptions {
  return withHarnessKnobs(resolveOptions(productSettings(k)), k);
}

/** `base` with the harness's time budgets and the run's research knobs (no setting) over it. */
function withHarnessKnobs(base: PipelineOptions, k: ProductKnobs): PipelineOptions {
  const budgetsMs: Partial<Record<PathName, number>> = {};
  for (const p of PRODUCT_PATHS) budgetsMs[p] = k.pathBudgetMs;
  return {
    ...base,
    query: { ...base.query, ...(k.probeTop !== undefined ? { g: k.probeTop } : {}) },
    retrieval: { ...base.retrieval, budgetsMs },
    rerank: { ...base.rerank, timeoutMs: k.rerankTimeoutMs },
    prompt: { ...base.prompt, ...(k.contextShare !== undefined ? { contextShare: k.contextShare } : {}) },
    body: {
      ...base.body,
      ...(k.bodyContextShare !== undefined ? { contextShare: k.bodyContextShare } : {}),
    },
    check: { ...base.check, ...(k.checkPrior !== undefined ? { prior: k.checkPrior } : {}) },
    gate: { ...base.gate, ...k.gate },
    similar: {
      ...base.similar,
      budgetsMs: { lexical: k.pathBudgetMs, hypothetical: k.pathBudgetMs, summary: k.pathBudgetMs },
      ...(k.similarShare !== undefined ? { promptShare: k.similarShare } : {}),
    },
  };
}

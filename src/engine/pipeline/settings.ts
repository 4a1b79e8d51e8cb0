// The user's settings that shape the pipeline (the `coderag.*` settings of package.json, the
// server's configuration slices) and their one mapping onto PipelineOptions: the server and
// `coderag eval --method product` both build their options here, so the evaluated product is the editor's.
import type { RepoFormat } from '../prompt/templates';
import type { QueryStrategy } from '../query/types';
import type { SimilarMode } from '../similar/similarStage';
import { DEFAULT_SHOW_LEVEL, gateOptionsOf, type ShowLevel } from '../gate/levels';
import { PIPELINE_DEFAULTS, pipelineOptions } from './defaults';
import type { CheckMode, PipelineOptions } from './types';

export interface PipelineSettings {
  query: { strategy: QueryStrategy };
  retrieval: { topJ: number };
  rerank: { topU: number; timeoutMs: number };
  prompt: { budgetTokens: number; repoFormat: RepoFormat };
  generate: { maxNewTokens: number; temperature: number };
  check: { mode: CheckMode };
  similar: { mode: SimilarMode };
  body: { knowledge: boolean; maxNewTokens: number };
  /** coderag.suggestions.show: the show gate's level. */
  suggestions: { show: ShowLevel };
}

/** The settings' defaults: the defaults table's values. */
export const DEFAULT_PIPELINE_SETTINGS: PipelineSettings = {
  query: { strategy: PIPELINE_DEFAULTS.query.strategy },
  retrieval: { topJ: PIPELINE_DEFAULTS.retrieval.topJ },
  rerank: { topU: PIPELINE_DEFAULTS.rerank.topU, timeoutMs: PIPELINE_DEFAULTS.rerank.timeoutMs },
  prompt: { budgetTokens: PIPELINE_DEFAULTS.prompt.budgetTokens, repoFormat: PIPELINE_DEFAULTS.prompt.repoFormat ?? 'auto' },
  generate: { maxNewTokens: PIPELINE_DEFAULTS.generate.maxNewTokens, temperature: PIPELINE_DEFAULTS.generate.temperature },
  check: { mode: PIPELINE_DEFAULTS.check?.mode ?? 'constrain' },
  similar: { mode: PIPELINE_DEFAULTS.similar?.mode ?? 'off' },
  body: { knowledge: PIPELINE_DEFAULTS.body.knowledge ?? true, maxNewTokens: PIPELINE_DEFAULTS.body.maxNewTokens },
  suggestions: { show: DEFAULT_SHOW_LEVEL },
};

/** The pipeline's options for the settings: the defaults table with the settings over it. */
export function settingsPipelineOptions(s: PipelineSettings): PipelineOptions {
  return pipelineOptions({
    query: { strategy: s.query.strategy },
    retrieval: { topJ: s.retrieval.topJ },
    rerank: { topU: s.rerank.topU, timeoutMs: s.rerank.timeoutMs },
    prompt: { budgetTokens: s.prompt.budgetTokens, repoFormat: s.prompt.repoFormat },
    generate: { maxNewTokens: s.generate.maxNewTokens, temperature: s.generate.temperature },
    check: { mode: s.check.mode },
    similar: { mode: s.similar.mode },
    body: { knowledge: s.body.knowledge, maxNewTokens: s.body.maxNewTokens },
    gate: gateOptionsOf(s.suggestions.show),
  });
}

// The one resolution of the pipeline's options: what a host chose (the server's settings, a CLI
// command's flags, an evaluation method) laid over the defaults table (defaults.ts), stage by stage.
// The server, every CLI command and every evaluation method build their options here, so the
// evaluated product is the editor's and no stage needs a default of its own.
import { PIPELINE_DEFAULTS } from './defaults';
import type { PipelineOptions } from './types';

type DeepPartial<T> = { [K in keyof T]?: NonNullable<T[K]> extends object ? DeepPartial<NonNullable<T[K]>> : T[K] };

/** What a host chose of the options; anything absent (or undefined) is the defaults table's value. */
export type PipelineSettings = DeepPartial<PipelineOptions>;

/** The complete options: the defaults table with `settings` over it, stage by stage. */
export function resolveOptions(settings: PipelineSettings = {}): PipelineOptions {
  const d = PIPELINE_DEFAULTS;
  return {
    query: { ...d.query, ...defined(settings.query) },
    retrieval: {
      ...d.retrieval,
      ...defined(settings.retrieval),
      budgetsMs: { ...d.retrieval.budgetsMs, ...defined(settings.retrieval?.budgetsMs) },
    },
    rerank: { ...d.rerank, ...defined(settings.rerank) },
    prompt: { ...d.prompt, ...defined(settings.prompt) },
    generate: { ...d.generate, ...defined(settings.generate) },
    postprocess: { ...d.postprocess, ...defined(settings.postprocess) },
    body: { ...d.body, ...defined(settings.body) },
    check: { ...d.check, ...defined(settings.check) },
    gate: { ...d.gate, ...defined(settings.gate) },
    similar: {
      ...d.similar,
      ...defined(settings.similar),
      budgetsMs: { ...d.similar.budgetsMs, ...defined(settings.similar?.budgetsMs) },
    },
  } as PipelineOptions;
}

/** The keys of `o` whose value is set (an absent CLI option must not override a default). */
function defined<T extends object>(o: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}

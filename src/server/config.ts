// The server's configuration: one typed object with defaults, merged in layers (defaults <
// initializationOptions < workspace settings) and handed down as plain slices (CONTRIBUTING.md "Code rules", rule 6).
// The keys mirror the `coderag.*` settings of package.json.
import { REPO_FORMATS, type RepoFormat } from '../engine/prompt/templates';
import { CHECK_MODES, MODEL_DEFAULTS, PIPELINE_DEFAULTS as D, type CheckMode, type PipelineSettings } from '../engine/pipeline';
import type { QueryStrategy } from '../engine/query/types';
import { SIMILAR_MODES, type SimilarMode } from '../engine/similar/chooseWindows';
import { DEFAULT_SHOW_LEVEL, gateOptionsOf, SHOW_LEVELS, type ShowLevel } from '../engine/gate/levels';
import { isModelDevice, MODEL_DEVICES, type ModelDevice } from '../engine/models/device';
import { boundedExclude } from '../engine/kb/scan';

type ModelProvider = 'auto' | 'ollama' | 'openai' | 'embedded' | 'local';

export interface ServerConfig {
  /** Completions on or off (the client's Enable/Disable command flips it). */
  enable: boolean;
  /** Wait after the last keystroke before running the pipeline (ms). */
  debounceMs: number;
  /** Globs excluded from indexing, on top of .gitignore. */
  exclude: string[];
  /** More candidate source files than this in a folder: not indexed, the folder's status says why. */
  maxFiles: number;
  maxFileBytes: number;
  model: {
    /**
     * `auto`: an OpenAI-compatible server when set, Ollama when it answers with the model pulled, a local GGUF when one is there, else the
     * embedded model.
     */
    provider: ModelProvider;
    /** Prompt template family: `auto` guesses from the model name. */
    family: 'auto' | 'qwen2.5-coder' | 'starcoder2' | 'codellama' | 'deepseek-coder' | 'plain';
    timeoutMs: number;
    maxNewTokens: number;
    temperature: number;
  };
  ollama: { host: string; completionModel: string; keepAlive: string };
  openai: { baseUrl: string; model: string; apiKey: string };
  /**
   * The `local` provider: a GGUF file run by llama.cpp in the server (`modelPath` empty: the downloaded one, from `downloadUrl`, checked
   * against `downloadSha256`), its CPU threads (0: half the
   * cores, at most 8), context, idle unload and GPU offload.
   */
  local: {
    modelPath: string;
    threads: number;
    contextTokens: number;
    idleUnloadMinutes: number;
    gpu: 'auto' | 'off';
    downloadUrl: string;
    downloadSha256: string;
  };
  rerank: { kind: 'llm' | 'distilled' | 'none'; llmModel: string; timeoutMs: number; topU: number };
  query: { strategy: QueryStrategy };
  retrieval: { topJ: number };
  /** `repoFormat`: snippets as a comment block, or as the repository's files for families pretrained on that form (`auto`). */
  prompt: { budgetTokens: number; repoFormat: RepoFormat };
  cache: { size: number };
  /** onnxruntime execution provider of the local models (probing LM, encoder, reranker, embedded generator). */
  models: { device: ModelDevice };
  /** Checking completions against the repository at dereferences (constrain | repair | off). */
  check: { mode: CheckMode };
  /**
   * ProCC's similar code in the prompt: off, the bandit's choice (which learns from accepted and rejected suggestions), the union, or one
   * perspective.
   */
  similar: { mode: SimilarMode };
  /** The body mode (Rambo): whether CodeRAG's reranked knowledge items join its prompt's list, and the body's token limit. */
  body: { knowledge: boolean; maxNewTokens: number };
  /** How many suggestions to show: only those the show gate is sure of, a balance, more, or every one (gate/levels). */
  suggestions: { show: ShowLevel };
}

export const DEFAULT_CONFIG: ServerConfig = {
  enable: true,
  debounceMs: 100,
  exclude: [],
  maxFiles: 50_000,
  maxFileBytes: 1_000_000,
  model: {
    provider: 'auto',
    family: 'auto',
    timeoutMs: MODEL_DEFAULTS.timeoutMs,
    maxNewTokens: D.generate.maxNewTokens,
    temperature: D.generate.temperature,
  },
  ollama: { host: MODEL_DEFAULTS.ollamaHost, completionModel: MODEL_DEFAULTS.completionModel, keepAlive: MODEL_DEFAULTS.keepAlive },
  openai: { baseUrl: '', model: '', apiKey: '' },
  local: { modelPath: '', threads: 0, contextTokens: 8192, idleUnloadMinutes: 15, gpu: 'auto', downloadUrl: '', downloadSha256: '' },
  rerank: { kind: MODEL_DEFAULTS.rerankKind, llmModel: MODEL_DEFAULTS.rerankModel, topU: D.rerank.topU, timeoutMs: D.rerank.timeoutMs },
  query: { strategy: D.query.strategy },
  retrieval: { topJ: D.retrieval.topJ },
  prompt: { budgetTokens: D.prompt.budgetTokens, repoFormat: D.prompt.repoFormat },
  cache: { size: 1000 },
  models: { device: 'auto' },
  check: { mode: D.check.mode },
  similar: { mode: D.similar.mode },
  body: { knowledge: D.body.knowledge, maxNewTokens: D.body.maxNewTokens },
  // The defaults table's gate is this level's (engine/pipeline/defaults.ts).
  suggestions: { show: DEFAULT_SHOW_LEVEL },
};

/** The body's token limit (package.json's minimum and maximum for coderag.experimental.body.maxNewTokens). */
const BODY_MAX_NEW_TOKENS = { min: 16, max: 512 } as const;

type Json = unknown;

/** Deprecated: never read from settings (the key lives in the client's secret storage). */
const SECRET_SETTING = 'coderag.openai.apiKey';

/**
 * Research knobs, set as `coderag.experimental.<key>` (package.json lists them under "CodeRAG:
 * Experimental"); the configuration object keeps them at `<key>`, and `coderag.<key>` is not read.
 */
export const EXPERIMENTAL_KEYS = [
  'maxFileBytes',
  'model.maxNewTokens',
  'model.temperature',
  'ollama.keepAlive',
  'rerank.timeoutMs',
  'rerank.topU',
  'query.strategy',
  'retrieval.topJ',
  'prompt.budgetTokens',
  'prompt.repoFormat',
  'check.mode',
  'body.knowledge',
  'body.maxNewTokens',
  'cache.size',
] as const;

/** Settings whose value is one of a list (package.json `enum`); another string is a problem, and the value stays. */
const ENUMS: Readonly<Record<string, readonly string[]>> = {
  'coderag.model.provider': ['auto', 'ollama', 'openai', 'embedded', 'local'],
  'coderag.local.gpu': ['auto', 'off'],
  'coderag.model.family': ['auto', 'qwen2.5-coder', 'starcoder2', 'codellama', 'deepseek-coder', 'plain'],
  'coderag.rerank.kind': ['llm', 'distilled', 'none'],
  'coderag.query.strategy': ['probe', 'last3', 'last10', 'jaccard'],
  'coderag.check.mode': CHECK_MODES,
  'coderag.prompt.repoFormat': REPO_FORMATS,
  'coderag.similar.mode': SIMILAR_MODES,
  'coderag.suggestions.show': SHOW_LEVELS,
};

/**
 * The range of each numeric setting (package.json's `minimum` and `maximum`, which VS Code only
 * warns about in settings.json): a value outside it is a problem, and the value stays. The upper
 * ends past which nothing more happens: maxFileBytes at the 64 MiB the index reads a file again,
 * budgetTokens at the 128K-token context of the largest code models, a rerank beyond two minutes.
 */
export const NUMBER_RANGES: Readonly<Record<string, { min: number; max: number }>> = {
  'coderag.debounceMs': { min: 0, max: 2000 },
  'coderag.maxFiles': { min: 1, max: 10_000_000 },
  'coderag.maxFileBytes': { min: 1, max: 64 * 1024 * 1024 },
  'coderag.model.timeoutMs': { min: 100, max: 2_147_483_647 },
  'coderag.model.maxNewTokens': { min: 1, max: 512 },
  'coderag.model.temperature': { min: 0, max: 2 },
  'coderag.rerank.timeoutMs': { min: 50, max: 120_000 },
  'coderag.rerank.topU': { min: 1, max: 31 },
  'coderag.retrieval.topJ': { min: 1, max: 100 },
  'coderag.prompt.budgetTokens': { min: 128, max: 131_072 },
  'coderag.body.maxNewTokens': { min: 16, max: 512 },
  'coderag.cache.size': { min: 0, max: 100_000 },
  'coderag.local.threads': { min: 0, max: 256 },
  'coderag.local.contextTokens': { min: 256, max: 131_072 },
  'coderag.local.idleUnloadMinutes': { min: 0, max: 1440 },
};

/** The range of a numeric setting, under its name or its experimental name. */
function rangeOf(where: string): { min: number; max: number } | undefined {
  return NUMBER_RANGES[where.replace(/^coderag\.experimental\./, 'coderag.')];
}

/** The allowed values of a setting, under its name or its experimental name. */
function enumOf(where: string): readonly string[] | undefined {
  return ENUMS[where.replace(/^coderag\.experimental\./, 'coderag.')];
}

function isRecord(x: Json): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** The research knobs' configuration paths, which a layer sets only under `coderag.experimental`. */
const EXPERIMENTAL_PATHS: ReadonlySet<string> = new Set(EXPERIMENTAL_KEYS.map((key) => `coderag.${key}`));

/**
 * Merge `layer` over `base`, guided by the shape of `base`: unknown keys (and a research knob outside
 * `coderag.experimental`) are ignored, values of the wrong type are ignored and reported, so a bad
 * setting never breaks the server.
 */
function mergeInto<T>(base: T, layer: Json, path: string, problems: string[]): T {
  if (!isRecord(layer) || !isRecord(base)) return base;
  const out: Record<string, Json> = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    if (!(key in base) || value === undefined || value === null) continue;
    const current = (base as Record<string, Json>)[key];
    const where = path ? `${path}.${key}` : key;
    if (EXPERIMENTAL_PATHS.has(where)) continue;
    if (where === SECRET_SETTING) {
      // A repository's .vscode/settings.json could set it: the key comes only from the client's secret storage.
      if (value !== '')
        problems.push(
          `${SECRET_SETTING} is ignored: set the key with the command "CodeRAG: Set OpenAI-compatible API Key" (other ` +
            `editors: initializationOptions.openaiApiKey)`,
        );
      continue;
    }
    if (isRecord(current)) out[key] = mergeInto(current, value, where, problems);
    else if (Array.isArray(current)) {
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) out[key] = value;
      else problems.push(`${where} must be a list of strings`);
    } else if (typeof value === 'string' && enumOf(where) && !enumOf(where)!.includes(value))
      problems.push(`${where} must be one of ${enumOf(where)!.join(', ')} (got ${JSON.stringify(value)})`);
    else if (
      typeof value === 'number' &&
      Number.isFinite(value) &&
      rangeOf(where) &&
      (value < rangeOf(where)!.min || value > rangeOf(where)!.max)
    )
      // A negative or absurd number would silently empty every completion (no tokens, no prompt): refused, named.
      problems.push(
        `${where} must be between ${rangeOf(where)!.min} and ${rangeOf(where)!.max} (got ${value}); ${String(current)} is used`,
      );
    else if (typeof value === typeof current && (typeof value !== 'number' || Number.isFinite(value))) out[key] = value;
    else problems.push(`${where} must be a ${typeof current}`);
  }
  return out as T;
}

function valueAt(obj: Json, path: string): Json {
  let at = obj;
  for (const key of path.split('.')) at = isRecord(at) ? at[key] : undefined;
  return at;
}

/** The part of `obj` at the given dotted paths, as a nested object (undefined values left out). */
function pick(obj: Json, paths: readonly string[]): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const path of paths) {
    const value = valueAt(obj, path);
    if (value === undefined) continue;
    const keys = path.split('.');
    let at = out;
    for (const key of keys.slice(0, -1)) at = (at[key] ??= {}) as Record<string, Json>;
    at[keys[keys.length - 1]!] = value;
  }
  return out;
}

/** defaults < each layer in order. Returns the problems found (wrong types, values outside a list or a range), for the log. */
export function mergeConfig(...layers: Json[]): { config: ServerConfig; problems: string[] } {
  const problems: string[] = [];
  let config = DEFAULT_CONFIG;
  for (const layer of layers) {
    config = mergeInto(config, layer, 'coderag', problems);
    const experimental = pick(valueAt(layer, 'experimental'), EXPERIMENTAL_KEYS);
    config = mergeInto(config, experimental, 'coderag.experimental', problems);
  }
  config = {
    ...config,
    debounceMs: clamp(config.debounceMs, 0, 2000),
    cache: { size: clamp(config.cache.size, 0, 100_000) },
    body: { ...config.body, maxNewTokens: Math.round(clamp(config.body.maxNewTokens, BODY_MAX_NEW_TOKENS.min, BODY_MAX_NEW_TOKENS.max)) },
  };
  const exclude = boundedExclude(config.exclude);
  if (exclude.problems.length > 0) {
    for (const p of exclude.problems) problems.push(`coderag.exclude: ${p}`);
    config = { ...config, exclude: exclude.globs };
  }
  const device = config.models.device.trim().toLowerCase();
  if (isModelDevice(device)) config = { ...config, models: { device } };
  else {
    problems.push(`coderag.models.device must be one of ${MODEL_DEVICES.join(', ')} (got "${config.models.device}"); using auto`);
    config = { ...config, models: { device: 'auto' } };
  }
  return { config, problems };
}

function clamp(n: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, n));
}

/**
 * What the settings choose of the pipeline's options, by the options' names; engine/pipeline's resolveOptions completes them from the
 * defaults table, as it does for `coderag eval --method product`.
 */
export function pipelineSettings(config: ServerConfig): PipelineSettings {
  return {
    query: config.query,
    retrieval: config.retrieval,
    rerank: { topU: config.rerank.topU, timeoutMs: config.rerank.timeoutMs },
    prompt: config.prompt,
    generate: { maxNewTokens: config.model.maxNewTokens, temperature: config.model.temperature },
    check: config.check,
    similar: config.similar,
    body: config.body,
    gate: gateOptionsOf(config.suggestions.show),
  };
}

// Tokenizers through transformers.js (ESM-only, so loaded with a dynamic import), built from the
// model folder's tokenizer.json + tokenizer_config.json without touching transformers.js' global env.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ModelError } from './errors';

export interface Tokenizer {
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Id of a special token by its text, if the vocabulary has it. */
  tokenId(token: string): number | undefined;
}

interface TransformersTokenizer {
  encode(text: string, pair?: string | null, opts?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], opts?: { skip_special_tokens?: boolean; clean_up_tokenization_spaces?: boolean }): string;
  model: { tokens_to_ids: Map<string, number> };
}

type TokenizerClass = new (json: unknown, config: unknown) => TransformersTokenizer;

interface TransformersModule {
  AutoTokenizer: { TOKENIZER_CLASS_MAPPING: Record<string, TokenizerClass | undefined> };
  PreTrainedTokenizer: TokenizerClass;
}

/** The transformers.js module (ESM-only; src compiles to CommonJS); Node's module cache imports it once. */
export function loadTransformers(): Promise<TransformersModule> {
  return (import('@xenova/transformers') as Promise<unknown>).then((m) => {
    const mod = m as TransformersModule & { env: { allowRemoteModels: boolean; allowLocalModels: boolean } };
    // The registry does its own file resolution and downloads; transformers.js must never fetch.
    mod.env.allowRemoteModels = false;
    return mod;
  });
}

export async function readJsonFile(path: string, modelName: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new ModelError('missing', `Model "${modelName}" is missing ${path}.`, modelName, { cause: e });
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (e) {
    throw new ModelError('corrupt', `Model "${modelName}": ${path} is not valid JSON (${String(e)}).`, modelName, { cause: e });
  }
}

export async function loadTokenizer(dir: string, modelName: string): Promise<Tokenizer> {
  const [json, config] = await Promise.all([
    readJsonFile(join(dir, 'tokenizer.json'), modelName),
    readJsonFile(join(dir, 'tokenizer_config.json'), modelName),
  ]);
  const mod = await loadTransformers();
  const className = typeof config.tokenizer_class === 'string' ? config.tokenizer_class.replace(/Fast$/, '') : '';
  const cls = mod.AutoTokenizer.TOKENIZER_CLASS_MAPPING[className] ?? mod.PreTrainedTokenizer;
  let tok: TransformersTokenizer;
  try {
    tok = new cls(json, config);
  } catch (e) {
    throw new ModelError('corrupt', `Model "${modelName}": cannot build its tokenizer (${String(e)}).`, modelName, { cause: e });
  }
  return {
    encode: (text) => tok.encode(text, null, { add_special_tokens: false }),
    decode: (ids) => (ids.length === 0 ? '' : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false })),
    tokenId: (token) => tok.model.tokens_to_ids.get(token),
  };
}

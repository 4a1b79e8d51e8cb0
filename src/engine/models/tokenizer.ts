// Tokenizers through tokenizers.js (@huggingface/tokenizers), the tokenizer library of
// transformers.js (transformers.js 4 bundles it verbatim), built from the model folder's
// tokenizer.json + tokenizer_config.json. It is pure JavaScript with no dependencies, so it is
// bundled: the full transformers.js package would add onnxruntime-web (140 MB installed) and sharp,
// and cost +37 MB RSS and ~450 ms on import where this costs ~1.5 MB and ~80 ms (docs/BENCHMARKS.md "Dependencies").

import { readRegularFile } from '../util/safeFile';
import { join } from 'node:path';
import { ByteLevelBpe } from './byteLevelBpe';
import { ModelError } from './errors';

export interface Tokenizer {
  encode(text: string): number[];
  decode(ids: number[]): string;
  /** Id of a special token by its text, if the vocabulary has it. */
  tokenId(token: string): number | undefined;
}

type TokenizersModule = typeof import('@huggingface/tokenizers');

/** tokenizers.js (it never fetches: it is handed the parsed files); Node's module cache imports it once. */
export function loadTokenizers(): Promise<TokenizersModule> {
  return import('@huggingface/tokenizers');
}

/** A model's JSON files (tokenizer.json is the largest, a few MiB): a larger one is not one of them. */
const MAX_JSON_BYTES = 64 * 1024 * 1024;

export async function readJsonFile(path: string, modelName: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = (await readRegularFile(path, MAX_JSON_BYTES)).toString('utf8');
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
  const { Tokenizer: TokenizerClass } = await loadTokenizers();
  let tok: InstanceType<TokenizersModule['Tokenizer']>;
  try {
    tok = new TokenizerClass(json, config);
  } catch (e) {
    throw new ModelError('corrupt', `Model "${modelName}": cannot build its tokenizer (${String(e)}).`, modelName, { cause: e });
  }
  const library = (text: string): number[] => tok.encode(text, { add_special_tokens: false }).ids;
  // GPT-2-layout tokenizers (the shipped ones) encode through the cached byte-level BPE; anything else through tokenizers.js.
  const fast = ByteLevelBpe.fromJson(json);
  return {
    encode: (text) => {
      if (!fast?.handles(text)) return library(text);
      try {
        return fast.encode(text);
      } catch {
        return library(text);
      }
    },
    decode: (ids) => (ids.length === 0 ? '' : tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false })),
    tokenId: (token) => tok.token_to_id(token),
  };
}

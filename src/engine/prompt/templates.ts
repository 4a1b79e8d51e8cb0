// Prompt templates per model family: fill-in-the-middle where the family was trained for it.
import type { Lang } from '../kb/types';

export type ModelFamily = 'qwen2.5-coder' | 'starcoder2' | 'codellama' | 'deepseek-coder' | 'plain';

export interface FimTemplate {
  family: ModelFamily;
  /** Builds the model input from the prompt-side text (snippets + prefix) and the suffix. */
  render(prefix: string, suffix: string): string;
  /** Stop sequences the family emits at the end of the middle part. */
  stop: string[];
}

const templates: Record<Exclude<ModelFamily, 'plain'>, FimTemplate> = {
  'qwen2.5-coder': {
    family: 'qwen2.5-coder',
    render: (p, s) => `<|fim_prefix|>${p}<|fim_suffix|>${s}<|fim_middle|>`,
    stop: ['<|endoftext|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_sep|>', '<|im_end|>'],
  },
  starcoder2: {
    family: 'starcoder2',
    render: (p, s) => `<fim_prefix>${p}<fim_suffix>${s}<fim_middle>`,
    stop: ['<|endoftext|>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>'],
  },
  codellama: {
    family: 'codellama',
    render: (p, s) => `<PRE> ${p} <SUF>${s} <MID>`,
    stop: ['<EOT>', '</s>', '<PRE>', '<SUF>', '<MID>'],
  },
  'deepseek-coder': {
    family: 'deepseek-coder',
    render: (p, s) => `<｜fim▁begin｜>${p}<｜fim▁hole｜>${s}<｜fim▁end｜>`,
    stop: ['<｜end▁of▁sentence｜>', '<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>', '<|EOT|>'],
  },
};

/** Guess the family from a model name such as `qwen2.5-coder:1.5b-base` or `bigcode/starcoder2-3b`. */
export function modelFamilyOf(modelName: string): ModelFamily {
  const n = modelName.toLowerCase();
  if (/qwen2\.5-coder|qwen-2\.5-coder|qwen3-coder/.test(n)) return 'qwen2.5-coder';
  if (/starcoder2|starcoder/.test(n)) return 'starcoder2';
  if (/codellama|code-llama/.test(n)) return 'codellama';
  if (/deepseek-coder/.test(n)) return 'deepseek-coder';
  return 'plain';
}

export function fimTemplate(family: ModelFamily): FimTemplate | undefined {
  return family === 'plain' ? undefined : templates[family];
}

/** The line-comment marker used to head snippets with their path. */
export function commentPrefix(lang: Lang): string {
  return lang === 'python' ? '#' : '//';
}

// Prompt templates per model family: fill-in-the-middle where the family was trained for it.
import type { Lang } from '../kb/types';

export type ModelFamily = 'qwen2.5-coder' | 'starcoder2' | 'codellama' | 'deepseek-coder' | 'plain';

interface FimTemplate {
  family: ModelFamily;
  /** Builds the model input from the prompt-side text (snippets + prefix) and the suffix. */
  render(prefix: string, suffix: string): string;
  /** Stop sequences the family emits at the end of the middle part. */
  stop: string[];
  /**
   * Whether the cursor's line may open the middle part (the prompt ends with the line typed so far):
   * a family whose markers are single tokens read as the model's own start of the middle. Code Llama's
   * form puts spaces around its markers, and a middle begun after them is not a documented form.
   */
  lineInMiddle: boolean;
}

const templates: Record<Exclude<ModelFamily, 'plain'>, FimTemplate> = {
  'qwen2.5-coder': {
    family: 'qwen2.5-coder',
    render: (p, s) => `<|fim_prefix|>${p}<|fim_suffix|>${s}<|fim_middle|>`,
    stop: ['<|endoftext|>', '<|fim_prefix|>', '<|fim_suffix|>', '<|fim_middle|>', '<|file_sep|>', '<|im_end|>'],
    lineInMiddle: true,
  },
  starcoder2: {
    family: 'starcoder2',
    render: (p, s) => `<fim_prefix>${p}<fim_suffix>${s}<fim_middle>`,
    stop: ['<|endoftext|>', '<fim_prefix>', '<fim_suffix>', '<fim_middle>', '<file_sep>'],
    lineInMiddle: true,
  },
  codellama: {
    family: 'codellama',
    render: (p, s) => `<PRE> ${p} <SUF>${s} <MID>`,
    stop: ['<EOT>', '</s>', '<PRE>', '<SUF>', '<MID>'],
    lineInMiddle: false,
  },
  'deepseek-coder': {
    family: 'deepseek-coder',
    render: (p, s) => `<｜fim▁begin｜>${p}<｜fim▁hole｜>${s}<｜fim▁end｜>`,
    stop: ['<｜end▁of▁sentence｜>', '<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>', '<|EOT|>'],
    lineInMiddle: true,
  },
};

/**
 * Each family's special tokens a model can write as text: its fill-in-the-middle markers, its
 * repository-level markers, its end and chat tokens. None is code: a suggestion ends at the first
 * one the model writes (generate/postprocess/specialTokens.ts).
 */
export const SPECIAL_TOKENS: Record<Exclude<ModelFamily, 'plain'>, readonly string[]> = {
  'qwen2.5-coder': [
    '<|endoftext|>',
    '<|fim_prefix|>',
    '<|fim_suffix|>',
    '<|fim_middle|>',
    '<|fim_pad|>',
    '<|repo_name|>',
    '<|file_sep|>',
    '<|im_start|>',
    '<|im_end|>',
    '<|object_ref_start|>',
    '<|object_ref_end|>',
    '<|box_start|>',
    '<|box_end|>',
    '<|quad_start|>',
    '<|quad_end|>',
    '<|vision_start|>',
    '<|vision_end|>',
    '<|vision_pad|>',
    '<|image_pad|>',
    '<|video_pad|>',
  ],
  starcoder2: [
    '<|endoftext|>',
    '<fim_prefix>',
    '<fim_suffix>',
    '<fim_middle>',
    '<fim_pad>',
    '<repo_name>',
    '<file_sep>',
    '<gh_stars>',
    '<issue_start>',
    '<issue_comment>',
    '<issue_closed>',
    '<jupyter_start>',
    '<jupyter_text>',
    '<jupyter_code>',
    '<jupyter_output>',
    '<jupyter_script>',
    '<empty_output>',
  ],
  codellama: ['<PRE>', '<SUF>', '<MID>', '<EOT>', '</s>'],
  'deepseek-coder': ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<｜fim▁begin｜>', '<｜fim▁hole｜>', '<｜fim▁end｜>', '<|EOT|>'],
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

/**
 * How retrieved snippets enter the prompt: `comment` (a comment block headed by each path, then the
 * file's path: CodeRAG's form, for any model) or `files` (the repository-level form the family was
 * pretrained on: each snippet as a file of the repository, then the current file). `auto`: `files`
 * for the families whose documentation gives a repository format (Qwen2.5-Coder: `<|repo_name|>`,
 * `<|file_sep|>`; StarCoder2: `<repo_name>`, `<file_sep>`), `comment` for the others.
 */
export type RepoFormat = 'auto' | 'files' | 'comment';
export const REPO_FORMATS: readonly RepoFormat[] = ['auto', 'files', 'comment'];

/** The families with a documented repository-level format. */
function hasRepoFormat(family: ModelFamily): boolean {
  return family === 'qwen2.5-coder' || family === 'starcoder2';
}

export function resolveRepoFormat(format: RepoFormat | undefined, family: ModelFamily): 'files' | 'comment' {
  if (!hasRepoFormat(family)) return 'comment';
  return format === 'comment' ? 'comment' : 'files';
}

/**
 * The repository-level prompt: the repository's name, each snippet as a file (`path` then its
 * text), then the current file's path and its code — fill-in-the-middle when `suffix` is given.
 * Undefined for a family without a documented form.
 */
export function renderRepoLevel(
  family: ModelFamily,
  repoName: string,
  files: ReadonlyArray<{ path: string; text: string }>,
  filePath: string,
  prefix: string,
  suffix: string | undefined,
): string | undefined {
  const body = (t: string): string => t.trimEnd();
  // Neighbouring snippets of one file are one file of the repository.
  const merged: Array<{ path: string; text: string }> = [];
  for (const f of files) {
    const last = merged.at(-1);
    if (last && last.path === f.path) last.text = `${body(last.text)}\n\n${f.text}`;
    else merged.push({ path: f.path, text: f.text });
  }
  files = merged;
  if (family === 'qwen2.5-coder') {
    const repoFiles = files.map((f) => `<|file_sep|>${f.path}\n${body(f.text)}\n`).join('');
    const head = `<|repo_name|>${repoName}\n${repoFiles}<|file_sep|>${filePath}\n`;
    return suffix !== undefined ? `${head}<|fim_prefix|>${prefix}<|fim_suffix|>${suffix}<|fim_middle|>` : `${head}${prefix}`;
  }
  if (family === 'starcoder2') {
    const head = `<repo_name>${repoName}${files.map((f) => `<file_sep>${f.path}\n${body(f.text)}\n`).join('')}<file_sep>`;
    return suffix !== undefined
      ? `${head}<fim_prefix>${filePath}\n${prefix}<fim_suffix>${suffix}<fim_middle>`
      : `${head}${filePath}\n${prefix}`;
  }
  return undefined;
}

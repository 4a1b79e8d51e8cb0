// Retrieval-augmented prompt under a token budget (CodeRAG section 2.4; docs/ARCHITECTURE.md "Final prompt").
// Snippets come first, each headed by its repo-relative path, in the order given (deterministic,
// so a model server's prompt cache is reused between keystrokes); then the current file's path
// and the code context. Snippets are trimmed before the code context is squeezed, but a context
// over half the budget is cut from the left so the snippets keep up to half of it.
import type { Lang } from '../kb/types';
import { commentPrefix, fimTemplate, renderRepoLevel, resolveRepoFormat, type ModelFamily, type RepoFormat } from './templates';

export interface PromptSnippet {
  path: string;
  text: string;
  /** The snippet's heading line instead of its path (ProCC's "Compare this snippet from <file>:"). */
  heading?: string;
  /** Budgeted before the others (its place in the order stays): ProCC's one similar window. */
  pinned?: boolean;
  /** At most this many tokens of the snippet (its head) enter the prompt. */
  maxTokens?: number;
}

function headingOf(s: PromptSnippet): string {
  return s.heading ?? s.path;
}

export interface PromptInput {
  lang: Lang;
  /** Repo-relative path of the file being completed. */
  filePath: string;
  /** Text before the cursor. */
  prefix: string;
  /** Text after the cursor ('' when none). */
  suffix: string;
  snippets: readonly PromptSnippet[];
  family: ModelFamily;
  /** Total prompt budget in tokens (default 2,048). */
  budgetTokens?: number;
  /** Share of the budget the suffix may take at most (default 0.15). */
  suffixShare?: number;
  /** Share of the budget the code context keeps at least when snippets want more (default 0.5, CodeRAG's rule). */
  contextShare?: number;
  countTokens?: (text: string) => number;
  /** How snippets enter the prompt (templates.ts RepoFormat; default `auto`). */
  repoFormat?: RepoFormat;
  /** The repository's name, for the `files` form. */
  repoName?: string;
}

export interface FittedPrompt {
  /** The text sent to the model (FIM-rendered when the family supports it and a suffix exists). */
  prompt: string;
  /** Prompt-side text without the FIM wrapper: snippets + header + prefix. */
  promptPrefix: string;
  /** The suffix actually included (possibly cut). */
  suffix: string;
  fim: boolean;
  /** How the snippets entered: a comment block (`comment`) or as the repository's files (`files`). */
  format: 'comment' | 'files';
  /** Snippets that made it in (wholly or cut), in order. */
  snippetsUsed: PromptSnippet[];
  /** Indices into the input's snippets of those used, in order. */
  usedIndices: number[];
  snippetsDropped: number;
  prefixCut: boolean;
  tokens: number;
  stop: string[];
}

/** A calibrated estimate where no tokenizer of the family is at hand: code runs ~3 characters a token. */
const MIN_CUT_SNIPPET_TOKENS = 32;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3);
}

function snippetBlock(lang: Lang, snippets: readonly PromptSnippet[]): string {
  if (snippets.length === 0) return '';
  const c = commentPrefix(lang);
  const body = snippets.map((s) => `${c} ${headingOf(s)}\n${s.text.trimEnd()}\n`).join('\n');
  // Python: inside a string block (as CodeRAG's prompt does) so the model reads it as context, not code to continue.
  return lang === 'python' ? `'''\n${body}'''\n` : `/*\n${body}*/\n`;
}

/** Keep the last `maxTokens` worth of text, cut at a line boundary (binary search on the first kept line). */
export function keepTail(text: string, maxTokens: number, count: (t: string) => number): string {
  if (count(text) <= maxTokens) return text;
  const lines = text.split('\n');
  let lo = 1;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (count(lines.slice(mid).join('\n')) <= maxTokens) hi = mid;
    else lo = mid + 1;
  }
  return lines.slice(lo).join('\n');
}

/** Keep the first `maxTokens` worth of text, cut at a line boundary (binary search on the line count). */
function keepHead(text: string, maxTokens: number, count: (t: string) => number): string {
  if (count(text) <= maxTokens) return text;
  const lines = text.split('\n');
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (count(lines.slice(0, mid).join('\n')) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return lines.slice(0, lo).join('\n');
}

export function fitPromptBudget(input: PromptInput): FittedPrompt {
  const count = input.countTokens ?? estimateTokens;
  const budget = input.budgetTokens ?? 2048;
  const template = fimTemplate(input.family);
  const fim = template !== undefined && input.suffix.trim().length > 0;
  const header = `${commentPrefix(input.lang)} ${input.filePath}\n`;

  const suffix = fim ? keepHead(input.suffix, Math.floor(budget * (input.suffixShare ?? 0.15)), count) : '';
  const reserved = count(header) + (fim ? count(suffix) + 8 : 0);
  const overhead = count(snippetBlock(input.lang, [{ path: 'x', text: '' }]));
  const snippetsWanted =
    input.snippets.length === 0
      ? 0
      : overhead + input.snippets.reduce((n, s) => n + count(`${commentPrefix(input.lang)} ${headingOf(s)}\n${s.text}\n\n`), 0);
  // CodeRAG's rule (contextShare 0.5): a context within half the budget stays whole and the
  // snippets are cut; a larger context is cut from the left so that the snippets keep up to half.
  const contextCap = Math.max(0, budget - reserved - Math.min(snippetsWanted, Math.floor(budget * (1 - (input.contextShare ?? 0.5)))));
  let prefix = input.prefix;
  let prefixCut = false;
  if (count(prefix) > contextCap) {
    prefix = keepTail(prefix, contextCap, count);
    prefixCut = true;
  }
  let remaining = budget - reserved - count(prefix);

  // Snippets fill what the context leaves, pinned ones first, then in order; the first one that
  // does not fit is cut, the rest dropped. The prompt keeps the given order.
  const kept = new Map<PromptSnippet, PromptSnippet>();
  remaining -= overhead;
  const byPriority = [...input.snippets.filter((s) => s.pinned), ...input.snippets.filter((s) => !s.pinned)];
  for (const given of byPriority) {
    if (remaining <= 0) break;
    const capped =
      given.maxTokens !== undefined && count(given.text) > given.maxTokens
        ? { ...given, text: keepHead(given.text, given.maxTokens, count) }
        : given;
    if (capped.text.trim() === '') continue;
    const snippet = capped;
    const cost = count(`${commentPrefix(input.lang)} ${headingOf(snippet)}\n${snippet.text}\n\n`);
    if (cost <= remaining) {
      kept.set(given, snippet);
      remaining -= cost;
    } else {
      // A sliver of a snippet is noise: cut one in only when a useful part of it fits.
      const room = remaining - count(`${headingOf(snippet)}\n`) - 4;
      const cut = room >= MIN_CUT_SNIPPET_TOKENS ? keepHead(snippet.text, room, count) : '';
      if (cut.trim().length > 0) kept.set(given, { ...snippet, text: cut });
      remaining = 0;
    }
  }
  const usedIndices = input.snippets.flatMap((s, i) => (kept.has(s) ? [i] : []));
  const used = usedIndices.map((i) => kept.get(input.snippets[i]!)!);
  const format = resolveRepoFormat(input.repoFormat, input.family);
  const files =
    format === 'files'
      ? renderRepoLevel(input.family, input.repoName ?? '', used, input.filePath, prefix, fim ? suffix : undefined)
      : undefined;
  // Without a suffix the repository form is already the whole prompt-side text; only the FIM form needs a second rendering.
  const promptPrefix =
    files === undefined
      ? snippetBlock(input.lang, used) + header + prefix
      : fim
        ? (renderRepoLevel(input.family, input.repoName ?? '', used, input.filePath, prefix, undefined) ?? files)
        : files;
  const prompt = files ?? (fim && template ? template.render(promptPrefix, suffix) : promptPrefix);
  return {
    prompt,
    promptPrefix,
    suffix,
    fim,
    format: files !== undefined ? 'files' : 'comment',
    snippetsUsed: used,
    usedIndices,
    snippetsDropped: input.snippets.length - used.length,
    prefixCut,
    tokens: count(prompt),
    stop: template?.stop ?? [],
  };
}

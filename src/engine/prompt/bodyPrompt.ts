// The body mode's prompt (Rambo; docs/ARCHITECTURE.md "Papers: implementation notes"; the body mode's step e). Plain models get Rambo's
// form: `// Here are some relevant code fragments from other files of the repo:`, each fragment
// headed `// the below code fragment can be found in:` / `// <path>` with its lines commented,
// then `// Based on above, complete the method body of the class` and the code before the cursor
// (a left-to-right model continues it, so the `<FILL_FUNCTION_BODY>` marker and the right
// context are left out). FIM families get the same fragments above the file and the right
// context as the suffix. Fragments are chosen best first under the token budget and laid out
// best last, nearest the cursor.
import type { Lang } from '../kb/types';
import { estimateTokens, keepTail, type PromptSnippet } from './fitPromptBudget';
import { commentPrefix, fimTemplate, type ModelFamily } from './templates';

export interface BodyPromptInput {
  lang: Lang;
  filePath: string;
  prefix: string;
  suffix: string;
  /** Best first. */
  snippets: readonly PromptSnippet[];
  family: ModelFamily;
  /** `rambo`: Rambo's commented fragments and instruction; `block`: the line mode's layout (fragments in one comment block / string). */
  form?: 'rambo' | 'block';
  budgetTokens: number;
  /** Share of the budget the suffix may take at most (FIM). */
  suffixShare: number;
  /** Share of the budget the code before the cursor keeps at least when fragments want more. */
  contextShare?: number;
  countTokens?: (text: string) => number;
}

export interface BodyPrompt {
  prompt: string;
  fim: boolean;
  /** The fragments that made it in, best first. */
  snippetsUsed: PromptSnippet[];
  snippetsDropped: number;
  prefixCut: boolean;
  tokens: number;
  stop: string[];
}

function fragment(lang: Lang, s: PromptSnippet, form: 'rambo' | 'block'): string {
  const c = commentPrefix(lang);
  if (form === 'block') return `${c} ${s.path}\n${s.text.trimEnd()}\n\n`;
  const lines = s.text.trimEnd().split('\n');
  return `${c} the below code fragment can be found in:\n${c} ${s.path}\n${lines.map((l) => `${c} ${l}`).join('\n')}\n`;
}

export function bodyPrompt(input: BodyPromptInput): BodyPrompt {
  const count = input.countTokens ?? estimateTokens;
  const c = commentPrefix(input.lang);
  const template = fimTemplate(input.family);
  const fim = template !== undefined && input.suffix.trim().length > 0;
  const form = input.form ?? 'rambo';
  const intro =
    form === 'rambo'
      ? `${c} Here are some relevant code fragments from other files of the repo:\n`
      : input.lang === 'python'
        ? "'''\n"
        : '/*\n';
  const instruction =
    form === 'rambo' ? `${c} Based on above, complete the method body of the class\n` : input.lang === 'python' ? "'''\n" : '*/\n';
  const header = `${c} ${input.filePath}\n`;
  const suffix = fim ? input.suffix.slice(0, Math.floor(input.budgetTokens * input.suffixShare) * 3) : '';
  const reserved = count(intro) + count(instruction) + count(header) + (fim ? count(suffix) + 8 : 0);
  const fragments = input.snippets.map((s) => ({ s, text: fragment(input.lang, s, form) }));
  const wanted = fragments.reduce((n, f) => n + count(f.text), 0);
  const contextCap = Math.max(
    0,
    input.budgetTokens - reserved - Math.min(wanted, Math.floor(input.budgetTokens * (1 - (input.contextShare ?? 0.5)))),
  );
  const prefix = keepTail(input.prefix, contextCap, count);
  let remaining = input.budgetTokens - reserved - count(prefix);
  const used: Array<{ s: PromptSnippet; text: string }> = [];
  for (const f of fragments) {
    const cost = count(f.text);
    if (cost > remaining) continue;
    used.push(f);
    remaining -= cost;
  }
  const block =
    used.length > 0
      ? intro +
        [...used]
          .reverse()
          .map((f) => f.text)
          .join('') +
        instruction
      : '';
  const promptPrefix = block + header + prefix;
  const prompt = fim && template ? template.render(promptPrefix, suffix) : promptPrefix;
  return {
    prompt,
    fim,
    snippetsUsed: used.map((f) => f.s),
    snippetsDropped: input.snippets.length - used.length,
    prefixCut: prefix !== input.prefix,
    tokens: count(prompt),
    stop: template?.stop ?? [],
  };
}

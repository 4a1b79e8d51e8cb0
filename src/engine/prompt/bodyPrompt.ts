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
  /** How the fragments are laid out; absent: Rambo's commented fragments and instruction (RAMBO_LAYOUT). */
  layout?: BodyPromptLayout;
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

/** How the body prompt lays out its fragments: the text before them, each fragment, the text between them and the file. */
export interface BodyPromptLayout {
  intro(lang: Lang): string;
  fragment(lang: Lang, s: PromptSnippet): string;
  instruction(lang: Lang): string;
}

/** Rambo's layout: each fragment's lines commented under its path, then Rambo's instruction. */
export const RAMBO_LAYOUT: BodyPromptLayout = {
  intro: (lang) => `${commentPrefix(lang)} Here are some relevant code fragments from other files of the repo:\n`,
  fragment: (lang, s) => {
    const c = commentPrefix(lang);
    const lines = s.text.trimEnd().split('\n');
    return `${c} the below code fragment can be found in:\n${c} ${s.path}\n${lines.map((l) => `${c} ${l}`).join('\n')}\n`;
  },
  instruction: (lang) => `${commentPrefix(lang)} Based on above, complete the method body of the class\n`,
};

export function bodyPrompt(input: BodyPromptInput): BodyPrompt {
  const count = input.countTokens ?? estimateTokens;
  const c = commentPrefix(input.lang);
  const template = fimTemplate(input.family);
  const fim = template !== undefined && input.suffix.trim().length > 0;
  const layout = input.layout ?? RAMBO_LAYOUT;
  const intro = layout.intro(input.lang);
  const instruction = layout.instruction(input.lang);
  const header = `${c} ${input.filePath}\n`;
  const suffix = fim ? input.suffix.slice(0, Math.floor(input.budgetTokens * input.suffixShare) * 3) : '';
  const reserved = count(intro) + count(instruction) + count(header) + (fim ? count(suffix) + 8 : 0);
  const fragments = input.snippets.map((s) => ({ s, text: layout.fragment(input.lang, s) }));
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

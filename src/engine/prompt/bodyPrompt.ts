// The body mode's prompt (Rambo; docs/ARCHITECTURE.md "Papers: implementation notes"; the body mode's step e). Plain models get Rambo's
// form: `// Here are some relevant code fragments from other files of the repo:`, each fragment
// headed `// the below code fragment can be found in:` / `// <path>` with its lines commented,
// then `// Based on above, complete the method body of the class` and the code before the cursor
// (a left-to-right model continues it, so the `<FILL_FUNCTION_BODY>` marker and the right
// context are left out). FIM families get the same fragments above the file and the right
// context as the suffix. Fragments are chosen best first under the token budget and, at a new
// place, laid out best last, nearest the cursor; later ones are appended (fitPromptBudget's place layout).
import type { Lang } from '../kb/types';
import {
  fitPromptBudget,
  type BlockForm,
  type FittedPrompt,
  type PlaceLayout,
  type PromptInput,
  type PromptSnippet,
} from './fitPromptBudget';
import { commentPrefix } from './templates';

/** The line prompt's input (fitPromptBudget) with the body's fragment layout and its place; the code's share is the body's own. */
type BodyPromptInput = Pick<
  PromptInput,
  'lang' | 'filePath' | 'prefix' | 'suffix' | 'snippets' | 'family' | 'contextShare' | 'countTokens'
> & {
  budgetTokens: number;
  suffixShare: number;
  /** How the fragments are laid out; absent: Rambo's commented fragments and instruction (RAMBO_LAYOUT). */
  layout?: BodyPromptLayout;
  /** The place of work's layout from the last body prompt here (promptMemory.ts), updated in place; absent: a new place. */
  place?: PlaceLayout;
};

/** The fitted prompt as the body mode reads it. */
export type BodyPrompt = Pick<
  FittedPrompt,
  | 'prompt'
  | 'fim'
  | 'snippetsUsed'
  | 'usedIndices'
  | 'snippetsDropped'
  | 'prefixCut'
  | 'tokens'
  | 'stop'
  | 'head'
  | 'blockChanged'
  | 'budgetTokens'
  | 'layout'
>;

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

/** The body prompt's block in `layout`'s form: its intro, the fragments (a new place's best last, nearest the cursor), its instruction. */
function bodyBlockForm(layout: BodyPromptLayout): BlockForm {
  return {
    render: (lang, snippets) =>
      snippets.length === 0 ? '' : layout.intro(lang) + snippets.map((s) => layout.fragment(lang, s)).join('') + layout.instruction(lang),
    snippet: (lang, s) => layout.fragment(lang, s),
    frame: (lang) => layout.intro(lang) + layout.instruction(lang),
    bestLast: true,
  };
}

/**
 * The body prompt, laid out as the line prompt is (fitPromptBudget): at one place of work its
 * fragments stay put and the code keeps a stable left edge, so a model server reuses the prompt
 * it read at the last keystroke.
 */
export function bodyPrompt(input: BodyPromptInput): BodyPrompt {
  const { layout, place, ...rest } = input;
  return fitPromptBudget({ ...rest, ...(place ? { layout: place } : {}), blockForm: bodyBlockForm(layout ?? RAMBO_LAYOUT) });
}

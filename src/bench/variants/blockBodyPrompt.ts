// The body prompt laid out as the line mode lays out its snippets (`--body-prompt block`): every
// fragment under its path in one comment block (Python: a string), instead of Rambo's commented
// fragments and instruction.
import { commentPrefix } from '../../engine/prompt/templates';
import type { BodyPromptLayout } from '../../engine/prompt/bodyPrompt';

export const BLOCK_LAYOUT: BodyPromptLayout = {
  intro: (lang) => (lang === 'python' ? "'''\n" : '/*\n'),
  fragment: (lang, s) => `${commentPrefix(lang)} ${s.path}\n${s.text.trimEnd()}\n\n`,
  instruction: (lang) => (lang === 'python' ? "'''\n" : '*/\n'),
};

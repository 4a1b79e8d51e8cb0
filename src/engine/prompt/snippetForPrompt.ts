// A retrieval candidate as the prompt shows it (CodeRAG 2.4): the prompt heads each snippet with
// its repo-relative path itself, so a knowledge-base stub's own `# path` line is dropped.
import type { Candidate } from '../retrieve/types';
import type { PromptSnippet } from './fitPromptBudget';

export function snippetForPrompt(c: Candidate): PromptSnippet {
  const text = c.snippet.text;
  const first = text.slice(0, text.indexOf('\n') + 1);
  const isHeader = /^\s*(#|\/\/)\s*\S+\s*$/.test(first) && first.includes(c.snippet.path);
  return { path: c.snippet.path, text: isHeader ? text.slice(first.length) : text };
}

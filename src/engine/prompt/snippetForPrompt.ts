// A retrieval candidate as the prompt shows it (CodeRAG 2.4): rendered by renderKnowledge.ts
// (an item compact, code masked), without the stub's own `# path` line since the prompt heads each
// snippet with its repo-relative path itself.
import type { Candidate, Snippet } from '../retrieve/types';
import type { PromptSnippet } from './fitPromptBudget';
import { formOf, renderSnippet } from './renderKnowledge';

/** Renderings already made, compact and whole (a prompt is laid out more than once per request; contexts read it again). */
const rendered = { compact: new WeakMap<Snippet, string>(), whole: new WeakMap<Snippet, string>() };
/** Snippets whose text is already a rendering (shownCandidate's): shown as they are. */
const shown = new WeakSet<Snippet>();

/**
 * `whole`: definitions with their bodies (string values still masked), for the shipped in-process
 * model, which reads them better than the compact form (docs/BENCHMARKS.md "Compact knowledge renderings").
 */
export function snippetForPrompt(c: Candidate, whole = false): PromptSnippet {
  const s = c.snippet;
  if (shown.has(s)) return { path: s.path, text: s.text };
  const cache = whole ? rendered.whole : rendered.compact;
  let text = cache.get(s);
  if (text === undefined) {
    text = renderSnippet(s, formOf(c, whole)).text;
    cache.set(s, text);
  }
  return { path: s.path, text };
}

/** The candidate with the text the prompt shows: the contexts a pipeline reports carry what the model read. */
export function shownCandidate(c: Candidate, whole = false): Candidate {
  if (shown.has(c.snippet)) return c;
  const snippet: Snippet = { ...c.snippet, text: snippetForPrompt(c, whole).text };
  shown.add(snippet);
  return { ...c, snippet };
}

// A retrieval candidate as the prompt shows it (CodeRAG 2.4): rendered by renderKnowledge.ts
// (an item compact, code masked), without the stub's own `# path` line since the prompt heads each
// snippet with its repo-relative path itself.
import type { Candidate, Snippet } from '../retrieve/types';
import type { PromptSnippet } from './fitPromptBudget';
import { formOf, isCutSummary, renderBrief, renderSnippet } from './renderKnowledge';

/**
 * Renderings already made, compact and whole (a prompt is laid out more than once per request; contexts read it again),
 * with the names in sight they were made for.
 */
type Rendered = { text: string; brief?: string; inSight: ReadonlySet<string> | undefined };
const rendered = { compact: new WeakMap<Snippet, Rendered>(), whole: new WeakMap<Snippet, Rendered>() };
/** Snippets whose text is already a rendering (shownCandidate's): shown as they are. */
const shown = new WeakSet<Snippet>();

/**
 * `whole`: definitions with their bodies (string values still masked), for the shipped in-process
 * model, which reads them better than the compact form (docs/BENCHMARKS.md "Compact knowledge renderings").
 */
export function snippetForPrompt(c: Candidate, whole = false, inSight?: ReadonlySet<string>, withBrief = false): PromptSnippet {
  const s = c.snippet;
  if (shown.has(s)) return { path: s.path, text: s.text };
  const cache = whole ? rendered.whole : rendered.compact;
  const form = formOf(c, whole);
  // Only a cut summary reads the names in sight: every other rendering stays cached from one place to the next.
  const sight = isCutSummary(s, form) ? inSight : undefined;
  let made = cache.get(s);
  if (made === undefined || made.inSight !== sight) {
    made = { text: renderSnippet(s, form, sight).text, inSight: sight };
    cache.set(s, made);
  }
  // The compact form's brief (renderBrief), where it is shorter: what a model server's block shows of an item it has no room for whole.
  if (withBrief && form === 'compact' && made.brief === undefined) made.brief = renderBrief(s, sight) ?? '';
  // '' marks an item with no brief, so that it is not looked for again.
  const brief = withBrief && made.brief && made.brief.length < made.text.length ? made.brief : undefined;
  return { path: s.path, text: made.text, ...(brief !== undefined ? { brief } : {}) };
}

/** The candidate with `text`, the text a prompt showed of it (cut or brief). */
export function shownAs(c: Candidate, text: string): Candidate {
  const snippet: Snippet = { ...c.snippet, text };
  shown.add(snippet);
  return { ...c, snippet };
}

/** The candidate with the text the prompt shows: the contexts a pipeline reports carry what the model read. */
export function shownCandidate(c: Candidate, whole = false, inSight?: ReadonlySet<string>): Candidate {
  if (shown.has(c.snippet)) return c;
  const snippet: Snippet = { ...c.snippet, text: snippetForPrompt(c, whole, inSight).text };
  shown.add(snippet);
  return { ...c, snippet };
}

// Rambo's steps, one function each with a typed input and result (engine/pipeline/bodyMode.ts runs
// them in order, timed, and writes the trace from their results): a. the signature-similar methods,
// b. the sketch, c. the sketch's essential elements, d. their usages, e. the composed fragments,
// f. the body prompt and the body's cut.
import type { Lang } from '../kb/types';
import type { Parsers } from '../kb/parsers';
import type { GenerateRequest, GenerateResult } from '../generate/types';
import type { ModelFamily } from '../prompt/templates';
import { stripControlChars } from '../generate/postprocess/controlChars';
import { capLength, cutAtPlaceholder } from '../generate/postprocess/postprocess';
import { cutAtMalformed } from '../generate/postprocess/wellFormed';
import { bodyPrompt, type BodyPrompt, type BodyPromptLayout } from '../prompt/bodyPrompt';
import { fittedSummary, type PlaceLayout } from '../prompt/fitPromptBudget';
import { shownCandidate, snippetForPrompt } from '../prompt/snippetForPrompt';
import type { Candidate, Snippet } from '../retrieve/types';
import { raceDeadline } from '../util/abort';
import { cutBody, missingBodyIndent, withoutLineCutByLimit } from './cutBody';
import type { BodyTarget } from './detectBody';
import { headFragment, usageFragment } from './fragments';
import { rankUsages, type BodyComposer, type ScoredMethod, type SignatureSearch } from './rambo';
import type { RepoMethods } from './RepoMethods';
import { extractElements, mapElements, type MappedElement, type SketchElements } from './sketchElements';

/** Where the body goes: the method, the code around the cursor with the body's indentation primed, and the stops that end a body. */
export interface BodyAt {
  lang: Lang;
  filePath: string;
  target: BodyTarget;
  /** The code before the cursor as the model sees it (`primed` appended). */
  prefix: string;
  suffix: string;
  /** The indentation the prompt adds, which begins the inserted text. */
  primed: string;
  stops: string[];
}

/** How a body prompt is laid out and sized (the drafting model's family and token count). */
export interface BodyPromptSettings {
  family: ModelFamily;
  countTokens?: (text: string) => number;
  layout?: BodyPromptLayout;
  suffixShare: number;
}

/** Where the body goes for `request`: a cursor at the start of an empty line gets the body's indentation (prompt and inserted text). */
export function bodyAt(request: { lang: Lang; filePath: string; prefix: string; suffix: string }, target: BodyTarget): BodyAt {
  const sigIndentText = (request.prefix.split('\n')[target.signatureRow] ?? '').match(/^\s*/)?.[0] ?? '';
  const primed = missingBodyIndent(request.lang, request.prefix, sigIndentText);
  return {
    lang: request.lang,
    filePath: request.filePath,
    target,
    prefix: request.prefix + primed,
    suffix: request.suffix,
    primed,
    stops: bodyStops(request.lang, target.signatureIndent),
  };
}

/** Stops that end a body early where the model writes past it (the cut rule still decides). */
function bodyStops(lang: Lang, indent: number): string[] {
  const pad = ' '.repeat(indent);
  return lang === 'java'
    ? [`\n${pad}}`]
    : [`\n${pad}def `, `\n${pad}async def `, `\n${pad}@`, ...(indent === 0 ? ['\nclass ', '\nif __name__'] : [])];
}

/**
 * The body mode's cut of the model's answer: control characters and malformed text out, cut where
 * the method ends (at most `maxLines` lines), less the line the token limit cut mid-way (`dropped`),
 * cut at a placeholder and capped at `maxChars`. `prefix` is the code before the cursor as the
 * model saw it (with `primed`, the indentation the prompt added, which begins the text).
 */
export function cutBodyAnswer(
  generated: Pick<GenerateResult, 'text' | 'stoppedBy'>,
  at: { lang: Lang; prefix: string; primed: string; signatureIndent: number },
  limits: { maxLines: number; maxChars: number },
): { text: string; dropped?: string } {
  const raw = cutAtMalformed(stripControlChars(generated.text));
  const body = cutBody(raw, at.lang, at.prefix, limits.maxLines, at.signatureIndent);
  const { body: kept, dropped } = withoutLineCutByLimit(
    body ? at.primed + body : '',
    raw,
    generated.stoppedBy,
    at.lang,
    at.prefix,
    at.signatureIndent,
  );
  return { text: capLength(cutAtPlaceholder(kept), limits.maxChars), ...(dropped !== undefined ? { dropped } : {}) };
}

function candidateOf(snippet: Snippet, kind: 'usage' | 'definition' | 'signature', reason?: string): Candidate {
  return { snippet, paths: [], scores: {}, ranks: {}, reasons: [reason ? `${kind} ${reason}` : kind], origin: { kind } };
}

function usageCandidate(m: ScoredMethod): Candidate {
  return candidateOf(usageFragment(m.item, m.via ?? []), 'usage', `via ${(m.via ?? []).join(', ')}`);
}

function signatureCandidate(m: ScoredMethod): Candidate {
  return candidateOf(headFragment(m.item), 'signature');
}

/** The body of a method's text after its declaration (the pseudo-sketch of `none`). */
function methodBody(m: ScoredMethod): string {
  const at = m.item.text.indexOf(m.item.signature);
  return at < 0 ? m.item.text : m.item.text.slice(at + m.item.signature.length).replace(/^\s*[{:]?/, '');
}

/** A body prompt's request: the fragments (best first), the code's share, the budget and the place's layout (none: a new place). */
interface BodyPromptAsk {
  at: BodyAt;
  settings: BodyPromptSettings;
  ranked: readonly Candidate[];
  contextShare: number;
  budgetTokens: number;
  place?: PlaceLayout;
}

/** The body prompt over `ranked` fragments (best first) within `budgetTokens`. */
function promptForBody(ask: BodyPromptAsk): BodyPrompt {
  const { at, settings } = ask;
  return bodyPrompt({
    lang: at.lang,
    filePath: at.filePath,
    prefix: at.prefix,
    ...(settings.layout ? { layout: settings.layout } : {}),
    suffix: at.suffix,
    snippets: ask.ranked.map((c) => snippetForPrompt(c)),
    family: settings.family,
    budgetTokens: ask.budgetTokens,
    suffixShare: settings.suffixShare,
    contextShare: ask.contextShare,
    ...(settings.countTokens ? { countTokens: settings.countTokens } : {}),
    ...(ask.place ? { place: ask.place } : {}),
  });
}

interface SignatureHitsInput {
  at: BodyAt;
  repo: RepoMethods | undefined;
  search: SignatureSearch;
  topK: number;
  signal: AbortSignal;
}

/** Step a: the top-k signature-similar methods and how they were compared (throws where the knowledge base is not ready). */
export async function signatureHitsStep(input: SignatureHitsInput): Promise<{ methods: ScoredMethod[]; how?: string }> {
  if (!input.repo) throw new Error('the knowledge base is not ready');
  return input.search.signatureHits(input.at.target, input.at.filePath, input.repo, input.topK, input.signal);
}

export interface SketchInput {
  at: BodyAt;
  prompt: BodyPromptSettings & { budgetTokens: number; contextShare: number };
  signatureHits: readonly ScoredMethod[];
  /** The generate request's parts that hold a body open (bodyHold). */
  hold: Pick<GenerateRequest, 'holdEnd' | 'holdLine'>;
  maxNewTokens: number;
  temperature: number;
  timeoutMs: number;
  maxLines: number;
  /** The drafting model's call (through the pipeline's redaction boundary and model slot). */
  generate: (ask: GenerateRequest, signal: AbortSignal) => Promise<GenerateResult>;
  signal: AbortSignal;
}

/** Step b: the model's sketch of the body, drafted from the signature hits' heads and cut where the method ends. */
export async function sketchStep(input: SketchInput): Promise<string> {
  const { at, prompt: settings } = input;
  const ranked = input.signatureHits.map(signatureCandidate);
  const prompt = promptForBody({ at, settings, ranked, contextShare: settings.contextShare, budgetTokens: settings.budgetTokens });
  const ask: GenerateRequest = {
    prompt: prompt.prompt,
    maxNewTokens: input.maxNewTokens,
    stop: [...prompt.stop, ...at.stops],
    temperature: input.temperature,
    ...input.hold,
  };
  const out = await raceDeadline(
    (s) => input.generate(ask, s),
    input.timeoutMs,
    input.signal,
    () => new Error(`sketch exceeded ${input.timeoutMs} ms`),
  );
  const text = cutBody(stripControlChars(out.text), at.lang, at.prefix, input.maxLines, at.target.signatureIndent);
  return text ? at.primed + text : '';
}

interface ElementsInput {
  parsers: Parsers;
  lang: Lang;
  repo: RepoMethods | undefined;
  /** The sketch's text ('' where there is none). */
  sketch: string;
  /** The sketch is the model's (not given, not `none`): where it names nothing of the repository, the signature hits' elements stand in. */
  sketchFromModel: boolean;
  signatureHits: readonly ScoredMethod[];
  /** `sketch+similar`: the signature hits' elements join the model sketch's. */
  elements: 'sketch' | 'sketch+similar';
}

interface ElementsResult {
  mapped: MappedElement[];
  identifiers: string[];
  definitions: Snippet[];
  related: Snippet[];
  /** The element names the repository has nothing for. */
  unmapped: string[];
  /** Where the elements came from, where not the sketch alone (the trace's words). */
  from?: string;
}

/** Step c's result where there are no elements (no knowledge base yet, or the step failed). */
export function noElements(): ElementsResult {
  return { mapped: [], identifiers: [], definitions: [], related: [], unmapped: [] };
}

function collectElements(parsers: Parsers, lang: Lang, sources: readonly string[]): SketchElements {
  const all: SketchElements = { types: [], calls: [], fields: [] };
  for (const text of sources) {
    const e = extractElements(parsers, lang, text);
    all.types.push(...e.types.filter((x) => !all.types.includes(x)));
    all.calls.push(...e.calls.filter((x) => !all.calls.includes(x)));
    all.fields.push(...e.fields.filter((x) => !all.fields.includes(x)));
  }
  return all;
}

/** Step c: the essential code elements of the sketch (else of the signature hits' bodies), mapped to the repository. */
export function elementsStep(input: ElementsInput): ElementsResult {
  const { parsers, lang, repo, sketch } = input;
  if (!repo) return noElements();
  const fromSignatureHits = input.signatureHits.map(methodBody);
  let all = collectElements(parsers, lang, sketch ? [sketch] : fromSignatureHits);
  let result: Omit<ElementsResult, 'unmapped'> = { ...mapElements(all, repo, lang), related: [] };
  if (input.sketchFromModel && sketch) {
    if (result.mapped.length === 0) {
      // A sketch that names nothing of the repository (a small model's) leaves the usages to the signature hits' elements.
      all = collectElements(parsers, lang, fromSignatureHits);
      result = {
        ...mapElements(all, repo, lang),
        related: [],
        from: 'signature-similar methods (the sketch named nothing of the repository)',
      };
    } else if (input.elements === 'sketch+similar') {
      // The signature hits' elements as well: their names join the usage search, their definitions a list of their own after the sketch's.
      const more = collectElements(parsers, lang, fromSignatureHits);
      const extra = mapElements(more, repo, lang);
      const known = new Set(result.definitions.map((d) => d.id));
      const seen = new Set(result.mapped.map((m) => m.name));
      result = {
        mapped: [...result.mapped, ...extra.mapped.filter((m) => !seen.has(m.name))],
        identifiers: [...new Set([...result.identifiers, ...extra.identifiers])],
        definitions: result.definitions,
        related: extra.definitions.filter((d) => !known.has(d.id)),
        from: 'sketch, then the signature-similar methods',
      };
      all = { types: [...all.types, ...more.types], calls: [...all.calls, ...more.calls], fields: [...all.fields, ...more.fields] };
    }
  }
  const matchedNames = new Set(result.mapped.map((m) => m.name));
  const unmapped = [...new Set([...all.types, ...all.calls, ...all.fields])].filter((n) => !matchedNames.has(n));
  return { ...result, unmapped };
}

interface UsagesInput {
  at: BodyAt;
  repo: RepoMethods | undefined;
  identifiers: readonly string[];
  sketch: string;
  signatureHits: readonly ScoredMethod[];
  topK: number;
}

/** Step d: the elements' usages, ranked by similarity to the sketch (else to the first signature hits' bodies). */
export function usagesStep(input: UsagesInput): ScoredMethod[] {
  if (!input.repo) return [];
  const rankAgainst = input.sketch || input.signatureHits.slice(0, 3).map(methodBody).join('\n');
  return rankUsages(input.at.target, input.at.filePath, input.identifiers, rankAgainst, input.repo, input.topK);
}

interface ComposeInput {
  compose: BodyComposer;
  usages: readonly ScoredMethod[];
  elements: Pick<ElementsResult, 'definitions' | 'related'>;
  knowledge: readonly Candidate[];
  signatureHits: readonly ScoredMethod[];
}

/** Step e: the prompt's fragments, the lists (usages, definitions, CodeRAG's items, signature hits) in the composer's order. */
export function composeStep(input: ComposeInput): Candidate[] {
  return input.compose({
    usages: input.usages.map(usageCandidate),
    definitions: input.elements.definitions.map((d) => candidateOf(d, 'definition')),
    related: input.elements.related.map((d) => candidateOf(d, 'definition')),
    knowledge: input.knowledge.map((c) => ({ ...c, origin: c.origin ?? { kind: 'knowledge' } })),
    signatures: input.signatureHits.map(signatureCandidate),
  });
}

/**
 * The body prompt as the model stages take it: its text, stops, the candidates in it, its figures (fittedSummary) and, at a place of
 * work, the place's layout after it (the place keeps it for the next keystroke).
 */
export type BodyModelPrompt = { prompt: string; stop: string[]; contexts: Candidate[]; layout?: PlaceLayout } & ReturnType<
  typeof fittedSummary
>;

/** Step f: the body prompt over the composed fragments, laid out in the place's layout (kept across keystrokes) where there is one. */
export function bodyPromptStep(ask: BodyPromptAsk): BodyModelPrompt {
  const prompt = promptForBody(ask);
  return {
    prompt: prompt.prompt,
    stop: prompt.stop,
    contexts: prompt.usedIndices.map((i) => shownCandidate(ask.ranked[i]!)),
    ...(ask.place ? { layout: prompt.layout } : {}),
    ...fittedSummary(prompt),
  };
}

/** Step f's cut: the body the model wrote, cut where the method ends; `message` notes a last line the token limit cut. */
export function bodyCutStep(
  generated: Pick<GenerateResult, 'text' | 'stoppedBy'>,
  at: BodyAt,
  limits: { maxLines: number; maxChars: number },
): { text: string; lead: string; message?: string } {
  const { text, dropped } = cutBodyAnswer(
    generated,
    { lang: at.lang, prefix: at.prefix, primed: at.primed, signatureIndent: at.target.signatureIndent },
    limits,
  );
  if (dropped === undefined) return { text, lead: '' };
  return {
    text,
    lead: '',
    message: `the token limit ended the body mid-way: its unfinished last line was dropped (${JSON.stringify(dropped.slice(0, 60))})`,
  };
}

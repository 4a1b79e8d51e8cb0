// The body mode (Rambo): the cursor in an empty method body -> (a) signature-similar
// methods -> (b) a model sketch of the body -> (c) the sketch's essential elements mapped to the
// repository -> (d) their usages from the identifier index -> (e) prompt -> (f) the whole body,
// cut where the method ends. Each step is timed in the trace; a step that fails degrades the
// answer (CONTRIBUTING.md "Code rules", rule 8). `autoMode` picks the body mode where the syntax tree says so, else line.
import type { Parsers } from '../kb/parsers';
import type { Lang } from '../kb/types';
import { bodyUnfinished, cutBody, missingBodyIndent, withoutLineCutByLimit } from '../body/cutBody';
import { headFragment, usageFragment } from '../body/fragments';
import { detectBodyTarget, guessBodyTarget, type BodyTarget } from '../body/detectBody';
import { composeInTurns, jaccardSignatures, rankUsages, type BodyComposer, type ScoredMethod, type SignatureSearch } from '../body/rambo';
import type { RepoMethods } from '../body/RepoMethods';
import { stripControlChars } from '../generate/postprocess/controlChars';
import { capLength, cutAtPlaceholder } from '../generate/postprocess/postprocess';
import { cutAtMalformed } from '../generate/postprocess/wellFormed';
import { extractElements, mapElements, type MappedElement, type SketchElements } from '../body/sketchElements';
import type { Tokenize } from '../body/tokens';
import { bodyPrompt, type BodyPrompt, type BodyPromptLayout } from '../prompt/bodyPrompt';
import { shownCandidate, snippetForPrompt } from '../prompt/snippetForPrompt';
import type { GenerateRequest, GenerateResult, ModelClient } from '../generate/types';
import { redactingClient } from '../generate/redactBoundary';
import type { Candidate, Snippet } from '../retrieve/types';
import { raceDeadline } from '../util/abort';
import { errorMessage } from '../util/errors';
import { knowledgeStage } from './stages/knowledge';
import { callModel, fileToCopyFrom, prepareModel, promptBudget, runModelStages } from './stages/model';
import { timed } from './stages/timed';
import { isBlank, LINE_MODE } from './modes';
import { newTraceId, type BodyTrace, type CompletionTrace } from './trace';
import type { CompletionMode, CompletionRequest, CompletionResult, RequestContext } from './types';

/** What the body mode reads besides the request: the grammars, the repository's methods, the model's tokenizer. */
export interface BodyModeDeps {
  parsers: Parsers;
  /** The repository's methods and identifier index, once its knowledge base is ready. */
  repo: () => RepoMethods | undefined;
  /** Token ids for signature similarity (Rambo: the model's BPE); absent: subword tokens. */
  tokenize?: Tokenize;
}

/**
 * A sketch given instead of the model's (an evaluation's ceiling): no sketch call; its elements are
 * mapped to the repository as the model's are.
 */
export interface GivenSketch {
  /** What the trace calls the sketch's source. */
  readonly source: string;
  /** The trace's note on the skipped sketch call. */
  readonly note: string;
  readonly text: string;
}

/**
 * Where the body's elements come from: `model` (Rambo: a sketch from the completion model),
 * `none` (the signature-similar methods' bodies; no sketch call), or a sketch given as text.
 */
export type SketchSource = 'model' | 'none' | GivenSketch;

export interface BodyModeOptions {
  sketch?: SketchSource;
  /**
   * The model that drafts the sketch when the pipeline has no completion model: the body mode then stops after its lists, every one of
   * them a context (an evaluation of retrieval whose sketch is still the model's).
   */
  sketchModel?: () => ModelClient;
  /** Step e's order of the lists (usages, definitions, CodeRAG's items, signature hits); absent: in turns (composeInTurns). */
  compose?: BodyComposer;
  /** Step a's search; absent: token Jaccard of the signature keys over deps.tokenize (jaccardSignatures). */
  signatures?: SignatureSearch;
  /** The body prompt's layout of its fragments; absent: Rambo's (RAMBO_LAYOUT). */
  promptLayout?: BodyPromptLayout;
  /**
   * CodeRAG's knowledge items for the request (the line stages' reranked top-u), joining the prompt's list; absent: the pipeline's own line
   * stages (options.body.knowledge).
   */
  knowledge?: (request: CompletionRequest, signal: AbortSignal) => Promise<Candidate[]>;
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

/**
 * The body goes on until it ends (Java: its closing brace; Python: at least one statement), and it
 * may not close the method before its first statement (the cut would leave no body).
 */
export function bodyHold(lang: Lang): Pick<GenerateRequest, 'holdEnd' | 'holdLine'> {
  return { holdEnd: (generated) => bodyUnfinished(lang, generated), holdLine: isBlank };
}

/**
 * The method whose empty body holds the cursor, read from the syntax tree once per request (auto mode's choice and the detect stage share
 * it).
 */
function bodyTargetOf(context: RequestContext, parsers: Parsers): BodyTarget | undefined {
  const { request } = context;
  return context.memo('body.target', () => detectBodyTarget(parsers, request.lang, request.prefix, request.suffix));
}

/** Rambo's composition of the stages for one request. */
export async function completeBody(context: RequestContext, deps: BodyModeDeps, opts: BodyModeOptions): Promise<CompletionResult> {
  const { request, stages, options, signal, trace } = context;
  const sketchSource = opts.sketch ?? 'model';
  const given = typeof sketchSource === 'object' ? sketchSource : undefined;
  const degrade = (e: unknown): { status: 'degraded'; message: string } => ({ status: 'degraded', message: errorMessage(e) });

  // The method: from the syntax tree, else (a forced body request) the last declaration line.
  const found = await timed(
    trace,
    'detect',
    signal,
    () => {
      const detected = bodyTargetOf(context, deps.parsers);
      if (detected) return Promise.resolve({ target: detected, detected: true });
      const guessed = guessBodyTarget(request.lang, request.prefix);
      return Promise.resolve(guessed ? { target: guessed, detected: false } : undefined);
    },
    (e) => ({ value: undefined, ...degrade(e) }),
    stages.checkpoint,
  );
  if (!found) {
    trace.error = { stage: 'detect', kind: 'error', message: 'no method declaration before the cursor' };
    return context.finish([], { contexts: [] });
  }
  const target: BodyTarget = found.target;
  const body: BodyTrace = {
    target: {
      name: target.name,
      ...(target.className ? { className: target.className } : {}),
      signature: target.signature,
      line: target.signatureRow,
      detected: found.detected,
    },
    sketchSource: typeof sketchSource === 'object' ? sketchSource.source : sketchSource,
    signatureSimilar: [],
    elements: [],
    unmapped: [],
    usages: [],
  };
  trace.body = body;
  const repo = deps.repo();

  // a. signature-similar methods
  const signatureHits = await timed<ScoredMethod[]>(
    trace,
    'signatures',
    signal,
    async () => {
      if (!repo) throw new Error('the knowledge base is not ready');
      const search = opts.signatures ?? jaccardSignatures(deps.tokenize);
      const found = await search.signatureHits(target, request.filePath, repo, options.body.topSignature, signal);
      body.signatureMatch = found.how;
      return found.methods;
    },
    (e) => ({ value: [], ...degrade(e) }),
    stages.checkpoint,
  );
  body.signatureSimilar = signatureHits.map((m) => ({ id: m.item.id, score: m.score }));

  const model = stages.model?.();
  // The sketch's model: the completion model, else the one lent for the sketch alone (through the same redaction boundary).
  const drafter = model ?? (opts.sketchModel ? redactingClient(opts.sketchModel()) : undefined);
  if (drafter) await prepareModel(context, drafter);
  const budgetTokens = promptBudget(options, drafter, options.body.maxNewTokens);
  // A cursor at the start of an empty line: the body's indentation goes into the prompt, so the
  // model starts a statement, and into the inserted text.
  const sigIndentText = (request.prefix.split('\n')[target.signatureRow] ?? '').match(/^\s*/)?.[0] ?? '';
  const primed = missingBodyIndent(request.lang, request.prefix, sigIndentText);
  const prefix = request.prefix + primed;
  // The sketch drafts from the signature-similar methods with the line prompt's share of code; the
  // body, whose fragments the sketch chose, keeps the body's (larger) share.
  const promptOf = (ranked: readonly Candidate[], contextShare: number, budget = budgetTokens): BodyPrompt =>
    bodyPrompt({
      lang: request.lang,
      filePath: request.filePath,
      prefix,
      ...(opts.promptLayout ? { layout: opts.promptLayout } : {}),
      suffix: request.suffix,
      snippets: ranked.map((c) => snippetForPrompt(c)),
      family: drafter?.family ?? 'plain',
      budgetTokens: budget,
      suffixShare: options.prompt.suffixShare,
      contextShare,
      ...(drafter?.countTokens ? { countTokens: drafter.countTokens } : {}),
    });
  const stops = bodyStops(request.lang, target.signatureIndent);
  const cut = (raw: string): string => {
    const text = cutBody(raw, request.lang, prefix, options.body.maxLines, target.signatureIndent);
    return text ? primed + text : '';
  };

  // b. sketch
  let sketch = '';
  if (given) {
    sketch = given.text;
    trace.stages.push({ stage: 'sketch', status: 'skipped', elapsedMs: 0, message: given.note });
  } else if (sketchSource === 'none') {
    trace.stages.push({
      stage: 'sketch',
      status: 'skipped',
      elapsedMs: 0,
      message: 'no sketch: elements from the signature-similar methods',
    });
  } else if (!drafter) {
    trace.stages.push({ stage: 'sketch', status: 'skipped', elapsedMs: 0, message: 'no completion model' });
  } else {
    sketch = await timed(
      trace,
      'sketch',
      signal,
      async () => {
        // stages.model is the redaction boundary: the sketch's prompt is redacted there.
        const prompt = promptOf(signatureHits.map(signatureCandidate), options.prompt.contextShare);
        const ask: GenerateRequest = {
          prompt: prompt.prompt,
          maxNewTokens: options.body.sketchTokens,
          stop: [...prompt.stop, ...stops],
          temperature: options.generate.temperature,
          ...bodyHold(request.lang),
        };
        const out = await raceDeadline(
          (s) => callModel(context, drafter, ask, s),
          options.body.sketchTimeoutMs,
          signal,
          () => new Error(`sketch exceeded ${options.body.sketchTimeoutMs} ms`),
        );
        return cut(stripControlChars(out.text));
      },
      (e) => ({ value: '', ...degrade(e) }),
      stages.checkpoint,
    );
  }
  if (sketch) body.sketch = sketch;

  // c. essential code elements
  type Mapped = { mapped: MappedElement[]; identifiers: string[]; definitions: Snippet[]; related: Snippet[] };
  const mapped = await timed<Mapped>(
    trace,
    'elements',
    signal,
    () => {
      if (!repo) return Promise.resolve({ mapped: [], identifiers: [], definitions: [], related: [] });
      const collect = (sources: readonly string[]): SketchElements => {
        const all: SketchElements = { types: [], calls: [], fields: [] };
        for (const text of sources) {
          const e = extractElements(deps.parsers, request.lang, text);
          all.types.push(...e.types.filter((x) => !all.types.includes(x)));
          all.calls.push(...e.calls.filter((x) => !all.calls.includes(x)));
          all.fields.push(...e.fields.filter((x) => !all.fields.includes(x)));
        }
        return all;
      };
      const fromSignatureHits = signatureHits.map(methodBody);
      let all = collect(sketchSource === 'none' || !sketch ? fromSignatureHits : [sketch]);
      let result: Mapped = { ...mapElements(all, repo, request.lang), related: [] };
      if (sketchSource === 'model' && sketch) {
        if (result.mapped.length === 0) {
          // A sketch that names nothing of the repository (a small model's) leaves the usages to the signature hits' elements.
          body.elementsFrom = 'signature-similar methods (the sketch named nothing of the repository)';
          all = collect(fromSignatureHits);
          result = { ...mapElements(all, repo, request.lang), related: [] };
        } else if (options.body.elements === 'sketch+similar') {
          // The signature hits' elements as well: their names join the usage search, their definitions a list of their own after the
          // sketch's.
          body.elementsFrom = 'sketch, then the signature-similar methods';
          const more = collect(fromSignatureHits);
          const extra = mapElements(more, repo, request.lang);
          const known = new Set(result.definitions.map((d) => d.id));
          const seen = new Set(result.mapped.map((m) => m.name));
          result = {
            mapped: [...result.mapped, ...extra.mapped.filter((m) => !seen.has(m.name))],
            identifiers: [...new Set([...result.identifiers, ...extra.identifiers])],
            definitions: result.definitions,
            related: extra.definitions.filter((d) => !known.has(d.id)),
          };
          all = { types: [...all.types, ...more.types], calls: [...all.calls, ...more.calls], fields: [...all.fields, ...more.fields] };
        }
      }
      const matchedNames = new Set(result.mapped.map((m) => m.name));
      body.unmapped = [...new Set([...all.types, ...all.calls, ...all.fields])].filter((n) => !matchedNames.has(n));
      return Promise.resolve(result);
    },
    (e) => ({ value: { mapped: [], identifiers: [], definitions: [], related: [] }, ...degrade(e) }),
    stages.checkpoint,
  );
  body.elements = mapped.mapped;

  // d. usages
  const rankAgainst = sketch || signatureHits.slice(0, 3).map(methodBody).join('\n');
  const usages = await timed<ScoredMethod[]>(
    trace,
    'usages',
    signal,
    () => Promise.resolve(repo ? rankUsages(target, request.filePath, mapped.identifiers, rankAgainst, repo, options.body.topUsages) : []),
    (e) => ({ value: [], ...degrade(e) }),
    stages.checkpoint,
  );
  body.usages = usages.map((m) => ({ id: m.item.id, path: m.item.path, score: m.score, via: m.via ?? [] }));
  // CodeRAG's knowledge items, where the mode was given them: asked at the primed cursor, as the line stages of a body are.
  const knowledge =
    opts.knowledge ??
    (!options.body.knowledge || !stages.hasRetrieval() ? undefined : (asked: CompletionRequest) => knowledgeItems(context, asked));
  const items = knowledge
    ? await timed<Candidate[]>(
        trace,
        'knowledge',
        signal,
        () => knowledge({ ...request, prefix }, signal),
        (e) => ({ value: [], ...degrade(e) }),
        stages.checkpoint,
      )
    : [];
  // Step e's list: by default a usage, a definition of an element, (a CodeRAG item,) a signature hit, in turns (best first).
  const ranked = (opts.compose ?? composeInTurns)({
    usages: usages.map(usageCandidate),
    definitions: mapped.definitions.map((d) => candidateOf(d, 'definition')),
    related: mapped.related.map((d) => candidateOf(d, 'definition')),
    knowledge: items.map((c) => ({ ...c, origin: c.origin ?? { kind: 'knowledge' } })),
    signatures: signatureHits.map(signatureCandidate),
  });
  if (!model) return context.finish([], { contexts: ranked });

  // e. prompt -> f. the body (second model call), cut where the method ends
  const answer = await runModelStages(context, model, {
    maxNewTokens: options.body.maxNewTokens,
    prompt: (budget) => {
      const prompt = promptOf(ranked, options.body.contextShare, budget);
      // Matched by the text the prompt shows, so every candidate whose text the model read is reported.
      const usedTexts = new Set(prompt.snippetsUsed.map((s) => s.text));
      return {
        prompt: prompt.prompt,
        stop: prompt.stop,
        contexts: ranked.filter((c) => usedTexts.has(snippetForPrompt(c).text)).map((c) => shownCandidate(c)),
        trace: {
          tokens: prompt.tokens,
          fim: prompt.fim,
          snippets: prompt.snippetsUsed.map((s) => s.path),
          snippetsDropped: prompt.snippetsDropped,
          prefixCut: prompt.prefixCut,
        },
      };
    },
    generate: { stop: stops, ...bodyHold(request.lang), copyFrom: fileToCopyFrom(request.prefix) },
    // The finished body is checked against the repository (its members, its keyword arguments); its decoding is not constrained:
    // on the validation body cases a mask at every dot cost Python 3 points of ES (the model wrote around the names it was denied).
    checkAt: prefix,
    checkAfterOnly: true,
    postprocess: (generated) => {
      const { text, dropped } = cutBodyAnswer(
        generated,
        { lang: request.lang, prefix, primed, signatureIndent: target.signatureIndent },
        { maxLines: options.body.maxLines, maxChars: options.postprocess.maxChars },
      );
      return {
        text,
        lead: '',
        ...(dropped !== undefined
          ? {
              message:
                `the token limit ended the body mid-way: its unfinished last line was dropped ` +
                `(${JSON.stringify(dropped.slice(0, 60))})`,
            }
          : {}),
      };
    },
  });
  return context.finish(answer.items, { contexts: answer.contexts });
}

/**
 * CodeRAG's knowledge items for the body (the knowledge stage the line mode runs, at the cursor as
 * the line mode primes it); its steps are timed into a trace of their own, the body's trace shows
 * the stage as one step (`knowledge`).
 */
function knowledgeItems(context: RequestContext, asked: CompletionRequest): Promise<Candidate[]> {
  const lead = LINE_MODE.prime?.(asked) ?? '';
  const scratch: CompletionTrace = {
    id: newTraceId(),
    mode: 'line',
    startedAt: new Date().toISOString(),
    filePath: asked.filePath,
    lang: asked.lang,
    stages: [],
    totalMs: 0,
    nonModelMs: 0,
  };
  return knowledgeStage(context, lead ? { ...asked, prefix: asked.prefix + lead } : asked, scratch).then((k) => k.ranked);
}

/** The body mode: Rambo's stages. */
export function bodyMode(deps: BodyModeDeps, opts: BodyModeOptions = {}): CompletionMode {
  return {
    name: 'body',
    prime: (request) => missingBodyIndent(request.lang, request.prefix),
    hold: (request) => bodyHold(request.lang),
    complete: (context: RequestContext) => completeBody(context, deps, opts),
  };
}

/** Body mode (with `body`'s options) where the cursor is in an empty method body (read from the syntax tree), line mode elsewhere. */
export function autoMode(deps: BodyModeDeps, body: BodyModeOptions = {}): CompletionMode {
  const inBody = bodyMode(deps, body);
  return {
    name: 'auto',
    postprocess: LINE_MODE.postprocess,
    select: (context) => (bodyTargetOf(context, deps.parsers) ? inBody : LINE_MODE),
  };
}

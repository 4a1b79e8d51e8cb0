// The body mode (Rambo): the cursor in an empty method body -> (a) signature-similar
// methods -> (b) a model sketch of the body -> (c) the sketch's essential elements mapped to the
// repository -> (d) their usages from the identifier index -> (e) prompt -> (f) the whole body,
// cut where the method ends. Each step is timed in the trace; a step that fails degrades the
// answer (CONTRIBUTING.md "Code rules", rule 8). `autoRouter` (router.ts) picks the body mode where the syntax tree says so, else line.
import type { Parsers } from '../kb/parsers';
import type { Lang } from '../kb/types';
import { bodyUnfinished } from '../body/cutBody';
import { detectBodyTarget, guessBodyTarget, type BodyTarget } from '../body/detectBody';
import { composeInTurns, jaccardSignatures, type BodyComposer, type ScoredMethod, type SignatureSearch } from '../body/rambo';
import type { RepoMethods } from '../body/RepoMethods';
import {
  bodyAt,
  bodyCutStep,
  bodyPromptStep,
  composeStep,
  elementsStep,
  noElements,
  signatureHitsStep,
  sketchStep,
  usagesStep,
  type BodyAt,
  type BodyPromptSettings,
  type SketchInput,
} from '../body/steps';
import type { Tokenize } from '../body/tokens';
import type { BodyPromptLayout } from '../prompt/bodyPrompt';
import type { GenerateRequest, ModelClient } from '../generate/types';
import { redactingClient } from '../generate/redactBoundary';
import type { Candidate } from '../retrieve/types';
import { errorMessage } from '../util/errors';
import { cursorLine, placeKey } from '../prompt/promptMemory';
import { knowledgeStage } from './stages/knowledge';
import { callModel, fileToCopyFrom, prepareModel, promptBudget, runModelStages } from './stages/model';
import { timed } from './stages/timed';
import { isBlank, LINE_MODE } from './modes';
import type { BodyTrace, StageName } from './trace';
import type { ComposedMode, CompletionRequest, CompletionResult, RequestContext, RequestSlot, SketchSource } from './types';
import { repoNow, requestSlot } from './stages/context';

/** What the body mode reads besides the request and what the host lends it: the grammars and the model's tokenizer. */
export interface BodyModeDeps {
  parsers: Parsers;
  /** Token ids for signature similarity (Rambo: the model's BPE); absent: subword tokens. */
  tokenize?: Tokenize;
}

export { cutBodyAnswer } from '../body/steps';

/** The sketch step's note where the elements come from the signature-similar methods. */
const NO_SKETCH = 'no sketch: elements from the signature-similar methods';
/**
 * The sketch of the method drafted at a place (`key`: the method's class and signature): the user types the body it sketched, so it is
 * not drafted again at every keystroke. The body mode's alone.
 */
const SKETCH = placeKey<{ key: string; text: string }>('body.sketch');

/** The sketch step's note where the place's sketch of the same method is used again. */
const KEPT_SKETCH = 'the sketch drafted at this place earlier';

/**
 * The body goes on until it ends (Java: its closing brace; Python: at least one statement), and it
 * may not close the method before its first statement (the cut would leave no body).
 */
export function bodyHold(lang: Lang): Pick<GenerateRequest, 'holdEnd' | 'holdLine'> {
  return { holdEnd: (generated) => bodyUnfinished(lang, generated), holdLine: isBlank };
}

/**
 * The method whose empty body holds the cursor, read from the syntax tree once per request (the auto router's choice and the detect
 * stage share it).
 */
export function bodyTargetOf(context: RequestContext, parsers: Parsers): BodyTarget | undefined {
  return context.slot(bodyTargetSlot(parsers));
}

/** The body target slot of each grammar set (one per host: the slot is the same object at every request). */
const BODY_TARGETS = new WeakMap<Parsers, RequestSlot<BodyTarget | undefined>>();

function bodyTargetSlot(parsers: Parsers): RequestSlot<BodyTarget | undefined> {
  let slot = BODY_TARGETS.get(parsers);
  if (!slot) {
    slot = requestSlot('body.target', ({ request }) => detectBodyTarget(parsers, request.lang, request.prefix, request.suffix));
    BODY_TARGETS.set(parsers, slot);
  }
  return slot;
}

/** The method whose empty body holds the cursor: from the syntax tree, else (a forced body request) the last declaration line. */
function findTarget(context: RequestContext, parsers: Parsers): { target: BodyTarget; detected: boolean } | undefined {
  const detected = bodyTargetOf(context, parsers);
  if (detected) return { target: detected, detected: true };
  const guessed = guessBodyTarget(context.request.lang, context.request.prefix);
  return guessed ? { target: guessed, detected: false } : undefined;
}

function newBodyTrace(found: { target: BodyTarget; detected: boolean }, sketchSource: SketchSource): BodyTrace {
  const { target } = found;
  return {
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
}

/** Step b's input: the drafting model's call through the pipeline (its redaction boundary and model slot) and the sketch's limits. */
function sketchInput(
  context: RequestContext,
  drafter: ModelClient,
  at: BodyAt,
  settings: BodyPromptSettings,
  signatureHits: readonly ScoredMethod[],
): SketchInput {
  const { options, signal } = context;
  return {
    at,
    prompt: {
      ...settings,
      budgetTokens: promptBudget(options, drafter, options.body.maxNewTokens, context.parts.warmUps !== undefined),
      contextShare: options.prompt.contextShare,
    },
    signatureHits,
    hold: bodyHold(at.lang),
    maxNewTokens: options.body.sketchTokens,
    temperature: options.generate.temperature,
    timeoutMs: options.body.sketchTimeoutMs,
    maxLines: options.body.maxLines,
    generate: (ask, s) => callModel(context, drafter, ask, s),
    signal,
  };
}

/** The body prompt's settings: the drafting model's family and token count (none: plain, estimated), the layout, the suffix's share. */
function promptSettings(drafter: ModelClient | undefined, layout: BodyPromptLayout | undefined, suffixShare: number): BodyPromptSettings {
  return {
    family: drafter?.family ?? 'plain',
    ...(drafter?.countTokens ? { countTokens: drafter.countTokens } : {}),
    ...(layout ? { layout } : {}),
    suffixShare,
  };
}

/** CodeRAG's knowledge items from the pipeline's own line stages, where the options ask for them and the pipeline retrieves. */
function knowledgeOf(context: RequestContext): ((asked: CompletionRequest) => Promise<Candidate[]>) | undefined {
  const retrieves = (repoNow(context)?.retrievers.length ?? 0) > 0;
  return !context.options.body.knowledge || !retrieves ? undefined : (asked) => knowledgeItems(context, asked);
}

/** Rambo's steps (engine/body/steps.ts) for one request, in order, each timed, the trace written from their results. */
export async function completeBody(context: RequestContext, deps: BodyModeDeps): Promise<CompletionResult> {
  const { request, env, parts, options, signal, recorder } = context;
  const opts = context.hooks.body ?? {};
  const sketchSource = opts.sketch ?? 'model';
  const step = <T>(stage: StageName, work: () => T | Promise<T>, fallback: T): Promise<T> =>
    timed(
      recorder,
      stage,
      signal,
      () => Promise.resolve(work()),
      (e) => ({ value: fallback, status: 'degraded' as const, message: errorMessage(e) }),
      parts.yieldTurn,
    );

  const found = await step('detect', () => findTarget(context, deps.parsers), undefined);
  if (!found) {
    recorder.record({ stage: 'failure', outcome: { stage: 'detect', kind: 'error', message: 'no method declaration before the cursor' } });
    return context.finish([], { contexts: [] });
  }
  // What Rambo's steps found, recorded once they have run.
  const body = newBodyTrace(found, sketchSource);
  const repo = repoNow(context)?.methods;
  const at = bodyAt(request, found.target);

  // a. signature-similar methods
  const search = opts.signatures ?? jaccardSignatures(deps.tokenize);
  const hits = await step('signatures', () => signatureHitsStep({ at, repo, search, topK: options.body.topSignature, signal }), {
    methods: [],
  });
  if (hits.how !== undefined) body.signatureMatch = hits.how;
  const signatureHits = hits.methods;
  body.signatureSimilar = signatureHits.map((m) => ({ id: m.item.id, score: m.score }));

  const model = env.model;
  // The sketch's model: the completion model, else the one lent for the sketch alone (through the same redaction boundary).
  const drafter = model ?? (opts.sketchModel ? redactingClient(opts.sketchModel) : undefined);
  if (drafter) await prepareModel(context, drafter);
  const settings = promptSettings(drafter, opts.promptLayout, options.prompt.suffixShare);

  // The place of work (none in a one-off pipeline): the body prompt's layout and the sketch drafted here, kept while the user types.
  const place = parts.promptMemory?.placeAt(request.filePath, cursorLine(request.prefix), 'body');
  // The place is the file's already: the method within it is what the kept sketch must match.
  const sketchKey = `${found.target.className ?? ''}\n${found.target.signature}`;
  const drafted = place?.own(SKETCH);
  const keptSketch = sketchSource === 'model' && drafted?.value?.key === sketchKey ? drafted.value.text : undefined;

  // b. sketch: the sketch drafts from the signature hits with the line prompt's share of code; the body, whose fragments the sketch
  // chose, keeps the body's (larger) share.
  let sketch = typeof sketchSource === 'object' ? sketchSource.text : (keptSketch ?? '');
  const noDraft = drafter ? undefined : 'no completion model';
  const skipped =
    typeof sketchSource === 'object'
      ? sketchSource.note
      : sketchSource === 'none'
        ? NO_SKETCH
        : keptSketch !== undefined
          ? KEPT_SKETCH
          : noDraft;
  if (skipped !== undefined) recorder.stage({ stage: 'sketch', status: 'skipped', elapsedMs: 0, message: skipped });
  else if (drafter) sketch = await step('sketch', () => sketchStep(sketchInput(context, drafter, at, settings, signatureHits)), '');
  if (sketch) body.sketch = sketch;
  // Kept even when empty (a sketch past its time limit): drafting again at every keystroke is the cost the place saves.
  if (drafted && drafter && sketchSource === 'model' && keptSketch === undefined) drafted.value = { key: sketchKey, text: sketch };

  // c. essential code elements
  const elementsInput = {
    parsers: deps.parsers,
    lang: request.lang,
    repo,
    sketch,
    sketchFromModel: sketchSource === 'model',
    signatureHits,
  };
  const elements = await step('elements', () => elementsStep({ ...elementsInput, elements: options.body.elements }), noElements());
  if (elements.from !== undefined) body.elementsFrom = elements.from;
  body.unmapped = elements.unmapped;
  body.elements = elements.mapped;

  // d. usages
  const usagesInput = { at, repo, identifiers: elements.identifiers, sketch, signatureHits, topK: options.body.topUsages };
  const usages = await step<ScoredMethod[]>('usages', () => usagesStep(usagesInput), []);
  body.usages = usages.map((m) => ({ id: m.item.id, path: m.item.path, score: m.score, via: m.via ?? [] }));
  recorder.record({ stage: 'body', outcome: body });
  // CodeRAG's knowledge items, where the mode was given them: asked at the primed cursor, as the line stages of a body are.
  const knowledge = opts.knowledge ?? knowledgeOf(context);
  const items = knowledge ? await step<Candidate[]>('knowledge', () => knowledge({ ...request, prefix: at.prefix }, signal), []) : [];
  // e. by default a usage, a definition of an element, (a CodeRAG item,) a signature hit, in turns (best first).
  const ranked = composeStep({ compose: opts.compose ?? composeInTurns, usages, elements, knowledge: items, signatureHits });
  if (!model) return context.finish([], { contexts: ranked });

  // f. prompt -> the body (second model call), cut where the method ends
  const answer = await runModelStages(context, model, {
    mode: 'body',
    maxNewTokens: options.body.maxNewTokens,
    prompt: (budgetTokens) => {
      const { layout, ...prompt } = bodyPromptStep({
        at,
        settings,
        ranked,
        contextShare: options.body.contextShare,
        budgetTokens,
        ...(place ? { place: place.layout } : {}),
      });
      if (place && layout) place.keep(layout);
      return prompt;
    },
    generate: { stop: at.stops, ...bodyHold(request.lang), copyFrom: fileToCopyFrom(request.prefix) },
    // The finished body is checked against the repository (its members, its keyword arguments); its decoding is not constrained:
    // on the validation body cases a mask at every dot cost Python 3 points of ES (the model wrote around the names it was denied).
    checkAt: at.prefix,
    checkAfterOnly: true,
    postprocess: (generated) => bodyCutStep(generated, at, { maxLines: options.body.maxLines, maxChars: options.postprocess.maxChars }),
  });
  return context.finish(answer.items, { contexts: answer.contexts });
}

/**
 * CodeRAG's knowledge items for the body (the knowledge stage the line mode runs, at the cursor as
 * the line mode primes it); its steps are recorded by a child recorder, the body's trace shows
 * the stage as one step (`knowledge`).
 */
function knowledgeItems(context: RequestContext, asked: CompletionRequest): Promise<Candidate[]> {
  const lead = LINE_MODE.prime(asked);
  const steps = context.recorder.child({ filePath: asked.filePath, lang: asked.lang, mode: 'line' });
  return knowledgeStage(context, lead ? { ...asked, prefix: asked.prefix + lead } : asked, steps).then((k) => k.ranked);
}

/** The body mode: Rambo's composition of the stages. */
export function bodyMode(deps: BodyModeDeps): ComposedMode {
  return { kind: 'composed', name: 'body', complete: (context: RequestContext) => completeBody(context, deps) };
}

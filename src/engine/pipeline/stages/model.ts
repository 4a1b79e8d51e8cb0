// The model stages every mode ends with: prompt -> check -> generate (through
// the host's model slot) -> postprocess -> the show gate, each timed into the trace; the mode says how its prompt is built, what
// the model may not do yet and how the answer is cut (a ModelPlan), the rest is one code path.
import { redactPrompt } from '../../generate/redactBoundary';
import { placeholderNote } from '../../generate/postprocess/postprocess';
import { filterJunk, rightContextCut } from '../../generate/postprocess/filterJunk';
import { ownAnswer } from '../../generate/postprocess/promptEcho';
import type { JunkCut } from '../../generate/postprocess/junk';
import { isModelClientError, type GenerateRequest, type GenerateResult, type ModelClient, type RedactedPrompt } from '../../generate/types';
import { readableBudget } from '../../generate/readRate';
import type { Candidate } from '../../retrieve/types';
import { errorMessage, isCancellationError, throwIfAborted } from '../../util/errors';
import type { CompletionTrace } from '../trace';
import type { CompletionItem, PipelineOptions, RequestContext } from '../types';
import type { WarmUps } from '../../generate/warmUps';
import { requestSlot } from './context';
import { answered, type CheckOutcome, type GenerateOutcome } from '../outcomes';
import { checkStage, type CheckPlan } from './check';
import { showGateStage } from './showGate';
import { timed } from './timed';

/** A prompt as a mode built it within the budget, with what the trace shows of it. */
export interface ModelPrompt {
  /** Before redaction. */
  prompt: string;
  stop: readonly string[];
  /** The candidates that made it into the prompt, in prompt order. */
  contexts: Candidate[];
  trace: Omit<NonNullable<CompletionTrace['prompt']>, 'text' | 'redactions' | 'budgetTokens' | 'family'>;
  /** The prompt up to the cursor's line when this prompt changed the repository block: the host has the server read it ahead. */
  warmHead?: string;
  /** The budget the prompt was fitted to, where the mode kept another than the one it was given (a place's own). */
  budgetTokens?: number;
}

/** What a mode asks of the model stages. */
export interface ModelPlan {
  /** The mode whose answer this is (the show gate reads it). */
  mode: string;
  maxNewTokens: number;
  /** The prompt lies on the workspace's shared block: it keeps the whole window whatever the server's speed (promptBudget). */
  sharedBlock?: boolean;
  /** The prompt within `budgetTokens` (throws: the prompt stage fails). */
  prompt(budgetTokens: number): ModelPrompt;
  /**
   * The generate request's mode-specific parts: more stops, what the model may not do yet, when the answer is complete, what it may copy.
   */
  generate: Pick<GenerateRequest, 'holdEnd' | 'holdLine' | 'until' | 'copyFrom'> & { stop?: readonly string[] };
  /** Where the check stage reads the code before the cursor (the prompt's); absent: this mode is not checked. */
  checkAt?: string;
  /** Only the finished answer is checked, decoding is not constrained (a body: a mask at every dot of a long text derails it). */
  checkAfterOnly?: boolean;
  /**
   * The answer cut to what the mode inserts: `text` (checked after) and the `lead` the inserted text begins with; `message` notes the
   * stage.
   */
  postprocess(generated: GenerateResult): { text: string; lead: string; message?: string };
  /** Why postprocessing left nothing of the answer (absent: the trace gives no reason). */
  whyEmpty?(generated: GenerateResult): string | undefined;
}

/**
 * Where a client counts no tokens, the estimate (3 characters a token) runs up to a quarter under a
 * dense tokenizer's count; a server then drops the prompt's head to fit its window, the block first.
 */
const ESTIMATE_MARGIN = 0.8;

/**
 * The prompt budget: the model's context window less the answer's tokens, up to the options' most.
 * A prompt on the workspace's shared block (`shared`: a model server's line prompt) keeps it whatever
 * the server's speed: a new place reads only its local part. One read whole at every place (the
 * body's), for a server measured reading slowly, gets what it reads in FIRST_READ_SECONDS (never
 * under PROMPT_FLOOR_TOKENS); where the host warms the server (`warms`: the editor), its answers
 * measure it, and until they have, PROMPT_FLOOR_TOKENS; a host that does not (the CLI) keeps the window.
 */
export function promptBudget(
  options: PipelineOptions,
  model: ModelClient | undefined,
  maxNewTokens: number,
  warms: boolean,
  shared = false,
): number {
  const window = (model?.contextTokens ?? Infinity) - maxNewTokens;
  const fits = Math.floor(model?.countTokens ? window : window * ESTIMATE_MARGIN);
  const readable = warms && model?.warm && !shared ? readableBudget(model.readRate) : Infinity;
  return Math.max(64, Math.min(options.prompt.budgetTokens, fits, readable));
}

/**
 * Load what the model needs (first request only) once per request; its time is model time, not
 * prompt assembly. A model that cannot load leaves the generate stage to report it.
 */
export function prepareModel(context: RequestContext, model: ModelClient): Promise<void> {
  return context.slot(MODEL_PREPARED).get(model);
}

/** The model's loading, once per request and model (the body mode's sketch model may be another than the completion model). */
const MODEL_PREPARED = requestSlot('model.prepared', (context) => {
  const prepared = new Map<ModelClient, Promise<void>>();
  return {
    get(model: ModelClient): Promise<void> {
      let p = prepared.get(model);
      if (!p) prepared.set(model, (p = prepareOnce(context, model)));
      return p;
    },
  };
});

async function prepareOnce(context: RequestContext, model: ModelClient): Promise<void> {
  const prepareStart = performance.now();
  await model.prepare?.(context.signal).catch((e: unknown) => {
    if (isCancellationError(e)) throw e;
  });
  throwIfAborted(context.signal);
  context.recorder.modelPrepared(performance.now() - prepareStart);
}

/** Most characters of the file above the cursor a model may copy from beyond its prompt (GenerateRequest.copyFrom). */
const COPY_FROM_CHARS = 32_000;

/** The file above the cursor, its last COPY_FROM_CHARS characters, for GenerateRequest.copyFrom. */
export function fileToCopyFrom(prefix: string): string {
  return prefix.length > COPY_FROM_CHARS ? prefix.slice(prefix.length - COPY_FROM_CHARS) : prefix;
}

/** One call of the model through the host's model slot (one model-server request in flight). */
export function callModel(
  context: RequestContext,
  model: ModelClient,
  request: GenerateRequest,
  signal: AbortSignal = context.signal,
): Promise<GenerateResult> {
  const slot = context.parts.modelSlot;
  const work = (s: AbortSignal): Promise<GenerateResult> => model.generate(request, s);
  return slot ? slot.run(work, signal) : work(signal);
}

/** d. prompt: the mode's prompt within the budget, or undefined (the trace's error says why) when it failed. */
async function promptStage(context: RequestContext, plan: ModelPlan, budgetTokens: number): Promise<ModelPrompt | undefined> {
  const { recorder, signal } = context;
  let failed = 'prompt failed';
  const prompt = await timed<ModelPrompt | undefined>(
    recorder,
    'prompt',
    signal,
    () => Promise.resolve().then(() => plan.prompt(budgetTokens)),
    (e) => ({ value: undefined, status: 'failed', message: (failed = errorMessage(e)) }),
  );
  if (!prompt) recorder.record({ stage: 'failure', outcome: { stage: 'prompt', kind: 'error', message: failed } });
  return prompt;
}

/** The block changed: the server reads the new head once, outside this request's limits, so the next keystrokes reuse it. */
function handOffWarmHead(warmUps: WarmUps, model: ModelClient, warmHead: string): void {
  // The model is the redaction boundary's client: its warm-up redacts the head on its way out.
  warmUps.warm(model, warmHead);
}

/** e. generate (one model request in flight per server, through the model slot): the answer, or why there is none. */
async function generateStage(
  context: RequestContext,
  model: ModelClient,
  plan: ModelPlan,
  prompt: ModelPrompt,
  redacted: RedactedPrompt,
  check: CheckPlan | undefined,
): Promise<GenerateOutcome> {
  const { recorder, signal, parts, options } = context;
  const { stop, ...generateParts } = plan.generate;
  let failure: GenerateOutcome | undefined;
  const result = await timed<GenerateResult | undefined>(
    recorder,
    'generate',
    signal,
    () =>
      callModel(context, model, {
        prompt: redacted.text,
        redacted,
        maxNewTokens: plan.maxNewTokens,
        stop: [...prompt.stop, ...(stop ?? [])],
        temperature: options.generate.temperature,
        ...check?.request,
        ...generateParts,
      }),
    (e) => {
      failure = { status: 'failed', kind: isModelClientError(e) ? e.kind : 'error', message: errorMessage(e) };
      return { value: undefined, status: 'failed', message: errorMessage(e) };
    },
    parts.yieldTurn,
  );
  return result ? answered(model, result) : (failure ?? { status: 'failed', kind: 'error', message: 'the model gave no answer' });
}

/** f. postprocess: the mode's cut of the answer, its stage noted with the placeholder or the mode's message. */
async function postprocessStage(
  context: RequestContext,
  plan: ModelPlan,
  generated: GenerateResult,
): Promise<{ cut: { text: string; lead: string }; placeholder: string | undefined }> {
  const { recorder, signal } = context;
  let message: string | undefined;
  const cut = await timed(
    recorder,
    'postprocess',
    signal,
    () =>
      Promise.resolve().then(() => {
        const out = plan.postprocess(generated);
        message = out.message;
        return out;
      }),
    (e) => ({ value: { text: '', lead: '' }, status: 'failed', message: errorMessage(e) }),
  );
  const placeholder = placeholderNote(generated.text);
  if (placeholder) recorder.noteLast('postprocess', placeholder);
  else if (message !== undefined) recorder.noteLast('postprocess', message, true);
  return { cut, placeholder };
}

/** What the junk filters, checking and the right context leave of the mode's cut: the text to insert ('' for none), traced. */
function filterAndCheck(
  context: RequestContext,
  cut: { text: string; lead: string },
  placeholder: string | undefined,
  check: CheckPlan | undefined,
  own: JunkCut | undefined,
): { inserted: string; filtered: string; checked: string; junk: JunkCut[]; repeat: JunkCut | undefined; check?: CheckOutcome } {
  // The junk filters (generate/postprocess/filterJunk.ts): a loop and the placeholder before checking, the right context after it.
  const filtered = filterJunk(cut.text);
  const junk = own ? [own, ...filtered.cuts] : filtered.cuts;
  // The mode's own cut may have removed the placeholder already (line mode): the rule is traced all the same.
  if (placeholder && !junk.some((j) => j.rule === 'placeholder')) junk.push({ rule: 'placeholder', removed: '', note: placeholder });
  const repaired = check ? check.repair(filtered.text) : { text: filtered.text };
  const checked = repaired.text;
  let inserted = checked ? cut.lead + checked : '';
  const repeat = inserted ? rightContextCut(inserted, context.request.suffix) : undefined;
  if (repeat) {
    junk.push(repeat);
    inserted = '';
  }
  context.recorder.record({ stage: 'cut', outcome: { completion: inserted, junk } });
  return { inserted, filtered: filtered.text, checked, junk, repeat, ...(repaired.outcome ? { check: repaired.outcome } : {}) };
}

/** Why nothing is suggested, for the trace (undefined: no reason to give). */
function whyNothing(
  plan: ModelPlan,
  generated: GenerateResult,
  cutText: string,
  outcome: { filtered: string; checked: string; junk: JunkCut[]; repeat: JunkCut | undefined },
  own: JunkCut | undefined,
): string | undefined {
  const { filtered, checked, junk, repeat } = outcome;
  if (own && generated.text.trim() === '') return own.note;
  const stopped =
    generated.stoppedBy && generated.stoppedBy !== 'unknown'
      ? ` (stopped by ` +
        `${generated.stoppedBy === 'eos' ? 'its end token' : generated.stoppedBy === 'length' ? 'the token limit' : 'a stop sequence'})`
      : '';
  return repeat
    ? repeat.note
    : filtered && !checked
      ? 'checking cut the whole suggestion (it names a member or an argument its receiver or callee lacks)'
      : cutText && !filtered
        ? `the junk filters cut the whole suggestion: ${junk.map((j) => j.note).join('; ')}`
        : plan.whyEmpty
          ? `${plan.whyEmpty(generated) ?? 'postprocessing left nothing'}${stopped}`
          : undefined;
}

/** Prompt, check, generate, postprocess: the suggestion (if any) and the contexts that entered the prompt. */
export async function runModelStages(
  context: RequestContext,
  model: ModelClient,
  plan: ModelPlan,
): Promise<{ items: CompletionItem[]; contexts: Candidate[] }> {
  const { recorder, parts } = context;
  await prepareModel(context, model);
  const budgetTokens = promptBudget(context.options, model, plan.maxNewTokens, parts.warmUps !== undefined, plan.sharedBlock === true);

  const prompt = await promptStage(context, plan, budgetTokens);
  if (!prompt) return { items: [], contexts: [] };
  // Redacted once, here, as the boundary does (the trace shows what is sent); the request carries the result so it is not redone.
  const redacted = await redactPrompt(prompt.prompt);
  // The trace shows the prompt as the redaction boundary (stages.model) sends it.
  recorder.record({
    stage: 'prompt',
    outcome: { shown: prompt.trace, redacted, budgetTokens: prompt.budgetTokens ?? budgetTokens, family: model.family },
  });
  if (prompt.warmHead && parts.warmUps) handOffWarmHead(parts.warmUps, model, prompt.warmHead);

  // Checking against the repository: what this client can use of it.
  const check = plan.checkAt !== undefined ? checkStage(context, model, plan.checkAt, plan.checkAfterOnly !== true) : undefined;
  const answer = await generateStage(context, model, plan, prompt, redacted, check);
  const generated = answer.status === 'answered' ? answer.result : undefined;
  const decoded = check?.generated(generated);
  if (decoded) recorder.record({ stage: 'check', outcome: decoded });
  recorder.record({ stage: 'generate', outcome: answer });
  if (!generated) return { items: [], contexts: prompt.contexts };

  // What the model wrote past its answer (a special token, the prompt's head again) is not shown (generate/postprocess/promptEcho.ts).
  const own = ownAnswer(generated.text, redacted.text, model.family);
  const reply = own.cut
    ? { ...generated, text: own.text, ...(own.cut.rule === 'specialToken' ? { stoppedBy: 'stop' as const } : {}) }
    : generated;
  const { cut, placeholder } = await postprocessStage(context, plan, reply);
  const outcome = filterAndCheck(context, cut, placeholder, check, own.cut);
  if (outcome.check) recorder.record({ stage: 'check', outcome: outcome.check });
  const { inserted } = outcome;
  // g. show gate: show it, or stay silent (the result keeps the text for the bench)
  if (inserted) {
    const gate = showGateStage(context, {
      text: inserted,
      generated,
      check: outcome.check ?? decoded,
      mode: plan.mode,
      prompt: redacted.text,
      contexts: prompt.contexts,
    });
    recorder.record({ stage: 'gate', outcome: gate });
    if (!gate.shown) return { items: [], contexts: prompt.contexts };
  }
  if (!inserted) {
    const why = whyNothing(plan, reply, cut.text, outcome, own.cut);
    if (why !== undefined) recorder.record({ stage: 'empty', outcome: why });
  }
  return { items: inserted ? [{ text: inserted }] : [], contexts: prompt.contexts };
}

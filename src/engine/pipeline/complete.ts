// The line composition (docs/ARCHITECTURE.md "One completion, as data flowing through"): knowledge
// (query, CodeRAG Alg. 1 -> multi-path retrieval, 2.2.1 -> BestFit rerank, 2.3) -> similar code
// (ProCC) -> the model stages (prompt, 2.4 -> check -> generate -> postprocess, the mode's). The
// stages live in stages/; every mode composes the same ones (the body mode: bodyMode.ts).
import { fitPromptBudget, fittedSummary, type PromptSnippet } from '../prompt/fitPromptBudget';
import { cursorLine, placeKey, PromptMemory } from '../prompt/promptMemory';
import { localRoom } from '../generate/readRate';
import type { ModelClient } from '../generate/types';
import { namesInSight } from '../prompt/renderKnowledge';
import { shownAs, snippetForPrompt } from '../prompt/snippetForPrompt';
import type { Candidate } from '../retrieve/types';
import { requestContext, type RequestScope } from './stages/context';
import { knowledgeStage } from './stages/knowledge';
import { similarCodeStage } from './stages/similar';
import { fileToCopyFrom, runModelStages, type ModelPlan } from './stages/model';
import type { CompletionRequest, CompletionResult, LinePlan, PipelineOptions, RequestContext, Router } from './types';

/**
 * The ranked list a model server's prompt draws from: the first whole where they fit, the rest in brief.
 * Its reranked top 20 holds every definition of 84% of the validation Java lines, its top ten 75%;
 * 31 brought the prompt no more than 20 (docs/BENCHMARKS.md "Prompt recall").
 */
const SERVER_LIST_U = 20;

/**
 * The names in sight when a place started (renderKnowledge.namesInSight): a snippet is rendered the same at every keystroke there, so
 * the block's text stays what the server has read. The line composition's alone.
 */
const IN_SIGHT = placeKey<ReadonlySet<string>>('line.inSight');

/**
 * A candidate as the prompt shows it (`whole`: definitions with their bodies); ProCC's window gets its heading and, with a
 * share, is budgeted first up to it.
 */
function promptSnippetOf(
  c: Candidate,
  similarCap: number | undefined,
  whole: boolean,
  inSight: ReadonlySet<string> | undefined,
): PromptSnippet {
  const shown = { ...snippetForPrompt(c, whole, inSight, !whole), id: c.snippet.id, source: c };
  if (c.origin?.kind !== 'similar') return shown;
  const heading = `Compare this snippet from ${c.snippet.path}:`;
  if (similarCap === 0) return { path: c.snippet.path, text: shown.text, heading, id: shown.id, source: c };
  return {
    id: shown.id,
    source: c,
    path: c.snippet.path,
    text: shown.text,
    heading,
    pinned: true,
    ...(similarCap !== undefined ? { maxTokens: similarCap } : {}),
  };
}

/**
 * How a model server's line prompt shares the workspace's block (prompt/sharedBlock.ts): one block per
 * model and language, the local part sized to what the server reads of a new place within a few seconds.
 */
function sharedLayout(memory: PromptMemory, model: ModelClient, lang: string, budgetTokens: number, context: RequestContext) {
  const room = localRoom(budgetTokens, context.hooks.readRate ?? model.readRate, context.options.prompt.contextShare);
  const key = `${model.backend}\u0000${model.endpoint}\u0000${model.model}\u0000${lang}`;
  return { ...room, block: (cap: number, budget: number, newCap?: number) => memory.sharedBlock(key, cap, budget, newCap) };
}

/** The line composition of the stages, primed, held and cut by `linePlan` (line mode's, or another that reuses the line stages). */
export async function completeLine(context: RequestContext, linePlan: LinePlan): Promise<CompletionResult> {
  const { options, env, parts } = context;
  const lead = linePlan.prime(context.request);
  const request = lead ? { ...context.request, prefix: context.request.prefix + lead } : context.request;

  const model = env.model;
  // A model that reads whole definitions best gets them (the shipped in-process one); a model server's code model gets the compact form.
  const whole = model?.capabilities?.wholeKnowledge === true;
  // A model server's prompt has room for more than the top-u, most of them brief (docs/BENCHMARKS.md "Prompt recall").
  const knowledge = await knowledgeStage(context, request, context.recorder, model && !whole ? SERVER_LIST_U : undefined);
  const outputs = {
    ...(knowledge.retrieval ? { retrieval: knowledge.retrieval } : {}),
    ...(knowledge.rerank ? { rerank: knowledge.rerank } : {}),
  };
  // ProCC's chosen top-1 window joins the reranked knowledge.
  const similarWindows = await similarCodeStage(context, request);
  const ranked = [...knowledge.ranked, ...similarWindows];
  // Retrieval only: every top-u snippet is a context; nothing is prompted or generated.
  if (!model) return context.finish([], { contexts: ranked, ...outputs });

  const share = options.similar.promptShare;
  // No token is longer than this many characters in practice; suffix text beyond it can never fit, so it is not counted.
  const clipSuffix = (budgetTokens: number): string => {
    const maxChars = budgetTokens * 12;
    return request.suffix.length > maxChars ? request.suffix.slice(0, maxChars) : request.suffix;
  };
  // The place of work: the block and the left edge the last prompt here laid out (none in a one-off pipeline).
  // The in-process model keeps no prompt cache, but gets the same layout: a suggestion does not change with a re-sorted block.
  // A model server's prompt shares the workspace's block across places; a one-off pipeline lays out one place as an editor's first.
  const memory = parts.promptMemory ?? (whole ? undefined : new PromptMemory());
  const place = memory?.placeAt(request.filePath, cursorLine(request.prefix));
  // Only the compact form cuts summaries; fixed for the place, so a name typed later does not re-render a snippet the block holds.
  const inSight = whole
    ? undefined
    : place
      ? (place.own(IN_SIGHT).value ??= namesInSight(request.prefix, request.suffix))
      : namesInSight(request.prefix, request.suffix);
  const postContext = { lang: request.lang, prefix: request.prefix, suffix: request.suffix };
  const until = linePlan.until(request);
  const plan: ModelPlan = {
    mode: linePlan.name,
    sharedBlock: !whole,
    maxNewTokens: options.generate.maxNewTokens,
    prompt: (given) => {
      // A place of work keeps the budget its first prompt was fitted to (PlaceLayout.budgetTokens), and so does all that follows from it.
      const budgetTokens = place?.layout.budgetTokens ?? given;
      // ProCC's window beside CodeRAG's knowledge: it is budgeted first, up to its share of the prompt.
      const similarCap = similarWindows.length > 0 && ranked.length > similarWindows.length ? Math.floor(budgetTokens * share) : undefined;
      const fitted = fitPromptBudget({
        lang: request.lang,
        filePath: request.filePath,
        prefix: request.prefix,
        suffix: clipSuffix(budgetTokens),
        snippets: ranked.map((c) => promptSnippetOf(c, similarCap, whole, inSight)),
        family: model.family,
        budgetTokens,
        suffixShare: options.prompt.suffixShare,
        contextShare: options.prompt.contextShare,
        repoFormat: options.prompt.repoFormat,
        ...(request.repoName !== undefined ? { repoName: request.repoName } : {}),
        ...(model.countTokens ? { countTokens: model.countTokens } : {}),
        ...(place ? { layout: place.layout } : {}),
        ...(place && memory && !whole ? { shared: sharedLayout(memory, model, request.lang, budgetTokens, context) } : {}),
        // The shipped model's whole definitions gained nothing from a cut-in head (docs/BENCHMARKS.md "Prompt recall").
        ...(whole ? {} : { cutIntoRest: true }),
      });
      place?.keep(fitted.layout);
      return {
        prompt: fitted.prompt,
        stop: fitted.stop,
        // Every item the prompt holds is a context, the shared block's from other places too.
        contexts: [
          ...fitted.usedIndices.map((i, j) => shownAs(ranked[i]!, fitted.usedTexts[j]!)),
          ...fitted.usedOthers.map((o) => shownAs(o.source, o.text)),
        ],
        ...fittedSummary(fitted, fitted.format),
      };
    },
    // What the model may not do yet (line mode on an empty line: end or break the line before it writes something).
    generate: { ...linePlan.hold(request), ...(until ? { until } : {}), copyFrom: fileToCopyFrom(request.prefix) },
    checkAt: request.prefix,
    // A prompt primed with the line's indentation ends in whitespace, where a byte-level BPE model
    // usually puts the last space into the next word's token (" if"): its answer then starts with
    // that space, which the indentation already holds.
    postprocess: (generated) => ({
      text: linePlan.postprocess(
        lead ? generated.text.replace(/^[ \t]+/, '') : generated.text,
        { ...postContext, ...(generated.stoppedBy ? { stoppedBy: generated.stoppedBy } : {}) },
        options.postprocess,
      ),
      lead,
    }),
    whyEmpty: (generated) => linePlan.whyEmpty(generated.text, postContext, options.postprocess),
  };
  const answer = await runModelStages(context, model, plan);
  return context.finish(answer.items, { contexts: answer.contexts, ...outputs });
}

/**
 * One completion: `router` picks the mode for the request, then that mode runs. Resolves with no
 * items when a stage leaves nothing to show (the trace says which and why); rejects only with
 * CancellationError when `signal` aborts.
 */
export function complete(
  request: CompletionRequest,
  options: PipelineOptions,
  scope: Omit<RequestScope, 'mode'>,
  router: Router,
  signal: AbortSignal,
): Promise<CompletionResult> {
  const context = requestContext(request, options, { ...scope, mode: router.name }, signal);
  const mode = router.route(context);
  context.recorder.mode(mode.name);
  return mode.kind === 'composed' ? mode.complete(context) : completeLine(context, mode);
}

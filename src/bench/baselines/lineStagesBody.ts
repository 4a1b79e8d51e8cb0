// The baselines on body cases (zero-shot, RG-1, RepoCoder, the CodeRAG variants without Rambo): the
// method's own retrieval through the line stages, with the body's prompt priming, its hold on the
// model and the product's body cut (engine/body/steps.ts cutBodyAnswer), so that a baseline's
// body is cut as the product's is.
import type { Parsers } from '../../engine/kb/parsers';
import { detectBodyTarget, guessBodyTarget } from '../../engine/body/detectBody';
import { missingBodyIndent, signatureIndentOf } from '../../engine/body/cutBody';
import { bodyHold, cutBodyAnswer, type LinePlan } from '../../engine/pipeline';

/** A body mode that runs the line stages; `maxLines`: the body's line limit (PipelineOptions.body.maxLines). */
export function lineStagesBodyMode(parsers: Parsers, maxLines: number): LinePlan {
  return {
    kind: 'line',
    name: 'body',
    prime: (request) => missingBodyIndent(request.lang, request.prefix),
    hold: (request) => bodyHold(request.lang),
    // The body's stops and its cut end the answer, not a settled line.
    until: () => undefined,
    // The line composition hands the cut the primed prefix and the answer after the priming, which it prepends itself.
    postprocess: (raw, context, options) => {
      const target =
        detectBodyTarget(parsers, context.lang, context.prefix, context.suffix) ?? guessBodyTarget(context.lang, context.prefix);
      const signatureIndent = target?.signatureIndent ?? signatureIndentOf(context.lang, context.prefix);
      return cutBodyAnswer(
        { text: raw, ...(context.stoppedBy ? { stoppedBy: context.stoppedBy } : {}) },
        { lang: context.lang, prefix: context.prefix, primed: '', signatureIndent },
        { maxLines, maxChars: options.maxChars },
      ).text;
    },
    // The body's cut gives no reason of its own; the trace says postprocessing left nothing.
    whyEmpty: () => undefined,
  };
}

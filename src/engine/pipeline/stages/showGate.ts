// The show gate as a stage of the model stages: after the answer is cut and
// checked, it scores the suggestion (gate/model) and, when the gate is on and the score is below
// the threshold, keeps it from the editor; the trace keeps the score, the features and the text.
import { gateFeatures } from '../../gate/features';
import { GateModel } from '../../gate/model';
import type { GenerateResult } from '../../generate/types';
import type { Candidate } from '../../retrieve/types';
import type { RequestContext } from '../types';
import type { CheckOutcome, GateOutcome } from '../outcomes';

/** The shipped weights, for hosts that lend no learned model. */
let shipped: GateModel | undefined;

/**
 * Whether `text` is shown, with the gate's score, threshold (0: it did not decide) and features, also
 * when it is off or abstains (the bench fits on them). It reads the answer (the generate stage's
 * result) and what checking did (the check stage's outcome).
 */
export function showGateStage(
  context: RequestContext,
  input: {
    text: string;
    generated: GenerateResult;
    check: CheckOutcome | undefined;
    mode: string;
    prompt: string;
    contexts: readonly Candidate[];
  },
): GateOutcome {
  const { options, env, request } = context;
  const { features, hasLogprobs } = gateFeatures({
    text: input.text,
    raw: input.generated.text,
    ...(input.generated.logprobs ? { logprobs: input.generated.logprobs } : {}),
    prefix: request.prefix,
    prompt: input.prompt,
    lang: request.lang,
    mode: input.mode,
    contexts: input.contexts,
    constrained: (input.check?.constrained?.length ?? 0) > 0,
    repaired: (input.check?.fixes?.length ?? 0) > 0,
    ...(input.generated.stoppedBy ? { stoppedBy: input.generated.stoppedBy } : {}),
  });
  const model = env.showGateModel ?? (shipped ??= new GateModel());
  const score = model.score(features, hasLogprobs);
  // Without the model's log-probabilities the gate abstains: such a server runs another model than
  // the weights saw, and the other features alone are weaker (validation at 0.22: +3.5 ES at 71% shown).
  const on = options.gate.mode === 'on' && hasLogprobs;
  const threshold = !on ? 0 : input.mode === 'body' ? options.gate.bodyThreshold : options.gate.threshold;
  const shown = !on || score >= threshold;
  return { shown, score, threshold, logprobs: hasLogprobs, learned: model.updates, features, text: input.text };
}

// The check stage: checking against the repository gives the model
// client what that client says it can use (ModelClient.capabilities): a per-token constraint for a
// client that sees logits, a member choice for a server with its own constraint mechanism, and a
// repair of the finished answer for every answer decoding did not constrain.
import { DereferenceConstraint } from '../../check/dereferenceConstraint';
import { CallArgumentGuide, type CallSignature } from '../../check/callArguments';
import type { ReceiverMembers } from '../../check/receiverMembers';
import { checkCompletion } from '../../check/repairCompletion';
import { checkKeywordArguments } from '../../check/keywordArguments';
import type { DecodeConstraint, GenerateRequest, GenerateResult, ModelClient } from '../../generate/types';
import { errorMessage, isCancellationError } from '../../util/errors';
import type { RequestContext } from '../types';
import type { CheckOutcome } from '../outcomes';
import { keyedSlot, repoNow } from './context';

export interface CheckPlan {
  /** What the generate request carries: a decode constraint, a member choice (each only where the client can use it). */
  request: Pick<GenerateRequest, 'constraint' | 'memberChoice'>;
  /** After the model call (answered or not): the outcome with what the constraint did; undefined where checking is off. */
  generated(result: GenerateResult | undefined): CheckOutcome | undefined;
  /**
   * The finished answer checked (repaired, or cut before a member its receiver lacks), with the outcome; the text itself where nothing
   * is checked.
   */
  repair(text: string): { text: string; outcome?: CheckOutcome };
}

/** Each text's receiver members and call signature, typed once per request (before decoding and again when the answer is checked). */
const MEMBERS_AT = keyedSlot<ReceiverMembers | undefined>('check.members');
const CALL_AT = keyedSlot<CallSignature | undefined>('check.call');

function once<T>(values: Map<string, T>, key: string, compute: () => T): T {
  if (!values.has(key)) values.set(key, compute());
  return values.get(key) as T;
}

const NOTHING: CheckPlan = { request: {}, generated: () => undefined, repair: (text) => ({ text }) };

/** A check that found no receiver typing: its outcome says so, nothing is checked. */
function untyped(outcome: CheckOutcome): CheckPlan {
  return { request: {}, generated: () => outcome, repair: (text) => ({ text, outcome }) };
}

/**
 * The check stage at `prefix` (the text before the cursor as the prompt ends) for `model`; `decode`: constrain its decoding where
 * it can be.
 */
export function checkStage(context: RequestContext, model: ModelClient, prefix: string, decode = true): CheckPlan {
  const { options, signal, request, analyses } = context;
  const checkMode = options.check.mode;
  if (checkMode === 'off') return NOTHING;
  const typer = repoNow(context)?.receivers;
  if (!typer) return untyped({ mode: checkMode, note: 'no receiver typing in this host' });
  // The stage's outcome, filled as it goes: the receiver at the cursor, what decoding did, what the finished answer's check found.
  const check: CheckOutcome = { mode: checkMode };
  // Receiver typing is guarded so it never fails the completion; a text is typed once per request
  // (the receiver at the cursor is asked for before decoding and again when the answer is checked).
  const members = context.slot(MEMBERS_AT);
  const membersAt = (text: string): ReceiverMembers | undefined =>
    once(members, text, () => {
      try {
        return typer.membersAt({ path: request.filePath, lang: request.lang, prefix: text, analyses }, signal);
      } catch (e) {
        if (isCancellationError(e)) throw e;
        check.note = `receiver typing failed: ${errorMessage(e)}`;
        return undefined;
      }
    });
  const can = model.capabilities ?? {};
  // The receiver at the cursor, for a model that can be constrained (by its tokens, or by its server's own mechanism).
  const constrains = decode && checkMode === 'constrain' && (can.decodeConstraint === true || can.memberChoice === true);
  const atCursor = constrains ? membersAt(prefix) : undefined;
  if (atCursor) check.atCursor = { receiver: atCursor.receiver, entities: atCursor.entities, names: atCursor.names.size };
  let constraint: DereferenceConstraint | undefined;
  let guide: CallArgumentGuide | undefined;
  const callAtTyped = typer.callAt?.bind(typer);
  const calls = context.slot(CALL_AT);
  const callAt = callAtTyped
    ? (text: string): CallSignature | undefined =>
        once(calls, text, () => {
          try {
            return callAtTyped({ path: request.filePath, lang: request.lang, prefix: text, analyses }, signal);
          } catch (e) {
            if (isCancellationError(e)) throw e;
            check.note = `call typing failed: ${errorMessage(e)}`;
            return undefined;
          }
        })
    : undefined;
  if (constrains && can.decodeConstraint) {
    const prior = options.check.prior;
    constraint = new DereferenceConstraint(prefix, membersAt, atCursor, typeof prior === 'number' ? prior : (prior[request.lang] ?? 0));
    if (callAt) guide = new CallArgumentGuide(prefix, request.lang, callAt, callAt(prefix));
  }
  // A model server that offers a constraint mechanism is asked to finish a member of the receiver at the cursor.
  const memberChoice = atCursor && can.memberChoice ? { names: [...atCursor.names], partial: atCursor.partial } : undefined;
  // Both constraints see every step: the call guide first, the member mask after it (it has the last word at a dot).
  const decodeConstraint: DecodeConstraint | undefined =
    constraint && guide
      ? {
          apply: (texts, generated, logits) => {
            guide.apply(texts, generated, logits);
            constraint.apply(texts, generated, logits);
          },
          // Both asked: each keeps its own account of where the text is.
          active: (generated) => [guide.active(generated), constraint.active(generated)].includes(true),
        }
      : constraint;
  return {
    request: { ...(decodeConstraint ? { constraint: decodeConstraint } : {}), ...(memberChoice ? { memberChoice } : {}) },
    generated: (result) => {
      if (constraint)
        Object.assign(check, {
          constrained: constraint.events,
          steps: constraint.calls,
          maskMs: constraint.maskMs + (guide?.ms ?? 0),
          resolveMs: constraint.resolveMs,
          ...(guide && guide.events.length > 0 ? { calls: guide.events } : {}),
        });
      if (result?.serverConstraint) check.server = result.serverConstraint;
      return check;
    },
    // The finished answer is checked (repaired, or cut): all of it where decoding was not constrained; where it was, what the
    // constraint cannot see (a class literal assigned, a keyword argument), cut only.
    repair: (text) => {
      if (!text) return { text, outcome: check };
      const repair = checkMode === 'repair' || !constraint;
      const members = checkCompletion(prefix, text, membersAt, { repair, lang: request.lang });
      const args =
        request.lang === 'python' && callAt
          ? checkKeywordArguments(prefix, members.text, callAt, { repair })
          : { text: members.text, checked: 0, fixes: [] };
      Object.assign(check, { checked: members.checked + args.checked, fixes: [...members.fixes, ...args.fixes] });
      return { text: args.text, outcome: check };
    },
  };
}

// Checking a finished Python completion's keyword arguments: in a call whose
// callee the repository resolves (ReceiverTyper.callAt), `name=` must name one of its parameters —
// a keyword the callee lacks is the call's "member the receiver does not have". A wrong keyword is
// replaced by the closest parameter when that is unambiguous and repair is asked for, else the
// completion is cut before the argument.
import { argumentState, findOpenCall, type CallSignature } from './callArguments';
import { closestMember, type MemberFix } from './repairCompletion';

/** `name=` (not `==`) where an argument could start. */
const KEYWORD = /(?<![\p{L}\p{N}_.])([\p{L}_][\p{L}\p{N}_]*)\s*=(?!=)/gu;

/**
 * Checks each keyword argument the completion (inserted after `prefix`) writes in a resolved call.
 * `callAt` resolves the call a text ends inside; a callee taking `**kwargs` (or `*args`) is not checked.
 */
export function checkKeywordArguments(
  prefix: string,
  completion: string,
  callAt: (text: string) => CallSignature | undefined,
  options: { repair?: boolean } = {},
): { text: string; checked: number; fixes: MemberFix[] } {
  const fixes: MemberFix[] = [];
  let checked = 0;
  let text = completion;
  // One callee per call: its arguments' keywords share its resolution (a long answer may hold hundreds).
  const callees = new Map<number, CallSignature | undefined>();
  for (let from = 0; ;) {
    KEYWORD.lastIndex = from;
    const m = KEYWORD.exec(text);
    if (!m) break;
    const at = m.index;
    const name = m[1]!;
    from = at + m[0].length;
    const before = prefix + text.slice(0, at);
    const open = findOpenCall(before, 'python');
    if (!open) continue;
    const state = argumentState(before.slice(open.argsStart));
    // Only at the start of an argument (`f(a, name=`), not inside one (`f(a + b=`, a lambda's default).
    if (state.inString || state.closed || state.current.trim() !== '') continue;
    if (!callees.has(open.argsStart)) callees.set(open.argsStart, callAt(before));
    const sig = callees.get(open.argsStart);
    if (!sig || sig.variadic) continue;
    checked++;
    const params = new Set(sig.overloads.flatMap((o) => o.map((p) => p.name)));
    if (params.has(name)) continue;
    const became = options.repair === false ? undefined : closestMember(name, params);
    if (became !== undefined) {
      text = text.slice(0, at) + became + text.slice(at + name.length);
      fixes.push({ action: 'repaired', kind: 'argument', receiver: sig.callee, wrote: name, became, at });
      from = at + became.length;
      continue;
    }
    // Cut before the argument, with the comma that introduced it.
    const cutAt = text.slice(0, at).replace(/[\s,]*$/, '').length;
    fixes.push({ action: 'cut', kind: 'argument', receiver: sig.callee, wrote: name, at: cutAt });
    text = text.slice(0, cutAt);
    break;
  }
  return { text, checked, fixes };
}

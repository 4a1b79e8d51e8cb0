// Checking a finished completion (for model servers whose decoding we cannot steer): each
// dereference in it whose receiver the repository types must name one of its members; a wrong name
// is replaced by the closest valid one when that is unambiguous, else the completion is cut before
// the dereference. Monitor-guided decoding's check, applied after the fact.
import type { Lang } from '../kb/types';
import type { ReceiverMembers } from './receiverMembers';

export interface MemberFix {
  action: 'repaired' | 'cut';
  /** A member after a dot (absent: a member), or a keyword argument of a call (`receiver` is then the callee). */
  kind?: 'member' | 'argument';
  receiver: string;
  /** The name the model wrote. */
  wrote: string;
  /** The valid name it became (repaired). */
  became?: string;
  /** Offset in the completion where the name (repaired) or the cut starts. */
  at: number;
}

interface CheckedCompletion {
  text: string;
  /** Dereferences whose receiver resolved (and so were checked). */
  checked: number;
  fixes: MemberFix[];
}

/** Levenshtein distance, stopping early beyond `max`. */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      rowMin = Math.min(rowMin, v);
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/**
 * The one valid name closest to `wrote` (case-insensitive ties broken by exact case), when its
 * distance is at most a quarter of the name's length (at least 1) and no other name is as close.
 */
export function closestMember(wrote: string, names: ReadonlySet<string>): string | undefined {
  const max = Math.max(1, Math.floor(wrote.length / 4));
  let best: string | undefined;
  let bestD = Infinity;
  let tie = false;
  for (const n of names) {
    if (n.startsWith('__') && !wrote.startsWith('__')) continue;
    const d = n.toLowerCase() === wrote.toLowerCase() ? 0.5 : editDistance(wrote, n, max);
    if (d > max) continue;
    if (d < bestD) {
      best = n;
      bestD = d;
      tie = false;
    } else if (d === bestD) tie = true;
  }
  return tie ? undefined : best;
}

/**
 * Checks every dereference of `completion` (inserted after `prefix`), the one at the cursor
 * (prefix ending in `x.` / `x.part`) included. `membersAt` types the receiver of a text ending in
 * a dereference (check/receiverMembers).
 */
export function checkCompletion(
  prefix: string,
  completion: string,
  membersAt: (text: string) => ReceiverMembers | undefined,
  /** `repair`: a wrong name may become the closest valid one (else every wrong name is cut); `lang`: the completion's language. */
  options: { repair?: boolean; lang?: Lang } = {},
): CheckedCompletion {
  const repair = options.repair ?? true;
  const fixes: MemberFix[] = [];
  let checked = 0;
  let text = completion;
  // Where member names start in the completion: at 0 when the prefix itself ends in a dereference, then after each dot.
  let at = /\.[\p{L}\p{N}_$]*$/u.test(prefix) ? 0 : nextName(text, 0);
  while (at >= 0) {
    const m = membersAt(prefix + text.slice(0, at));
    const tail = /^[\p{L}\p{N}_$]*/u.exec(text.slice(at))?.[0] ?? '';
    if (m) {
      const wrote = m.partial + tail;
      // A name still unfinished at the end of the completion only needs to start a valid one.
      const atEnd = at + tail.length === text.length;
      const after = text.slice(at + tail.length);
      if ((wrote !== '' || !atEnd) && !definesAttribute(options.lang, after)) {
        checked++;
        const known = m.names.has(wrote) && !(wrote === 'class' && !classLiteralEnds(after));
        if (!(known || (atEnd && [...m.names].some((n) => n.startsWith(wrote))))) {
          const became = wrote === '' || !repair || wrote === 'class' ? undefined : closestMember(wrote, m.names);
          if (became === undefined || !became.startsWith(m.partial)) {
            // Cut before the dereference (its receiver included), or the whole completion at the cursor.
            const cutAt = Math.max(0, at - 1 - m.receiver.length);
            fixes.push({ action: 'cut', receiver: m.receiver, wrote, at: cutAt });
            text = text.slice(0, cutAt).trimEnd();
            break;
          }
          text = text.slice(0, at) + became.slice(m.partial.length) + text.slice(at + tail.length);
          fixes.push({ action: 'repaired', receiver: m.receiver, wrote, became, at });
        }
      }
    }
    at = nextName(text, at + 1);
  }
  return { text, checked, fixes };
}

/**
 * Whether `X.class` ends as a class literal does: not assigned (`X.class = ...`), not called
 * (`X.class(`), not followed by a name (`X.class getName`). `X.class.getName()` is a literal too (a
 * `Class` has members; the repository does not type them).
 */
function classLiteralEnds(after: string): boolean {
  return !/^\s*(?:=(?!=)|\(|[\p{L}\p{N}_$])/u.test(after);
}

/**
 * Python: `x.name = ...` (an attribute assignment, not `==`) gives the object that attribute, so
 * it is not a name the receiver lacks. Java fields must be declared: never.
 */
function definesAttribute(lang: Lang | undefined, after: string): boolean {
  return lang === 'python' && /^\s*(?::[^=\n]*)?=(?!=)/.test(after);
}

/** The offset after the next dot at or after `from` (where a member name would start), or -1. */
function nextName(text: string, from: number): number {
  const dot = text.indexOf('.', from);
  return dot < 0 ? -1 : dot + 1;
}

// Checked decoding at calls: at `f(` where `f` resolves to a repository callable,
// its parameters are known. For each argument position the generator prefers a name in scope that
// matches the parameter (by name, else by type), and it never writes more arguments than the
// signature takes, nor closes the call before the ones every overload needs. The call is read from the text, the callable from
// ReceiverTyper.callAt.
import type { Lang } from '../kb/types';
import { identifierEndingAt } from '../util/identifierAtEnd';

export interface Parameter {
  name: string;
  /** The declared type as written (`Cart`, `PaymentGateway | None`), when there is one. */
  type?: string;
  /** A call may leave it out: it has a default, is keyword-only (Python) or is a Java varargs parameter. */
  optional?: boolean;
}

/** The repository callable of the call the text is inside, and the names in scope that fit it. */
export interface CallSignature {
  /** The callee as written (`CheckoutService`, `self.gateway.charge`). */
  callee: string;
  /** What it resolved to, for the trace. */
  entities: string[];
  /** Parameters per overload (Java), after `self`/`cls`. */
  overloads: Parameter[][];
  /** Takes any number of arguments (`*args`, `**kwargs`, Java varargs). */
  variadic: boolean;
  /** The most arguments any overload takes. */
  maxArgs: number;
  /** The fewest positional arguments any overload needs (0 when unknown). */
  minArgs?: number;
  /** Per argument position, the name in scope that fits it (by name, else by type); undefined: none. */
  preferred: (string | undefined)[];
}

/** The innermost call the text ends inside: the callee, where its arguments start, and which argument is being written. */
interface OpenCall {
  callee: string;
  /** Offset of the first character after `(`. */
  argsStart: number;
  /** Top-level commas so far (the 0-based argument index). */
  argIndex: number;
  /** The argument written so far. */
  current: string;
}

/** The argument state of an argument list text (after `(`): top-level commas, the current argument, and whether it closed. */
export function argumentState(args: string): { argIndex: number; current: string; closed: boolean; inString: boolean } {
  let depth = 0;
  let argIndex = 0;
  let currentStart = 0;
  let quote: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const c = args[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return { argIndex, current: args.slice(currentStart, i), closed: true, inString: false };
      depth--;
    } else if (c === ',' && depth === 0) {
      argIndex++;
      currentStart = i + 1;
    }
  }
  return { argIndex, current: args.slice(currentStart), closed: false, inString: quote !== undefined };
}

/**
 * The call the text ends inside (its innermost unclosed bracket is a call's `(`), read over the
 * last lines; undefined outside a call, in a definition's parameter list, or inside a string.
 */
export function findOpenCall(text: string, lang: Lang, maxLines = 12): OpenCall | undefined {
  let from = text.length;
  for (let n = 0; n < maxLines; n++) {
    const nl = from > 0 ? text.lastIndexOf('\n', from - 1) : -1;
    if (nl < 0) {
      from = 0;
      break;
    }
    from = nl;
  }
  const stack: Array<{ at: number; c: string }> = [];
  let quote: string | undefined;
  for (let i = from; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      else if (c === '\n') quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '#' && lang === 'python') {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return undefined;
      i = nl;
    } else if (c === '/' && text[i + 1] === '/' && lang === 'java') {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return undefined;
      i = nl;
    } else if (c === '(' || c === '[' || c === '{') stack.push({ at: i, c });
    else if (c === ')' || c === ']' || c === '}') stack.pop();
  }
  if (quote) return undefined;
  const open = stack.at(-1);
  if (!open || open.c !== '(') return undefined;
  const name = identifierEndingAt(text, open.at);
  if (!name) return undefined;
  // The callee: identifiers joined by dots, with balanced call parentheses between them.
  let i = open.at - name.length;
  for (;;) {
    if (text[i - 1] !== '.') break;
    let j = i - 1;
    if (text[j - 1] === ')') {
      let depth = 0;
      let k = j - 1;
      for (; k >= from; k--) {
        if (text[k] === ')') depth++;
        else if (text[k] === '(' && --depth === 0) break;
      }
      if (k < from) return undefined;
      j = k;
    }
    const ident = identifierEndingAt(text, j, from);
    if (!ident) return undefined;
    i = j - ident.length;
  }
  const callee = text.slice(i, open.at);
  const lineStart = text.lastIndexOf('\n', i - 1) + 1;
  const lead = text.slice(lineStart, i);
  // A definition's parameter list is not a call.
  if (lang === 'python' && /\b(def|class)\s+$/.test(lead)) return undefined;
  if (lang === 'java' && /[\p{L}\p{N}_$>\]]\s+$/u.test(lead) && !/\b(new|return|throw|else|case|yield)\s+$/.test(lead)) return undefined;
  if (lang === 'java' && /^(if|for|while|switch|catch|synchronized|try)$/.test(callee)) return undefined;
  if (lang === 'python' && /^(if|for|while|return|print|assert|yield|not|and|or|in|elif|with|lambda)$/.test(callee)) return undefined;
  const args = text.slice(open.at + 1);
  const state = argumentState(args);
  if (state.closed || state.inString) return undefined;
  return { callee, argsStart: open.at + 1, argIndex: state.argIndex, current: state.current };
}

/** Split on top-level commas (outside brackets and strings). */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if ('([{<'.includes(c)) depth++;
    else if (')]}>'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out.map((p) => p.trim()).filter((p) => p.length > 0);
}

/** The text between a signature's first `(` and its matching `)`. */
function parameterText(signature: string): string | undefined {
  const open = signature.indexOf('(');
  if (open < 0) return undefined;
  let depth = 0;
  for (let i = open; i < signature.length; i++) {
    const c = signature[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return signature.slice(open + 1, i);
  }
  return undefined;
}

/**
 * A callable's parameters from its signature line(s); `dropReceiver` drops a Python method's
 * first parameter (`self`/`cls`). Undefined when the signature cannot be read.
 */
export function parseParameters(
  signature: string,
  lang: Lang,
  dropReceiver: boolean,
): { params: Parameter[]; variadic: boolean } | undefined {
  const inner = parameterText(signature);
  if (inner === undefined) return undefined;
  const parts = splitTopLevel(inner.replace(/#[^\n]*/g, ''));
  const params: Parameter[] = [];
  let variadic = false;
  if (lang === 'python') {
    if (dropReceiver && parts.length > 0 && /^(self|cls)\b/.test(parts[0]!)) parts.shift();
    let keywordOnly = false;
    for (const p of parts) {
      if (p === '/') continue;
      if (p === '*') {
        keywordOnly = true;
        continue;
      }
      if (p.startsWith('*')) {
        variadic = true;
        keywordOnly = true;
        continue;
      }
      const m = /^([\p{L}_][\p{L}\p{N}_]*)\s*(?::\s*([^=]+?))?\s*(=.*)?$/su.exec(p);
      if (!m) return undefined;
      params.push({ name: m[1]!, ...(m[2] ? { type: m[2].trim() } : {}), ...(m[3] || keywordOnly ? { optional: true } : {}) });
    }
  } else {
    for (const raw of parts) {
      const p = raw
        .replace(/@[\p{L}_$][\p{L}\p{N}_$.]*(\([^)]*\))?\s*/gu, '')
        .replace(/\bfinal\s+/g, '')
        .trim();
      const varargs = p.includes('...');
      if (varargs) variadic = true;
      const m = /^(.*?)\s*([\p{L}_$][\p{L}\p{N}_$]*)\s*(\[\s*\])*$/su.exec(p);
      if (!m || !m[1]) return undefined;
      params.push({ name: m[2]!, type: m[1].replace(/\.\.\.$/, '').trim(), ...(varargs ? { optional: true } : {}) });
    }
  }
  return { params, variadic };
}

/** The class name a declared type names (`Cart`, `"Cart"`, `Optional[Cart]`, `Cart | None`, `List<Cart>` -> undefined). */
export function bareTypeName(type: string | undefined): string | undefined {
  if (!type) return undefined;
  let t = type.replace(/["']/g, '').trim();
  t = t
    .replace(/^(typing\.)?Optional\[(.*)\]$/s, '$2')
    .replace(/\|\s*None\b|\bNone\s*\|/g, '')
    .trim();
  if (/[[<(|,]/.test(t)) return undefined;
  const last = t.split('.').pop()?.trim();
  return last && /^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(last) ? last : undefined;
}

/** One guided call, for the trace. */
export interface GuidedCall {
  callee: string;
  entities: string[];
  params: string[];
  preferred: (string | null)[];
  maxArgs: number | null;
  at: 'cursor' | 'generated';
  /** Decoding steps the guide changed (a preferred name forced, or an extra argument's comma masked). */
  steps: number;
}

interface ActiveCall {
  event: GuidedCall;
  sig: CallSignature;
  /** Offset of the arguments' start in prefix + generated. */
  argsStart: number;
}

/** What the guide looks up in a vocabulary, built once per vocabulary (about 50k tokens). */
interface GuideVocabulary {
  /** Ids of tokens holding a comma (the only ones that can add an argument). */
  comma: number[];
  /** Ids of tokens holding a `)` (the only ones that can close the call). */
  close: number[];
  /** Ids by their first character. */
  byFirst: Map<string, number[]>;
}

const VOCABULARIES = new WeakMap<readonly string[], GuideVocabulary>();

function guideVocabulary(tokenTexts: readonly string[]): GuideVocabulary {
  let v = VOCABULARIES.get(tokenTexts);
  if (!v) {
    v = { comma: [], close: [], byFirst: new Map() };
    for (let i = 0; i < tokenTexts.length; i++) {
      const t = tokenTexts[i]!;
      if (!t) continue;
      if (t.includes(',')) v.comma.push(i);
      if (t.includes(')')) v.close.push(i);
      const first = t[0]!;
      const list = v.byFirst.get(first);
      if (list) list.push(i);
      else v.byFirst.set(first, [i]);
    }
    VOCABULARIES.set(tokenTexts, v);
  }
  return v;
}

/** Whether `token`, written inside an argument list at bracket depth 0, adds a top-level comma. */
function addsTopLevelComma(token: string): boolean {
  let depth = 0;
  for (const c of token) {
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return false; // the call closes first
      depth--;
    } else if (c === ',' && depth === 0) return true;
  }
  return false;
}

/**
 * The per-step guide: inside a resolved call's argument list, at the start of an argument (or in
 * the middle of writing the preferred name), only tokens that write the preferred name are allowed;
 * on the last argument the signature takes, tokens that would add another are not.
 */
export class CallArgumentGuide {
  readonly events: GuidedCall[] = [];
  ms = 0;
  private call: ActiveCall | undefined;
  private resolvedAt = -1;
  private resolves = 0;

  constructor(
    private readonly prefix: string,
    private readonly lang: Lang,
    private readonly resolve: (text: string) => CallSignature | undefined,
    atCursor?: CallSignature,
  ) {
    if (atCursor) {
      const open = findOpenCall(prefix, lang);
      if (open) this.start(atCursor, open.argsStart, 'cursor');
    }
  }

  private start(sig: CallSignature, argsStart: number, at: 'cursor' | 'generated'): void {
    const event: GuidedCall = {
      callee: sig.callee,
      entities: sig.entities,
      params: (sig.overloads[0] ?? []).map((p) => p.name),
      preferred: sig.preferred.map((p) => p ?? null),
      maxArgs: sig.variadic ? null : sig.maxArgs,
      at,
      steps: 0,
    };
    this.events.push(event);
    this.call = { event, sig, argsStart };
  }

  /** Inside a resolved call's arguments (not in a string), or `generated` opens a call not yet resolved: apply() may mask. */
  active(generated: string): boolean {
    const t0 = performance.now();
    try {
      const text = this.prefix + generated;
      if (this.call) {
        const state = argumentState(text.slice(this.call.argsStart));
        if (!state.closed) return !state.inString;
        this.call = undefined;
      }
      return generated.endsWith('(') && this.resolvedAt !== generated.length && this.resolves < 8;
    } finally {
      this.ms += performance.now() - t0;
    }
  }

  apply(tokenTexts: readonly string[], generated: string, logits: Float32Array): void {
    const t0 = performance.now();
    try {
      const text = this.prefix + generated;
      let active = this.call;
      let state = active ? argumentState(text.slice(active.argsStart)) : undefined;
      if (active && state?.closed) this.call = active = state = undefined;
      if (!active && generated.endsWith('(') && this.resolvedAt !== generated.length && this.resolves < 8) {
        this.resolvedAt = generated.length;
        this.resolves++;
        const sig = this.resolve(text);
        if (sig) {
          this.start(sig, text.length, 'generated');
          active = this.call;
          state = argumentState('');
        }
      }
      if (!active || !state || state.inString) return;
      const { sig, event } = active;
      const vocab = guideVocabulary(tokenTexts);
      const current = state.current;
      const written = current.replace(/^\s+/, '');
      const want = sig.maxArgs === 0 && !sig.variadic && state.argIndex === 0 ? ')' : sig.preferred[state.argIndex];
      let changed = false;
      // A keyword argument (Python `name=`) or anything else already begun: no preference.
      if (want !== undefined && want.startsWith(written) && written.length < want.length && !current.includes('\n')) {
        const allowed: number[] = [];
        const last = this.atLast(sig, state.argIndex);
        // Only tokens starting with the name's next character, or with a space before the argument, can qualify.
        const candidates = [
          ...(vocab.byFirst.get(want[written.length]!) ?? []),
          ...(written.length === 0 && current.length === 0 ? (vocab.byFirst.get(' ') ?? []) : []),
        ];
        for (const id of candidates) {
          if (id >= logits.length) continue;
          const t = tokenTexts[id]!;
          if (!t) continue;
          const s = current + t;
          const w = s.replace(/^\s+/, '');
          const lead = s.slice(0, s.length - w.length);
          // At most one space before an argument, on its line; no space inside a name.
          if (lead.length > 1 || lead.includes('\n') || (lead.length > 0 && state.argIndex === 0 && current.length === 0)) continue;
          if (w.length === 0) {
            // The space after a comma as a token of its own.
            if (current.length === 0 && t === ' ' && state.argIndex > 0) allowed.push(id);
            continue;
          }
          if (w.length <= written.length) continue;
          if (want.startsWith(w)) allowed.push(id);
          else if (
            want === ')'
              ? w.startsWith(')')
              : w.startsWith(want) && /^[\s,)]/.test(w.slice(want.length)) && !(last && addsTopLevelComma(w.slice(want.length)))
          )
            allowed.push(id);
        }
        if (allowed.length > 0) {
          const keep = new Uint8Array(logits.length);
          for (const id of allowed) keep[id] = 1;
          for (let i = 0; i < logits.length; i++) if (keep[i] !== 1) logits[i] = -Infinity;
          changed = true;
        }
      }
      if (want !== undefined && want !== ')' && written === want && !current.includes('\n')) {
        // The preferred name is written: the argument ends here, as when a token writes the name
        // and goes on (above). No longer identifier, and no `.`, `(` or `[` after it: `cart.add(...)`
        // is not the `cart` that fits the parameter. Python may still make it a keyword (`cart=`).
        const ends = this.lang === 'python' ? /^[\s,)=]/ : /^[\s,)]/;
        for (const [first, ids] of vocab.byFirst) {
          if (ends.test(first)) continue;
          for (const id of ids) {
            if (id < logits.length && logits[id] !== -Infinity) {
              logits[id] = -Infinity;
              changed = true;
            }
          }
        }
      }
      if (state.argIndex < (sig.minArgs ?? 0)) {
        // Not before the arguments every overload needs: no token that closes the call short of them.
        const args = text.slice(active.argsStart);
        for (const id of vocab.close) {
          if (id >= logits.length || logits[id] === -Infinity) continue;
          const after = argumentState(args + tokenTexts[id]!);
          if (after.closed && after.argIndex + (after.current.trim() ? 1 : 0) < sig.minArgs!) {
            logits[id] = -Infinity;
            changed = true;
          }
        }
      }
      if (this.atLast(sig, state.argIndex)) {
        for (const id of vocab.comma) {
          if (id < logits.length && logits[id] !== -Infinity && addsTopLevelComma(tokenTexts[id]!)) {
            logits[id] = -Infinity;
            changed = true;
          }
        }
      }
      if (changed) event.steps++;
    } finally {
      this.ms += performance.now() - t0;
    }
  }

  /** On the last argument the signature takes (or past it): no further comma. */
  private atLast(sig: CallSignature, argIndex: number): boolean {
    return !sig.variadic && argIndex >= sig.maxArgs - 1 && sig.maxArgs > 0;
  }
}

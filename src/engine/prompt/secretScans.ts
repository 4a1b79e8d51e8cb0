// The scans the secret rules' strategies share (secretStrategies.ts): the name a literal is bound
// to, the function around it, a call's arguments split at their top-level commas, a chain's
// literals, and the one rule that runs line by line before the others (a literal left open at the
// cursor). Pure and synchronous.

import { ONE_LIT } from './secretPatterns';
import { isPlaceholder, isSecretName, REDACTED, type Redacted } from './secretVocabulary';

/** The name a literal at `at` is given to: `NAME = `, `NAME: `, `"NAME": `, `NAME(`, `.NAME(`, `NAME=`, a tuple's or call's opening. */
export function bindingBefore(text: string, at: number): string {
  const before = text.slice(Math.max(0, at - 120), at);
  const m = /([A-Za-z_][\w.-]{0,63})["']?\s*\]?\s*(?::\s*[\w.[\], |]{1,40}?\s*)?(?:=|:|=>|\(|,)\s*(?:\(\s*)?$/.exec(before);
  return m?.[1] ?? '';
}

/** The line around `at`. */
export function lineAround(text: string, at: number): string {
  const start = text.lastIndexOf('\n', at - 1) + 1;
  const end = text.indexOf('\n', at);
  return text.slice(start, end < 0 ? text.length : end);
}

/** `chain` with every literal's inside replaced. */
export function redactChain(chain: string): string {
  return chain.replace(ONE_LIT, (_lit, dq: string | undefined) => (dq !== undefined ? `"${REDACTED}"` : `'${REDACTED}'`));
}

/** The literals' contents of `chain`, joined. */
export function chainValue(chain: string): string {
  return [...chain.matchAll(ONE_LIT)].map((m) => m[1] ?? m[2] ?? '').join('');
}

/** Unterminated literals at a line's end (the value being typed at the cursor), after a name that says secret. */
export function redactUnterminated(text: string): Redacted {
  let count = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 2000 || !/["']/.test(line) || /"""|'''/.test(line)) continue;
    // A line whose quotes pair up closes every literal it opens (most lines: they skip the regular expression below).
    if ((line.split('"').length - 1) % 2 === 0 && (line.split("'").length - 1) % 2 === 0) continue;
    if (!/pass|pw|secret|token|key|auth|cred/i.test(line)) continue;
    // The literal runs to the line's end or to a fill-in-the-middle marker.
    const m = /^([^"'\n]*(?:(["'])(?:(?!\2)[^\\\n]|\\.)*\2[^"'\n]*)*?[=:(,][ \t]*)(["'])([^"'\n\\]{3,256}?)(<\||<fim_|<\uff5c|$)/.exec(
      line,
    );
    if (!m) continue;
    const head = m[1]!;
    const name = bindingBefore(head, head.length);
    const value = m[4]!;
    const bare = name
      .split('.')
      .pop()!
      .replace(/^(?:set|with)(?=[A-Z_])/, '');
    if (!isSecretName(bare) || isPlaceholder(value)) continue;
    if (/\s/.test(value) && !/pass|secret|pwd/i.test(name)) continue;
    lines[i] = `${head}${m[3]}${REDACTED}${m[5]}${line.slice(m[0].length)}`;
    count++;
  }
  return { text: count ? lines.join('\n') : text, count };
}

/** Where a literal ends: the index after its closing quote, or -1 (the text is searched from `at`, a quote). */
function literalEnd(text: string, at: number): number {
  const q = text[at];
  for (let i = at + 1; i < text.length && i < at + 1024; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === q) return i + 1;
    else if (c === '\n') return -1;
  }
  return -1;
}

/** A call's argument text from `open` (just after its `(`) to its matching `)`, at most 600 characters; undefined if unclosed. */
export function callArguments(text: string, open: number): string | undefined {
  let depth = 0;
  for (let i = open; i < text.length && i < open + 600; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      const end = literalEnd(text, i);
      if (end < 0) return undefined;
      i = end - 1;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return text.slice(open, i);
      depth--;
    }
  }
  return undefined;
}

/** The top-level parts of an argument list (commas inside brackets and literals do not split). */
export function splitTopLevel(args: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if (c === '"' || c === "'") {
      const end = literalEnd(args, i);
      i = end < 0 ? args.length : end - 1;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(args.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(args.slice(from));
  return parts;
}

/** A part that is one literal (prefix, quotes, an optional `.getBytes()` / `.toCharArray()` / `.encode()` after it). */
const ONE_LITERAL_PART = /^\s*[rRbBuUfF]{0,2}(["'])((?:(?!\1)[^\\\n]|\\.)*)\1\s*(?:\.(?:getBytes|toCharArray|encode)\([^()]*\)\s*)?$/;

/** `part` with its literal's inside replaced, when it is one literal whose value `secret` accepts. */
export function redactPart(part: string, secret: (value: string) => boolean): string | undefined {
  const m = ONE_LITERAL_PART.exec(part);
  if (!m || isPlaceholder(m[2] ?? '') || !secret(m[2] ?? '')) return undefined;
  const q = m[1]!;
  return part.replace(`${q}${m[2]}${q}`, `${q}${REDACTED}${q}`);
}

/** A call's match rewritten: its arguments split, the ones `pick` names redacted. `m[0]` ends with the call's `(`. */
export function redactArguments(
  m: RegExpExecArray,
  pick: (parts: string[]) => number[],
  secret: (value: string) => boolean,
): { text: string; length: number } | undefined {
  const open = m.index + m[0].length;
  const args = callArguments(m.input, open);
  if (args === undefined) return undefined;
  const parts = splitTopLevel(args);
  let changed = false;
  for (const i of pick(parts)) {
    const r = parts[i] === undefined ? undefined : redactPart(parts[i], secret);
    if (r !== undefined) {
      parts[i] = r;
      changed = true;
    }
  }
  return changed ? { text: `${m[0]}${parts.join(',')}`, length: m[0].length + args.length } : undefined;
}

/** The name a value at `at` is bound to, in any script: `NAME = `, `NAME: str = `, `Supplier<String> NAME = `. */
export function boundName(text: string, at: number): string {
  const m = /([\p{L}_][\p{L}\p{N}_.]{0,63})\s*(?::[^=\n]{1,40})?=\s*$/u.exec(text.slice(Math.max(0, at - 120), at));
  return m?.[1] ?? '';
}

/** The function or method whose body holds `at`: the last `def NAME(` or `NAME(...) {` in the 600 characters before it. */
export function enclosingName(text: string, at: number): string {
  const window = text.slice(Math.max(0, at - 600), at);
  let name = '';
  for (const m of window.matchAll(/\bdef\s+([\p{L}_][\p{L}\p{N}_]*)\s*\(|([\p{L}_][\p{L}\p{N}_]*)\s*\([^()\n]{0,120}\)[^;{}\n]{0,60}\{/gu))
    name = m[1] ?? m[2] ?? name;
  return name;
}

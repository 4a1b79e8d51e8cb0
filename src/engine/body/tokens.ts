// Token sets and Jaccard similarity for Rambo's matching steps: the model tokenizer's ids where a
// tokenizer is given (Rambo's reference code: BPE token-id sets), else subword tokens of identifiers.
import type { Lang } from '../kb/types';
import { identifierTokens } from '../util/codeText';

/** Text -> token ids (the completion model's tokenizer). */
export type Tokenize = (text: string) => ArrayLike<number>;

/** `getUserName`, `get_user_name`, `HTTPServer` -> get, user, name / http, server (lower case). */
function subwords(identifier: string): string[] {
  return (
    identifier
      .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
      .split(/[\s_$]+/)
      .filter((s) => s.length > 0)
      .map((s) => s.toLowerCase())
      // A plural names the same thing (`taxRates` / `taxRate`).
      .map((s) => (s.length > 3 && s.endsWith('s') && !s.endsWith('ss') ? s.slice(0, -1) : s))
  );
}

export function subwordSet(text: string): Set<string> {
  const out = new Set<string>();
  for (const id of identifierTokens(text)) for (const s of subwords(id)) out.add(s);
  return out;
}

export function tokenSet(text: string, tokenize?: Tokenize): Set<string | number> {
  if (!tokenize) return subwordSet(text);
  return new Set(Array.from(tokenize(text)));
}

export function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let both = 0;
  for (const x of small) if (large.has(x)) both++;
  return both / (a.size + b.size - both);
}

const JAVA_MODIFIERS = new Set([
  'public',
  'private',
  'protected',
  'static',
  'final',
  'abstract',
  'synchronized',
  'native',
  'default',
  'strictfp',
  'transient',
  'volatile',
]);

/** Split `a, Map<K, V> b, c` at top-level commas. */
function splitParams(params: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < params.length; i++) {
    const ch = params[i];
    if (ch === '<' || ch === '(' || ch === '[') depth++;
    else if (ch === '>' || ch === ')' || ch === ']') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(params.slice(start, i));
      start = i + 1;
    }
  }
  out.push(params.slice(start));
  return out.map((p) => p.trim()).filter((p) => p.length > 0);
}

/**
 * The part of a signature Rambo compares. Java: return type, name, parameter types (modifiers,
 * annotations, parameter names and `throws` dropped). Python: name, parameters, annotations
 * (`def`, `self`/`cls` dropped).
 */
export function signatureKey(lang: Lang, signature: string): string {
  const s = signature.replace(/\s+/g, ' ').trim();
  if (lang === 'python') {
    return s
      .replace(/^(async )?def /, '')
      .replace(/:\s*$/, '')
      .replace(/\(\s*(self|cls)\s*(,\s*)?/, '(');
  }
  const noAnnotations = s.replace(/@[\w.]+(\([^)]*\))?/g, ' ');
  const open = noAnnotations.indexOf('(');
  if (open < 0) return noAnnotations;
  const close = noAnnotations.lastIndexOf(')');
  const head = noAnnotations
    .slice(0, open)
    .split(' ')
    .filter((w) => w && !JAVA_MODIFIERS.has(w))
    .join(' ');
  const paramTypes = splitParams(noAnnotations.slice(open + 1, close < open ? undefined : close)).map((p) =>
    p
      .replace(/\bfinal\b/g, '')
      .replace(/\s*[A-Za-z_$][\w$]*\s*(\[\s*\])*$/, '')
      .trim(),
  );
  return `${head} ${paramTypes.join(' ')}`.trim();
}

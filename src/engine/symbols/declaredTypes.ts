// Declared types read from a knowledge-base item's signature: a function's return type, a
// variable's declared type or initialiser. The evaluator reads the loose form (modifiers and
// keywords left in: typeChains drops them); the strict Java form (modifiers, annotations and type
// parameters dropped, `void` none) is what the bench's case miner compares types by.
import type { KbItem } from '../kb/types';

/** `def f(...) -> X:` -> X; Java `public static Foo<Bar> make(...)` -> `public static Foo<Bar>`. */
export function returnTypeText(item: KbItem): string | undefined {
  const sig = item.signature;
  if (item.lang === 'python') return /->\s*([\s\S]+?)\s*:?\s*$/.exec(sig)?.[1];
  const at = sig.indexOf(`${item.name}(`) >= 0 ? sig.indexOf(`${item.name}(`) : sig.indexOf(item.name);
  if (at <= 0) return undefined;
  return sig
    .slice(0, at)
    .replace(/@\w+(\([^)]*\))?/g, ' ')
    .replace(/^\s*<[^>]*>/, ' ');
}

/** A variable's declared type: `x: T = v` (Python) or `private final T x = v` (Java). */
export function variableTypeText(item: KbItem): string | undefined {
  const sig = item.signature;
  if (item.lang === 'python') return /^[\p{L}\p{N}_.]+\s*:\s*([^=]+?)\s*(=|$)/u.exec(sig)?.[1];
  const decl = sig.split('=', 1)[0] ?? '';
  const at = decl.lastIndexOf(item.name);
  return at > 0 ? decl.slice(0, at).replace(/@\w+(\([^)]*\))?/g, ' ') : undefined;
}

/** The text after a declaration's `=` (`x = make()` -> `make()`). */
export function initialiserText(item: KbItem): string | undefined {
  const m = /^[^=]*?(?<![=!<>])=(?!=)([\s\S]*)$/.exec(item.signature);
  return m?.[1]?.trim();
}

/** Annotations, dotted names and arguments included (`@a.b.C(x)`). */
const JAVA_ANNOTATION = /@\w+(\.\w+)*(\([^)]*\))?/g;

/** A Java method's declared return type (modifiers, annotations and type parameters dropped); undefined for `void`. */
export function javaReturnType(m: KbItem): string | undefined {
  const sig = m.signature.replace(JAVA_ANNOTATION, ' ');
  const at = sig.indexOf(`${m.name}(`);
  if (at <= 0) return undefined;
  const head = sig
    .slice(0, at)
    .replace(/\b(public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\b/g, ' ')
    .replace(/^\s*<[^>]*(<[^>]*>[^>]*)*>/, ' ')
    .trim();
  return head === '' || head === 'void' ? undefined : head;
}

/** A Java field's declared type (modifiers and annotations dropped). */
export function javaFieldType(m: KbItem): string | undefined {
  const decl = (m.signature.split('=', 1)[0] ?? '').replace(JAVA_ANNOTATION, ' ');
  const at = decl.lastIndexOf(m.name);
  if (at <= 0) return undefined;
  const head = decl
    .slice(0, at)
    .replace(/\b(public|protected|private|static|final|transient|volatile)\b/g, ' ')
    .trim();
  return head === '' ? undefined : head;
}

// The one regular-expression escaper: a literal string inside a RegExp built at run time.

/** `s` with every character that has a meaning in a regular expression escaped. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

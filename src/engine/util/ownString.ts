// Strings kept for long that were cut from a larger one. V8 makes a substring of 13 characters or
// more a slice that keeps its whole parent alive: an identifier matched in an item's text, kept as
// a vocabulary key, kept the whole text. With the knowledge base's texts packed (kb/packedText.ts)
// that parent is a decoded copy nothing else holds: the sparse vocabulary alone kept 20,031 of
// java.base's item texts (15 MB) that way.

/** V8's shortest sliced string (SlicedString::kMinLength); shorter substrings are copies. */
const SLICE_MIN_LENGTH = 13;

/** `s` with characters of its own (a flat copy), so that keeping it keeps nothing else. */
export function ownString(s: string): string {
  return s.length < SLICE_MIN_LENGTH ? s : (JSON.parse(JSON.stringify(s)) as string);
}

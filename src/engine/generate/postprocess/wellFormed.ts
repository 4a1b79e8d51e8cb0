// Model text is inserted into a document as it is, so it must be whole characters: a model server
// (or a byte-level decoder) that cut a UTF-8 sequence sends U+FFFD, and a cut UTF-16 sequence is a
// lone surrogate. The suggestion ends before the first such character: the text after it was
// written from bytes that did not decode, and a half pair would split the document's character. Pure.

/** U+FFFD, a high surrogate not followed by a low one, or a low surrogate not after a high one. */
const MALFORMED = /\uFFFD|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** `text` up to its first replacement character or lone surrogate (all of it when it has none). */
export function cutAtMalformed(text: string): string {
  const m = MALFORMED.exec(text);
  return m ? text.slice(0, m.index) : text;
}

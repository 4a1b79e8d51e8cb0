// The junk filters every mode's postprocessed text goes through, in the order the
// model stages apply them: the loop and the placeholder on the mode's cut (before checking), the
// right context on what would be inserted (after it).
import { cutAtPlaceholder } from './postprocess';
import {
  cutInlineLoop,
  cutNearLoop,
  cutRecurringLine,
  cutRepeatedLines,
  PLACEHOLDER_FORMS,
  repeatsRightContext,
  type JunkCut,
} from './junk';

/** The text without a decoding loop or a redaction placeholder, and what each rule cut. */
export function filterJunk(text: string): { text: string; cuts: JunkCut[] } {
  const cuts: JunkCut[] = [];
  let out = text;
  // Loops: in a row, with variations, inside one line, and a phrase or statement repeated with small variations to the end.
  for (const rule of [cutRepeatedLines, cutRecurringLine, cutInlineLoop, cutNearLoop]) {
    const looped = rule(out);
    if (!looped.cut) continue;
    cuts.push(looped.cut);
    out = looped.text;
  }
  const written = PLACEHOLDER_FORMS.exec(out)?.[0];
  if (written !== undefined) {
    const kept = cutAtPlaceholder(out);
    cuts.push({
      rule: 'placeholder',
      removed: out.slice(kept.length).replace(/^[ \t]+/, ''),
      note: `it wrote the redaction placeholder ${written}: cut before it, with what it was bound to`,
    });
    out = kept;
  }
  return { text: out.trimEnd() === '' ? '' : out, cuts };
}

/** The right-context rule's cut, when the suggestion only re-types the text after the cursor. */
export function rightContextCut(inserted: string, suffix: string): JunkCut | undefined {
  if (!repeatsRightContext(inserted, suffix)) return undefined;
  return { rule: 'rightContext', removed: inserted, note: 'it only re-typed the text after the cursor: no suggestion' };
}

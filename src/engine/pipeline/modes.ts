// The completion modes the pipeline knows. Line mode: CodeRAG's line completion, cut to the scope
// of the cursor's line (postprocess); on an empty line the prompt carries the line's indentation
// and so does the suggestion (lineIndent), and the model may not leave it blank (hold).
import { lineSettled, postprocessCompletion, postprocessEmptyReason } from '../generate/postprocess/postprocess';
import type { LinePlan } from './types';
import { cursorLineBlank, missingLineIndent } from './lineIndent';

/** The answer so far holds nothing but whitespace. */
export const isBlank = (generated: string): boolean => generated.trim() === '';

/** Line mode: the line composition with the line's own plan. */
export const LINE_MODE: LinePlan = {
  kind: 'line',
  name: 'line',
  prime: (request) => missingLineIndent(request.prefix, request.suffix),
  // On an empty line a blank answer shows nothing: the model writes the statement before it may end or break the line.
  hold: (request) => (cursorLineBlank(request.prefix, request.suffix) ? { holdLine: isBlank } : {}),
  // A single line is complete once it ends: the model need not write the 48 tokens its limit allows.
  until: (request) => lineSettled({ lang: request.lang, prefix: request.prefix, suffix: request.suffix }),
  postprocess: (raw, context, options) => postprocessCompletion(raw, context, { maxLines: options.maxLines, maxChars: options.maxChars }),
  whyEmpty: (raw, context, options) => postprocessEmptyReason(raw, context, { maxLines: options.maxLines, maxChars: options.maxChars }),
};

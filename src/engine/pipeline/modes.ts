// The completion modes the pipeline knows. Line mode: CodeRAG's line completion, cut to the scope
// of the cursor's line (postprocess); on an empty line the prompt carries the line's indentation
// and so does the suggestion (lineIndent).
import { postprocessCompletion, postprocessEmptyReason } from '../generate/postprocess/postprocess';
import type { CompletionMode } from './types';
import { missingLineIndent } from './lineIndent';

export const LINE_MODE: CompletionMode = {
  name: 'line',
  prime: (request) => missingLineIndent(request.prefix, request.suffix),
  postprocess: (raw, context, options) => postprocessCompletion(raw, context, { maxLines: options.maxLines, maxChars: options.maxChars }),
  whyEmpty: (raw, context, options) => postprocessEmptyReason(raw, context, { maxLines: options.maxLines, maxChars: options.maxChars }),
};

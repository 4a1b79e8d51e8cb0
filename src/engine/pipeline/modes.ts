// The completion modes the pipeline knows. Line mode: CodeRAG's line completion, cut to the scope
// of the cursor's line (postprocess).
import { postprocessCompletion, postprocessEmptyReason } from '../generate/postprocess/postprocess';
import type { CompletionMode } from './types';

export const LINE_MODE: CompletionMode = {
  name: 'line',
  postprocess: (raw, context, options) => postprocessCompletion(raw, context, { maxLines: options.maxLines, maxChars: options.maxChars }),
  whyEmpty: (raw, context, options) => postprocessEmptyReason(raw, context, { maxLines: options.maxLines, maxChars: options.maxChars }),
};

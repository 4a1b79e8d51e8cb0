// The BestFit reranking prompt (CodeRAG Fig. 4, as its published implementation words it).
import type { RerankDoc, RerankQuery } from './types';

/** Window labels; the published implementation stops at W (X, Y, Z are not single tokens everywhere). */
export const LABELS = 'ABCDEFGHIJKLMNOPQRSTUVW'.split('');

/** CodeRAG's rerank query keeps the last 30 lines of the code context. */
const RERANK_QUERY_LINES = 30;

export const BESTFIT_SYSTEM =
  'A conversation between User and Assistant. The user asks a question, and the Assistant solves it. ' +
  'The assistant provides the user with the answer enclosed within <answer> </answer> tags, i.e., <answer> answer here </answer>.';

const QUESTION = 'Which of the retrieved code snippets is most helpful for completing the following code snippet?';
const INSTRUCTION =
  'Please provide only the label of the most helpful retrieved code snippet, enclosed in square brackets, within the answer tags. ' +
  'For example, if the code snippet C is the most helpful, the answer should be: <answer>[C]</answer>.';

/** `# path` for Python and other `#`-comment files, `// path` for Java (as the knowledge-base stubs head themselves). */
function pathHeader(path: string): string {
  return /\.(java|kt|scala|js|ts|c|cc|cpp|h|hpp|cs|go|rs|swift)$/i.test(path) ? `// ${path}` : `# ${path}`;
}

/** The rerank query: the file path and the last `lines` lines of the code before the cursor. */
export function buildRerankQuery(path: string, codeContext: string, lines = RERANK_QUERY_LINES): RerankQuery {
  const all = codeContext.replace(/\r\n?/g, '\n').split('\n');
  const tail = all.slice(Math.max(0, all.length - lines)).join('\n');
  return { path, text: `${pathHeader(path)}\n${tail}`, context: codeContext };
}

export function labelOf(index: number): string {
  const label = LABELS[index];
  if (label === undefined) throw new RangeError(`a BestFit window holds at most ${LABELS.length} candidates`);
  return label;
}

/** The user message of Fig. 4 for one window: candidates as [A], [B], ... each followed by its text. */
export function bestFitUserMessage(query: RerankQuery, window: readonly RerankDoc[]): string {
  const documents = window.map((doc, i) => `[${labelOf(i)}]\n${doc.text}`).join('\n');
  return (
    `\n${QUESTION}\nthe code snippet to be completed:\n${query.text}\n\nthe retrieved code ` +
    `snippet(s):\n${documents}\n\n${INSTRUCTION}\n`
  );
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export function bestFitMessages(query: RerankQuery, window: readonly RerankDoc[]): ChatMessage[] {
  return [
    { role: 'system', content: BESTFIT_SYSTEM },
    { role: 'user', content: bestFitUserMessage(query, window) },
  ];
}

/** ChatML (Qwen's chat template) for servers that only take a raw prompt (/v1/completions). */
export function chatMlPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

// Reading a BestFit answer (CodeRAG section 2.3.1): a strict parse of `<answer>[X]</answer>` and the
// label scores from the top log-probabilities at the label token (a label outside them scores 0).
import { LABELS } from './bestFitPrompt';

interface TopLogprob {
  token: string;
  logprob: number;
}

/** One generated token with its log-probability and the top alternatives at its position. */
export interface TokenLogprob extends TopLogprob {
  top?: TopLogprob[];
}

type ParsedAnswer = { kind: 'label'; index: number; label: string } | { kind: 'outsideWindow'; label: string } | { kind: 'unparsable' };

// An empty think block may precede the answer when thinking is off (Qwen3); the closing tag may be
// missing or cut short when the server stopped at it or ran out of tokens. Nothing else is
// accepted, so snippet text cannot steer more than the choice of one offered label.
const ANSWER = /^\s*(?:<think>\s*<\/think>\s*)?<answer>\s*\[([A-Z])\]\s*([\s\S]*)$/;
const CLOSE = '</answer>';

export function parseBestFitAnswer(text: string, windowSize: number): ParsedAnswer {
  const m = ANSWER.exec(text);
  const label = m?.[1];
  const rest = (m?.[2] ?? '').trimEnd();
  if (label === undefined || !(rest === CLOSE || CLOSE.startsWith(rest))) return { kind: 'unparsable' };
  const index = LABELS.indexOf(label);
  if (index < 0 || index >= windowSize) return { kind: 'outsideWindow', label };
  return { kind: 'label', index, label };
}

/** Offset of the label letter in the answer text, or -1. */
function labelOffset(text: string): number {
  const m = /<answer>\s*\[([A-Z])/.exec(text);
  return m ? m.index + m[0].length - 1 : -1;
}

/**
 * Probability of each window label at the label token, from the top log-probabilities the server
 * returned (CodeRAG's published scoring uses the top 20). Undefined when the tokens do not show
 * where the label was generated.
 */
export function labelScores(tokens: readonly TokenLogprob[], windowSize: number): number[] | undefined {
  const text = tokens.map((t) => t.token).join('');
  const offset = labelOffset(text);
  if (offset < 0) return undefined;
  let start = 0;
  for (const token of tokens) {
    const end = start + token.token.length;
    if (offset >= start && offset < end) {
      const prefix = token.token.slice(0, offset - start);
      const alternatives = token.top && token.top.length > 0 ? token.top : [{ token: token.token, logprob: token.logprob }];
      const scores = new Array<number>(windowSize).fill(0);
      const seen = new Set<string>();
      for (const alt of alternatives) {
        if (seen.has(alt.token) || !alt.token.startsWith(prefix) || !Number.isFinite(alt.logprob)) continue;
        seen.add(alt.token);
        const m = /^([A-Z])(?![A-Za-z0-9])/.exec(alt.token.slice(prefix.length));
        const index = m?.[1] === undefined ? -1 : LABELS.indexOf(m[1]);
        if (index >= 0 && index < windowSize) scores[index] = (scores[index] ?? 0) + Math.exp(alt.logprob);
      }
      return scores;
    }
    start = end;
  }
  return undefined;
}

/** Index of the highest score; ties go to the earlier position (the better retrieval rank). */
export function argmax(scores: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if ((scores[i] ?? -Infinity) > (scores[best] ?? -Infinity)) best = i;
  return best;
}

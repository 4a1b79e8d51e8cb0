// ProCC (ProCC, Tan et al. 2024): similar code from several perspectives, one chosen per
// request by a contextual bandit. The contract between the engine (perspectives, the choice, the
// prompt) and the hosts (the server learns from what the user accepts; the bench from the cases).
import type { PathStatus } from '../retrieve/types';

/** The perspectives of ProCC: the code itself, the likely next line, a summary. */
export type Perspective = 'lexical' | 'hypothetical' | 'summary';
export const PERSPECTIVES: readonly Perspective[] = ['lexical', 'hypothetical', 'summary'];

/** A bandit arm: a perspective whose top window enters the prompt, or no similar code. */
export type SimilarArm = Perspective | 'none';
export const SIMILAR_ARMS: readonly SimilarArm[] = ['lexical', 'hypothetical', 'summary', 'none'];

/** What the trace says about the similar-code stage of one completion. */
export interface SimilarTrace {
  /** The arm whose window entered the prompt ('none': no similar code). */
  arm: SimilarArm;
  /** How it was chosen: by the bandit, fixed by the options (one perspective), or the union of all. */
  chosenBy: 'bandit' | 'fixed' | 'union';
  /** The bandit's context for this request; the host rewards `arm` on it later. */
  features: number[];
  /** Every arm's upper confidence bound (bandit only). */
  scores?: Partial<Record<SimilarArm, number>>;
  perspectives: Array<{
    name: Perspective;
    status: PathStatus;
    elapsedMs: number;
    message?: string;
    /** What the perspective searched with (the query window, the model's next line, the summary). */
    query?: string;
    /** The perspective's best window. */
    top?: { id: string; path: string; startLine: number; endLine: number; score: number };
  }>;
  /** Ids of the windows that entered the prompt. */
  snippets: string[];
  /** Filled by the host when the user's answer arrives (the server) or the case is scored (the bench). */
  reward?: number;
}

// What learning needs of each suggestion until its outcome arrives, kept by the suggestion's id (its
// trace id) apart from the explain cache: the bandit's arm and context, the gate's features; the
// explain cache keeps only the last 100 traces, so a suggestion accepted later still teaches.
import type { GateFeatures } from '../engine/gate/features';
import type { SimilarArm } from '../engine/similar/types';

/** What one suggestion can teach. */
export interface Learnable {
  /** The workspace folder the suggestion was made in (each folder learns on its own). */
  folderRoot: string;
  /** The bandit's choice: the arm whose window entered the prompt and the context it chose on. */
  bandit?: { arm: SimilarArm; features: readonly number[] };
  /** The show gate's view of the suggestion it showed: the features it scored. */
  gate?: { features: GateFeatures; logprobs: boolean };
  /** Once learned: the reward (each suggestion counts once). */
  reward?: number;
  /** Whether the bandit learned it (Explain shows the reward then). */
  banditLearned?: boolean;
}

/**
 * Completions kept for learning (one per request that ran the pipeline). A suggestion's outcome comes
 * when it is accepted or the user moves on, usually within seconds, and the explain cache's 100 traces
 * are gone after a minute of fast typing; 4,096 covers over an hour of it at one request a second while
 * holding under 2 MB (an entry is the bandit's 7 numbers and the gate's 14 features).
 */
export const LEARNABLE_KEPT = 4096;

/** Learnable suggestions by id, the oldest dropped beyond `limit`. */
export class LearningStore {
  private readonly entries = new Map<string, Learnable>();

  constructor(private readonly limit = LEARNABLE_KEPT) {}

  remember(id: string, learnable: Learnable): void {
    this.entries.delete(id);
    this.entries.set(id, learnable);
    while (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  get(id: string): Learnable | undefined {
    return this.entries.get(id);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Every kept suggestion may be learned again (after the learned state was reset). */
  forgetRewards(): void {
    for (const entry of this.entries.values()) {
      delete entry.reward;
      delete entry.banditLearned;
    }
  }
}

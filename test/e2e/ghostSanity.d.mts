// Types of ghostSanity.mjs (the e2e stage's sanity check of every ghost text it reads).
export interface GhostSanityOptions {
  lang: 'python' | 'java';
  /** The text on the cursor's line before the ghost text. */
  typed?: string;
  /** Receivers and the members they have (default: the fixtures' FIXTURE_RECEIVERS). */
  receivers?: Record<string, string[]>;
  /** Callees and their parameters (default: FIXTURE_CALLS). */
  calls?: Record<string, string[]>;
}
export const FIXTURE_RECEIVERS: Record<'python' | 'java', Record<string, string[]>>;
export const FIXTURE_CALLS: Record<string, Record<string, string[]>>;
export function ghostTextProblems(ghost: string, options?: GhostSanityOptions): string[];
export function assertSaneGhostText(ghost: string, options?: GhostSanityOptions): void;

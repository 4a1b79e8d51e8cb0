// Which reranker the next request uses: `llm`, `distilled` or `none`. The
// choice applies to the next request without a restart; a change fires an event (the status bar).
import type { Reranker, RerankerChoice, RerankerKind } from './types';
import { Emitter, type Disposable } from '../util/disposable';

export interface RerankerChange {
  previous: RerankerChoice;
  current: RerankerChoice;
}

export class RerankerSwitch implements Disposable {
  private choice: RerankerChoice;
  private readonly rerankers = new Map<RerankerKind, Reranker>();
  private readonly changed = new Emitter<RerankerChange>();
  /** Fires after the choice changed (not when set to the same value). */
  readonly onDidChange = this.changed.event;

  constructor(initial: RerankerChoice = 'none', rerankers: Partial<Record<RerankerKind, Reranker>> = {}) {
    this.choice = initial;
    for (const [kind, reranker] of Object.entries(rerankers) as Array<[RerankerKind, Reranker | undefined]>)
      if (reranker) this.rerankers.set(kind, reranker);
  }

  get current(): RerankerChoice {
    return this.choice;
  }

  /** Kinds with a reranker registered (what a toggle can offer besides `none`). */
  get available(): RerankerKind[] {
    return [...this.rerankers.keys()];
  }

  set(choice: RerankerChoice): void {
    if (choice === this.choice) return;
    const previous = this.choice;
    this.choice = choice;
    this.changed.fire({ previous, current: choice });
  }

  /** Register or replace the reranker of a kind (e.g. a new Ollama URL or model from the settings). */
  register(kind: RerankerKind, reranker: Reranker | undefined): void {
    if (reranker) this.rerankers.set(kind, reranker);
    else this.rerankers.delete(kind);
  }

  /**
   * The reranker for the request starting now; undefined means keep the retrieval order (choice
   * `none`, or the chosen kind has no reranker registered — the trace says which).
   */
  resolve(): { reranker: Reranker | undefined; choice: RerankerChoice; missing?: string } {
    if (this.choice === 'none') return { reranker: undefined, choice: 'none' };
    const reranker = this.rerankers.get(this.choice);
    return reranker
      ? { reranker, choice: this.choice }
      : { reranker: undefined, choice: this.choice, missing: `no ${this.choice} reranker is configured` };
  }

  dispose(): void {
    this.changed.dispose();
  }
}

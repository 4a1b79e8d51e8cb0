// Keeps something built from a knowledge base current (the sparse, dense and window indexes, the
// symbol table): the paths changed since its last run wait in a pending set, a refresh runs 50 ms
// after a change (so the next request does not pay for it), and runs take turns.
import type { KbChangeEvent } from './types';
import type { Disposable, Listener } from '../util/disposable';

/** How long after a change the refresh starts: a burst of changes (a save of many files) makes one run. */
export const REFRESH_DELAY_MS = 50;

interface ChangeSchedulerOptions {
  /** Whether a refresh is worth scheduling (the index was built once; before that, the first request builds it). */
  built: () => boolean;
  /** The refresh that runs REFRESH_DELAY_MS after a change, when paths are pending. */
  refresh: (signal: AbortSignal) => Promise<unknown>;
  /** A scheduled refresh failed (nobody awaits it). */
  onError: (e: unknown) => void;
  /** Called at every change, before the refresh is scheduled. */
  onChange?: (e: KbChangeEvent) => void;
}

export class ChangeScheduler implements Disposable {
  private readonly pending = new Set<string>();
  private readonly subscription: Disposable;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: Promise<unknown> | undefined;
  /** Aborts a scheduled refresh when the owner is disposed. */
  private readonly lifetime = new AbortController();

  constructor(
    source: { onDidChange: (listener: Listener<KbChangeEvent>) => Disposable },
    private readonly options: ChangeSchedulerOptions,
  ) {
    this.subscription = source.onDidChange((e) => {
      for (const p of [...e.changed, ...e.removed]) this.pending.add(p);
      options.onChange?.(e);
      this.schedule();
    });
  }

  /** Whether a run is in progress. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Whether paths changed since the last take(). */
  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /** The paths changed since the last take(), which leave the pending set. */
  take(): string[] {
    const paths = [...this.pending];
    this.pending.clear();
    return paths;
  }

  /** Paths a failed or cancelled run did not finish: the next run takes them again. */
  putBack(paths: Iterable<string>): void {
    for (const p of paths) this.pending.add(p);
  }

  /** Run `work` when no other run (scheduled or asked for) is in progress. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.running) await this.running.catch(() => undefined);
    const run = work();
    this.running = run;
    try {
      return await run;
    } finally {
      this.running = undefined;
    }
  }

  private schedule(): void {
    if (!this.options.built() || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.pending.size > 0) this.options.refresh(this.lifetime.signal).catch(this.options.onError);
    }, REFRESH_DELAY_MS);
    this.timer.unref?.();
  }

  dispose(): void {
    this.lifetime.abort();
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.subscription.dispose();
  }
}

// At most one model request in flight (docs/ARCHITECTURE.md "Prior art": requests pile up on local hardware).
// The newest request wins: entering aborts the current holder, waits until it has settled, then
// runs; a waiter overtaken by a newer one is cancelled without ever reaching the model.
import { CancellationError } from '../util/errors';
import type { ModelGate } from './types';

export class LatestWinsGate implements ModelGate {
  private current: { controller: AbortController; done: Promise<void> } | undefined;
  private ticket = 0;
  private inFlight = 0;
  /** Highest number of model calls seen running at once (tests and stats read it). */
  maxInFlight = 0;
  calls = 0;

  async run<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    const mine = ++this.ticket;
    while (this.current) {
      this.current.controller.abort();
      await this.current.done;
      if (mine !== this.ticket || signal.aborted) throw new CancellationError();
    }
    if (signal.aborted) throw new CancellationError();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.current = { controller, done };
    this.inFlight++;
    this.calls++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await work(controller.signal);
    } finally {
      this.inFlight--;
      signal.removeEventListener('abort', onAbort);
      this.current = undefined;
      release();
    }
  }
}

// At most one model request in flight (docs/ARCHITECTURE.md "Prior art": requests pile up on local hardware).
// The newest request wins: entering aborts the current holder, waits until it has settled, then
// runs; a waiter overtaken by a newer one is cancelled without ever reaching the model.
import { CancellationError } from '../util/errors';
import type { ModelSlot } from './types';

export class LatestWinsSlot implements ModelSlot {
  private current: { controller: AbortController; done: Promise<void>; pinned: boolean } | undefined;
  private ticket = 0;
  private inFlight = 0;
  private waiting = 0;
  /** Highest number of model calls seen running at once (tests and stats read it). */
  maxInFlight = 0;
  calls = 0;

  run<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.enter(work, signal, false);
  }

  /** A warm-up: newer requests wait for it instead of aborting it (their answer needs what it reads). */
  runPinned<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    return this.enter(work, signal, true);
  }

  /**
   * Idle work: runs only while nothing holds or waits for the slot, and yields to any request that
   * comes (it is aborted like any holder); rejects with CancellationError where the slot is busy.
   */
  runIdle<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.current || this.waiting > 0) return Promise.reject(new CancellationError());
    return this.enter(work, signal, false);
  }

  private async enter<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal, pinned: boolean): Promise<T> {
    const mine = ++this.ticket;
    while (this.current) {
      if (!this.current.pinned) this.current.controller.abort();
      this.waiting++;
      await this.current.done.finally(() => this.waiting--);
      // A newer request overtakes a waiter, but not a warm-up: the newer request needs what it reads.
      if ((!pinned && mine !== this.ticket) || signal.aborted) throw new CancellationError();
    }
    if (signal.aborted) throw new CancellationError();
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.current = { controller, done, pinned };
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

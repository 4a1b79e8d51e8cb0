// Completion requests come first: background work (the dense path's embedding at index time)
// awaits `yield()` between its units, which lets the messages that arrived meanwhile be read and
// then waits while any completion request is being served. An ONNX run is synchronous, so a unit
// in progress still finishes; the units are kept small (WorkspaceIndexer / Server).
import { CancellationError } from '../engine/util/errors';
import type { Disposable } from '../engine/util/disposable';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ForegroundActivity {
  private active = 0;
  private waiters: Array<() => void> = [];
  /** Times background work waited for a request, and for how long in all (for the log and tests). */
  pauses = 0;
  pausedMs = 0;

  /** A request starts; dispose when it ends (idempotent). */
  begin(): Disposable {
    this.active++;
    let ended = false;
    return {
      dispose: () => {
        if (ended) return;
        ended = true;
        this.active--;
        if (this.active === 0) for (const wake of this.waiters.splice(0)) wake();
      },
    };
  }

  get busy(): boolean {
    return this.active > 0;
  }

  /**
   * For background work between two units. Two turns first: one for the poll phase to read
   * pending input, one for the JSON-RPC layer to dispatch it (it queues messages with setImmediate).
   */
  async yield(signal?: AbortSignal): Promise<void> {
    await turn();
    await turn();
    if (signal?.aborted) throw new CancellationError();
    if (this.active === 0) return;
    const start = performance.now();
    this.pauses++;
    try {
      while (this.active > 0) {
        await new Promise<void>((resolve, reject) => {
          const onAbort = (): void => reject(new CancellationError());
          if (signal?.aborted) return onAbort();
          signal?.addEventListener('abort', onAbort, { once: true });
          this.waiters.push(() => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          });
        });
        // Input that arrived while waking (the next keystroke's request) is read before resuming.
        await turn();
        await turn();
      }
    } finally {
      this.pausedMs += performance.now() - start;
    }
  }
}

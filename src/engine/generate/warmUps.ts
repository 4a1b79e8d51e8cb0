// Having a model server read a prompt's head ahead of the keystrokes that will reuse it: a new
// place's warm-up (one at a time through the model slot, pinned so newer requests wait for it
// instead of aborting it) and an idle read in pieces (cut by any newer request). The pipeline hands
// a warm-up over and goes on; the host says what warming shows (its status).
import { errorMessage, isCancellationError } from '../util/errors';
import { getLogger } from '../util/logger';
import type { LatestWinsSlot } from './modelSlot';
import type { ModelClient } from './types';

const log = getLogger('model');

export class WarmUps {
  private next: { model: ModelClient; head: string } | undefined;
  private warming = false;

  /**
   * `slot`: the model server's one request in flight; `lifetime`: aborted when the host shuts down; `onWarming`: told when warming
   * starts and stops.
   */
  constructor(
    private readonly slot: LatestWinsSlot,
    private readonly lifetime: AbortSignal,
    private readonly onWarming: (warming: boolean) => void,
  ) {}

  /**
   * Has the model server read `head` (a new place's prompt up to the cursor's line) ahead of the next keystrokes, outside the
   * suggestion's time limit (ModelClient.warm); a newer head replaces one not started yet.
   */
  warm(model: ModelClient, head: string): void {
    if (!model.warm || this.lifetime.aborted) return;
    this.next = { model, head };
    if (!this.warming) void this.run();
  }

  /**
   * Has the server read `pieces` (prompts each a little longer than the last) in idle time through the model slot, where any newer
   * request cuts it after the piece being read (it is not needed yet, unlike a new place's warm-up); whether it read them all.
   */
  async inIdle(model: ModelClient, pieces: readonly string[]): Promise<boolean> {
    if (!model.warm || this.lifetime.aborted || pieces.length === 0) return false;
    const start = performance.now();
    this.onWarming(true);
    try {
      for (const piece of pieces) await this.slot.runIdle((s) => model.warm!(piece, s), this.lifetime);
      log.debug(`idle read: ${pieces.at(-1)!.length} characters in ${pieces.length} pieces, ${(performance.now() - start).toFixed(0)} ms`);
      return true;
    } catch (e) {
      if (!isCancellationError(e)) log.warn(`idle read of ${model.model} failed: ${errorMessage(e)}`);
      return false;
    } finally {
      if (!this.warming) this.onWarming(false);
    }
  }

  private async run(): Promise<void> {
    this.warming = true;
    this.onWarming(true);
    try {
      for (let next = this.next; next; next = this.next) {
        this.next = undefined;
        const start = performance.now();
        try {
          await this.slot.runPinned((s) => next!.model.warm!(next!.head, s), this.lifetime);
          log.debug(`warm-up: ${next.head.length} characters read in ${(performance.now() - start).toFixed(0)} ms`);
        } catch (e) {
          if (isCancellationError(e)) return;
          log.warn(`warm-up of ${next.model.model} failed after ${(performance.now() - start).toFixed(0)} ms: ${errorMessage(e)}`);
        }
      }
    } finally {
      this.warming = false;
      this.onWarming(false);
    }
  }
}

// How every stage runs: timed, recorded by the request's recorder, degraded (never failed) unless cancelled
// (CONTRIBUTING.md "Code rules", rule 8: a stage that fails degrades the answer; only cancellation ends a request).
import { CancellationError, isCancellationError, throwIfAborted } from '../../util/errors';
import { getLogger } from '../../util/logger';
import type { Recorder } from '../recorder';
import type { StageName, StageStatus } from '../trace';

const log = getLogger('pipeline');

/** Run one stage: timed, recorded, degraded (never failed) by `onFailure` unless cancelled; `yieldTurn` first, where given. */
export async function timed<T>(
  recorder: Recorder,
  stage: StageName,
  signal: AbortSignal,
  work: () => Promise<T>,
  onFailure: (e: unknown) => { value: T; status: StageStatus; message: string },
  yieldTurn?: (signal: AbortSignal) => Promise<void>,
): Promise<T> {
  if (yieldTurn) {
    const c0 = performance.now();
    try {
      await yieldTurn(signal);
    } finally {
      recorder.addCheckpoint(performance.now() - c0);
    }
  }
  const start = performance.now();
  try {
    throwIfAborted(signal);
    const value = await work();
    throwIfAborted(signal);
    recorder.stage({ stage, status: 'ok', elapsedMs: performance.now() - start });
    return value;
  } catch (e) {
    if (isCancellationError(e) || signal.aborted) throw new CancellationError();
    const { value, status, message } = onFailure(e);
    recorder.stage({ stage, status, elapsedMs: performance.now() - start, message });
    if (status === 'degraded') log.warn(`${stage} degraded: ${message}`);
    return value;
  }
}

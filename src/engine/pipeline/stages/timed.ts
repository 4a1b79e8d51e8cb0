// How every stage runs: timed, recorded in the trace, degraded (never failed) unless cancelled
// (CONTRIBUTING.md "Code rules", rule 8: a stage that fails degrades the answer; only cancellation ends a request).
import { CancellationError, isCancellationError, throwIfAborted } from '../../util/errors';
import { getLogger } from '../../util/logger';
import type { CompletionTrace, StageName, StageStatus } from '../trace';

const log = getLogger('pipeline');

/** Run one stage: timed, recorded in the trace, degraded (never failed) by `onFailure` unless cancelled. */
export async function timed<T>(
  trace: CompletionTrace,
  stage: StageName,
  signal: AbortSignal,
  work: () => Promise<T>,
  onFailure: (e: unknown) => { value: T; status: StageStatus; message: string },
  checkpoint?: (signal: AbortSignal) => Promise<void>,
): Promise<T> {
  if (checkpoint) {
    const c0 = performance.now();
    try {
      await checkpoint(signal);
    } finally {
      trace.checkpointMs = (trace.checkpointMs ?? 0) + performance.now() - c0;
    }
  }
  const start = performance.now();
  try {
    throwIfAborted(signal);
    const value = await work();
    throwIfAborted(signal);
    trace.stages.push({ stage, status: 'ok', elapsedMs: performance.now() - start });
    return value;
  } catch (e) {
    if (isCancellationError(e) || signal.aborted) throw new CancellationError();
    const { value, status, message } = onFailure(e);
    trace.stages.push({ stage, status, elapsedMs: performance.now() - start, message });
    if (status === 'degraded') log.warn(`${stage} degraded: ${message}`);
    return value;
  }
}

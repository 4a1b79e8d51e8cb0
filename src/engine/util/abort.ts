// The one timeout/cancellation helper (CONTRIBUTING.md "Code rules", rule 2): every stage, path and model call that
// runs under a time limit goes through here, built on AbortSignal.timeout / AbortSignal.any.
import { CancellationError, DeadlineError } from './errors';

/** The caller's signal plus a time limit, as one signal; `timedOut()` tells the limit from the caller's cancellation. */
interface Deadline {
  readonly signal: AbortSignal;
  timedOut(): boolean;
}

/** The longest delay a Node timer takes (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `ms` as a timer accepts it: a longer limit waits the longest a timer can, not 1 ms; NaN is 0. */
function timerMs(ms: number): number {
  return ms > MAX_TIMER_MS ? MAX_TIMER_MS : ms > 0 ? ms : 0;
}

export function deadline(signal: AbortSignal, timeoutMs: number): Deadline {
  const limit = AbortSignal.timeout(timerMs(timeoutMs));
  return { signal: AbortSignal.any([signal, limit]), timedOut: () => limit.aborted && !signal.aborted };
}

/**
 * Run `work` under a time limit. Its signal aborts on the caller's cancellation or at the limit;
 * the returned promise settles then even if `work` ignores its signal (its late result is
 * dropped). Rejects with CancellationError when `signal` aborts, with `onTimeout()` (default a
 * DeadlineError) at the limit, and with work's own error otherwise.
 */
export function raceDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  timeoutMs: number,
  signal: AbortSignal,
  onTimeout: () => Error = () => new DeadlineError(`exceeded ${timeoutMs} ms`),
): Promise<T> {
  const d = deadline(signal, timeoutMs);
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(signal.aborted ? new CancellationError() : onTimeout());
    if (d.signal.aborted) return stop();
    d.signal.addEventListener('abort', stop, { once: true });
    let running: Promise<T>;
    try {
      running = work(d.signal);
    } catch (e) {
      d.signal.removeEventListener('abort', stop);
      return reject(e);
    }
    running.then(
      (value) => {
        d.signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (e: unknown) => {
        d.signal.removeEventListener('abort', stop);
        if (d.signal.aborted) stop();
        else reject(e);
      },
    );
  });
}

/** Sleep that rejects with CancellationError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new CancellationError());
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CancellationError());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, timerMs(ms));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Wait for shared work (a model load) until `signal` aborts; the work itself goes on for other waiters. */
export function raceCancellation<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new CancellationError());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new CancellationError());
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * One turn of the event loop, so the messages that arrived meanwhile are read first (a newer request
 * may supersede the one waiting); rejects with CancellationError when `signal` has fired by then.
 */
export function yieldTurn(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => setImmediate(() => (signal.aborted ? reject(new CancellationError()) : resolve())));
}

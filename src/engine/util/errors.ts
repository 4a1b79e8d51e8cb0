// Typed errors with guards (CONTRIBUTING.md "Code rules", rule 9). Cancellation is not an error in logs.

export class CancellationError extends Error {
  constructor() {
    super('Canceled');
    this.name = 'CancellationError';
  }
}

export function isCancellationError(e: unknown): e is CancellationError {
  return e instanceof CancellationError || (e instanceof Error && e.name === 'AbortError');
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancellationError();
}

/** Raised when a deadline passes (as opposed to the caller cancelling); see util/abort. */
export class DeadlineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeadlineError';
  }
}

export function isDeadlineError(e: unknown): e is DeadlineError {
  return e instanceof DeadlineError;
}

/** A user-facing failure: the message says what happened and what to do. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}

export function isUserError(e: unknown): e is UserError {
  return e instanceof UserError;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';

/**
 * True when the run is being stopped (interrupt, cancel): the error is how a cancelled call ended,
 * whether it reports a cancellation or a failure it hit while aborting, and must not be handled as a failure.
 */
export function stopping(err: unknown): boolean {
  return isCancellation(err) || CancellationScope.current().consideredCancelled;
}

/**
 * The call `start` begins, with a throw before it is scheduled turned into a rejection, as an `async`
 * frame would: the hot path's promise chains (docs/contributing.md, "The hot path") handle both alike.
 */
export function startCall<T>(start: () => Promise<T>): Promise<T> {
  try {
    return start();
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The innermost cause: an ActivityFailure wraps the ApplicationFailure that says what happened. */
function innermost(err: unknown): unknown {
  let current: unknown = err;
  while (current instanceof ActivityFailure && current.cause) current = current.cause;
  return current;
}

export function failureMessage(err: unknown): string {
  const cause = innermost(err);
  return cause instanceof Error ? cause.message || cause.name : String(cause);
}

export function failureType(err: unknown): string {
  const cause = innermost(err);
  if (cause instanceof ApplicationFailure && cause.type) return cause.type;
  return cause instanceof Error ? cause.name : 'Error';
}

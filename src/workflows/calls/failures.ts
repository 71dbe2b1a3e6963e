import { ActivityFailure, ApplicationFailure, CancellationScope, isCancellation } from '@temporalio/workflow';

/**
 * True when the run is being stopped (interrupt, cancel): the error is how a cancelled call ended,
 * whether it reports a cancellation or a failure it hit while aborting, and must not be handled as a failure.
 */
export function stopping(err: unknown): boolean {
  return isCancellation(err) || CancellationScope.current().consideredCancelled;
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

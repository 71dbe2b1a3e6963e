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

/**
 * What the caller of a model call does with its outcome. The call takes it, so that its own recovery
 * (a cache miss resent, a gone worker's call moved to the shared queue) and the caller's next step
 * run in one `then`: every promise workflow code creates costs the SDK a stack capture
 * (docs/contributing.md, "The hot path"), and a `.catch` between the call and its caller is one more
 * per call. Tool calls keep their `.catch` (ModelCalls.onWorker explains why).
 */
export interface Outcome<T, R> {
  ok: (value: T) => R | PromiseLike<R>;
  fail: (err: unknown) => R | PromiseLike<R>;
}

/** The outcome of a caller that takes the value as it is and lets a failure through. */
export function passThrough<T>(): Outcome<T, T> {
  return { ok: (value) => value, fail: rethrow };
}

function rethrow(err: unknown): never {
  throw err;
}

/** `start`'s call, its outcome handled by `outcome` (a throw before it is scheduled included, as a failure). */
export function settleCall<T, R>(start: () => Promise<T>, outcome: Outcome<T, R>): Promise<R> {
  return startCall(start).then(outcome.ok, outcome.fail);
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

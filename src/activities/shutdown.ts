import type { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { ErrorTypes } from '../shared/constants';

/** True when the activity was cancelled by its own worker's shutdown (after the grace period). */
export function stoppedByShutdown(ctx: Context): boolean {
  const signal = ctx.cancellationSignal;
  if (!signal.aborted) return false;
  if (ctx.cancellationDetails?.workerShutdown) return true;
  const reason: unknown = signal.reason;
  return reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN';
}

/**
 * Stopped because this worker is shutting down, not because the run asked: the call is not the
 * model's to judge. On the shared queue the attempt fails retryably and Temporal retries it on
 * another worker. On this worker's own queue (`workerQueue`) a retry would wait for a worker that
 * is gone, so it fails for good and the workflow goes on at once on the shared queue (telling a
 * mutating tool that it may have started).
 */
export function shutdownFailure(ctx: Context, what: string, workerQueue: string | undefined): ApplicationFailure {
  const own = workerQueue !== undefined && ctx.info.taskQueue === workerQueue;
  const message = `the worker shut down during ${what}; ${own ? 'the run goes on on another worker' : 'retrying on another worker'}`;
  return own
    ? ApplicationFailure.nonRetryable(message, ErrorTypes.WorkerShutdown)
    : ApplicationFailure.retryable(message, ErrorTypes.WorkerShutdown);
}

/** Runs `call`; an error caused by this worker's shutdown becomes {@link shutdownFailure}. */
export async function onShutdown<T>(
  ctx: Context,
  what: string,
  workerQueue: string | undefined,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (stoppedByShutdown(ctx)) throw shutdownFailure(ctx, `the ${what}`, workerQueue);
    throw err;
  }
}

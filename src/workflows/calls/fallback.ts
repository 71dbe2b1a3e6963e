import { ActivityFailure, type ActivityOptions, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import { ErrorTypes, STICKY_SCHEDULE_TO_START_TIMEOUT } from '../../shared/constants';
import type { RunEventInput } from '../../shared/run';
import { failureType, stopping } from './failures';

/**
 * Where a run's calls go and what happens when the worker they went to is gone (ModelCalls.onWorker):
 * the decisions, apart from the promise plumbing of model and tool calls.
 */

export type Options = ActivityOptions | Record<string, never>;

/** Where the worker holding the conversation is: the run's state, carried across continue-as-new. */
export interface Route {
  workerQueue: string | undefined;
  callsPinned: boolean;
}

/** Where a call goes: the worker queue (with a schedule-to-start timeout) when pinned; one attempt for tools. */
export function placement(queue: string | undefined, singleAttempt: boolean): Options {
  const once = singleAttempt ? { retry: { maximumAttempts: 1 } } : {};
  return queue ? { taskQueue: queue, scheduleToStartTimeout: STICKY_SCHEDULE_TO_START_TIMEOUT, ...once } : once;
}

/**
 * After a call on `queue` (or a single attempt on the run's own queue) failed: undefined when the
 * failure stands, otherwise whether an attempt may have started, the queue forgotten (`route`,
 * `abandoned`) and the move to the shared queue reported.
 */
export function fallbackAfter(
  err: unknown,
  at: {
    queue: string | undefined;
    singleAttempt: boolean;
    route: Route;
    /** Worker queues that did not take a call in time: not followed again in this execution. */
    abandoned: Set<string>;
    emit: (event: RunEventInput) => void;
  },
): boolean | undefined {
  const { queue, singleAttempt, route } = at;
  if (stopping(err)) return undefined;
  if (!queue) {
    if (!lostOrShutDown(err)) return undefined;
    at.emit({ kind: 'notice', message: 'the worker running the call stopped during it; trying again once' });
    return true;
  }
  const neverStarted = isScheduleToStartTimeout(err);
  const shutDown = failureType(err) === ErrorTypes.WorkerShutdown;
  const lost = singleAttempt && lostOrShutDown(err);
  if (!neverStarted && !shutDown && !lost) return undefined;
  if (route.workerQueue === queue) route.workerQueue = undefined;
  at.abandoned.add(queue);
  at.emit({
    kind: 'notice',
    message: neverStarted
      ? `worker queue ${queue} did not take the call; using the shared queue`
      : `the worker behind ${queue} stopped during the call; going on on the shared queue`,
  });
  // A retried attempt's timeout does not say whether an earlier attempt started: only a single
  // attempt that was never taken is known not to have run.
  return !(singleAttempt && neverStarted);
}

/** The attempt's worker died (a start-to-close or heartbeat timeout) or shut down during it. */
function lostOrShutDown(err: unknown): boolean {
  return (
    (err instanceof ActivityFailure && err.cause instanceof TimeoutFailure) ||
    failureType(err) === ErrorTypes.WorkerShutdown
  );
}

function isScheduleToStartTimeout(err: unknown): boolean {
  return (
    err instanceof ActivityFailure &&
    err.cause instanceof TimeoutFailure &&
    err.cause.timeoutType === TimeoutType.SCHEDULE_TO_START
  );
}

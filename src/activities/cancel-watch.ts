import type { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';

/** How often a model call asks the server whether its run wants it cancelled, ms. */
export const CANCEL_WATCH_MS = 1_000;

const CANCEL_REQUESTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED;

/** What of the activity's context the watch uses: who it is, its cancel signal, and a client. */
export type CancelWatchContext = Pick<Context, 'cancellationSignal'> & {
  info: Pick<Context['info'], 'activityId' | 'isLocal' | 'workflowNamespace'> & {
    workflowExecution?: { workflowId: string; runId: string };
  };
  /** The SDK's getter throws where the activity has no client (a mock environment). */
  readonly client: Pick<Context['client'], 'workflowService'>;
};

/**
 * Runs `call` while watching, every `everyMs`, whether the run asked to cancel this activity, and
 * heartbeats at once (`beatNow`) when it did.
 *
 * Why: Temporal tells an activity of a cancel only in a heartbeat's response, so with heartbeats
 * far apart (each one is a billable action) an interrupt would reach a model call up to one
 * heartbeat gap late. `DescribeWorkflowExecution` is not billed and shows the call's pending state
 * as CANCEL_REQUESTED as soon as the workflow asked; the heartbeat sent then carries the cancel
 * back (one action, only on a cancel). If the server cannot be asked (no client, an error), the
 * call simply hears of the cancel with its next regular heartbeat; so does every call when
 * `everyMs` is 0 (`DURABLE_AGENT_CANCEL_WATCH=off`).
 */
export async function withCancelWatch<T>(
  ctx: CancelWatchContext,
  beatNow: () => void,
  call: () => Promise<T>,
  everyMs = CANCEL_WATCH_MS,
): Promise<T> {
  const ask = everyMs > 0 ? describer(ctx) : undefined;
  if (!ask) return call();
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  let lastBeat = -Infinity;
  const check = async () => {
    try {
      if (await ask()) {
        // Once is enough when the heartbeat goes through; again after a while in case it did not.
        if (Date.now() - lastBeat >= 2 * everyMs) {
          lastBeat = Date.now();
          beatNow();
        }
      }
    } catch {
      // Unknown to the server (the call ended meanwhile), no permission, a network blip: the regular
      // heartbeats still bring the cancel.
    }
    if (!done && !ctx.cancellationSignal.aborted) timer = setTimeout(() => void check(), everyMs).unref();
  };
  timer = setTimeout(() => void check(), everyMs).unref();
  try {
    return await call();
  } finally {
    done = true;
    clearTimeout(timer);
  }
}

/** Asks whether this activity is pending with a cancel requested; undefined when it cannot ask. */
function describer(ctx: CancelWatchContext): (() => Promise<boolean>) | undefined {
  const { info } = ctx;
  const run = info.workflowExecution;
  // A local activity is cancelled by its own worker at once; it has no pending state on the server.
  if (info.isLocal || !run) return undefined;
  let service: Context['client']['workflowService'];
  try {
    service = ctx.client.workflowService;
  } catch {
    return undefined;
  }
  const request = {
    namespace: info.workflowNamespace,
    execution: { workflowId: run.workflowId, runId: run.runId },
  };
  return async () => {
    const described = await service.describeWorkflowExecution(request);
    const mine = described.pendingActivities?.find((activity) => activity.activityId === info.activityId);
    return mine?.state === CANCEL_REQUESTED;
  };
}

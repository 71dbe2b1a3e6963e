import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { AgentHandle } from '../client';
import { statusSearchAttribute } from '../shared/search-attributes';
import { TERMINAL_STATUSES } from '../shared/run/result';

/**
 * A run refused what a client asked (`send`, `approve`, `deny`, `end`, `interrupt`): its message is
 * the run's own reason (the update validator's, such as `no pending approval with toolUseId 'x'`),
 * or that the run has already ended and how. `cause` is the Temporal client's error.
 */
export class RunRefusedError extends Error {
  constructor(
    readonly workflowId: string,
    message: string,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'RunRefusedError';
  }
}

/**
 * Runs an update or a signal and turns Temporal's failures into a `RunRefusedError`: the validator's
 * reason for a refused update (Temporal puts it in the cause of `Workflow Update failed`), and the
 * run's end for a closed run (Temporal answers "workflow execution already completed", which reads as
 * no such run). Anything else (no server, no such id) is thrown as it came.
 */
export async function steer<T>(handle: AgentHandle, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof WorkflowUpdateFailedError) {
      const reason = e.cause instanceof Error && e.cause.message ? e.cause.message : e.message;
      throw new RunRefusedError(handle.workflowId, reason, e);
    }
    if (e instanceof WorkflowNotFoundError) {
      const ended = await endedAs(handle);
      if (ended)
        throw new RunRefusedError(handle.workflowId, `run ${handle.workflowId} has already ended (${ended})`, e);
    }
    throw e;
  }
}

/** How the run's latest execution ended (its exit reason when indexed), or undefined while it runs or is unknown. */
async function endedAs(handle: AgentHandle): Promise<string | undefined> {
  try {
    const description = await handle.describe();
    const temporal = description.status.name;
    if (temporal === 'RUNNING' || temporal === 'CONTINUED_AS_NEW') return undefined;
    const indexed = description.typedSearchAttributes.get(statusSearchAttribute);
    const isExit = (TERMINAL_STATUSES as readonly string[]).includes(indexed ?? '');
    return isExit && temporal !== 'TERMINATED' && temporal !== 'TIMED_OUT' ? `'${indexed}'` : temporal.toLowerCase();
  } catch {
    return undefined;
  }
}

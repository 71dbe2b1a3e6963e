import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { approveTool, denyTool, endSession, getRun, interruptRun, sendMessage, type AgentHandle } from '../client';
import { indexedFigures, reconcileStatus } from './run-status';
import { visibleLine as one } from './terminal-text';
import { SteerRefused } from './cli-errors';

/**
 * The commands that steer a live run: `send`, `approve`, `deny` (updates), `interrupt` (a signal)
 * and `end` (an update). A refused update prints the workflow's own reason; an update to a run that
 * has already closed says so with the run's final status, not "no such run".
 */

export { SteerRefused } from './cli-errors';

/**
 * Runs an update and turns its failures into one readable line: the validator's message when the
 * run refused it, the run's final status when it has already ended.
 */
async function update<T>(handle: AgentHandle, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof WorkflowUpdateFailedError) {
      throw new SteerRefused(`${what} refused by run ${handle.workflowId}: ${one(e.cause?.message ?? e.message)}`);
    }
    if (e instanceof WorkflowNotFoundError) {
      // The server answers an update to a closed execution with NOT_FOUND ("already completed").
      const ended = await closedStatus(handle);
      if (ended)
        throw new SteerRefused(`${what} not possible: run ${handle.workflowId} has already ended ('${one(ended)}')`);
    }
    throw e;
  }
}

/** The reconciled status of the run's latest execution when it is closed; undefined when open or unknown. */
async function closedStatus(handle: AgentHandle): Promise<string | undefined> {
  try {
    const description = await handle.describe();
    if (description.status.name === 'RUNNING') return undefined;
    return reconcileStatus(description.status.name, indexedFigures(description).stored);
  } catch {
    return undefined;
  }
}

export interface SteerContext {
  client: Client;
  say: (line: string) => void;
}

export async function sendCommand({ client, say }: SteerContext, id: string, message: string): Promise<number> {
  const handle = getRun(client, id);
  const accepted = await update(handle, 'message', () => sendMessage(handle, message));
  say(
    `Message sent to ${id}: taken at its next iteration boundary (${accepted.pendingMessages} waiting). ` +
      `Watch it with: durable-agent follow ${id}`,
  );
  return 0;
}

export async function decideCommand(
  { client, say }: SteerContext,
  id: string,
  toolUseId: string,
  approve: boolean,
  reason?: string,
): Promise<number> {
  const handle = getRun(client, id);
  const decision = await update(handle, approve ? 'approval' : 'denial', () =>
    approve ? approveTool(handle, toolUseId) : denyTool(handle, toolUseId, reason),
  );
  say(`${decision.approved ? 'Approved' : 'Denied'} ${one(decision.name)} call ${one(toolUseId)} in ${one(id)}.`);
  return 0;
}

export async function endCommand({ client, say }: SteerContext, id: string): Promise<number> {
  const handle = getRun(client, id);
  const ended = await update(handle, 'end of session', () => endSession(handle));
  say(
    `Session ${id} ended: the run ends '${ended.status}' with its last answer. See it with: durable-agent result ${id}`,
  );
  return 0;
}

export async function interruptCommand(
  { client, say }: SteerContext,
  id: string,
  reason: string | undefined,
): Promise<number> {
  const handle = getRun(client, id);
  // A signal to a closed execution fails the same way an update does: say how the run ended.
  await update(handle, 'interrupt', () => interruptRun(handle, reason));
  say(`Interrupt sent to ${id}.`);
  return 0;
}

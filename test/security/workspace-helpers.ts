import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentRunResult } from '../../src/shared';

/** How a run ended: its result, or the failure's message and the result it carries. */
export async function outcomeOf(
  handle: WorkflowHandle,
): Promise<{ failed: boolean; message: string; result: AgentRunResult | undefined }> {
  try {
    const result = (await handle.result()) as AgentRunResult;
    return { failed: false, message: '', result };
  } catch (error) {
    if (!(error instanceof WorkflowFailedError)) throw error;
    const cause = error.cause;
    const details =
      cause instanceof ApplicationFailure ? (cause.details?.[0] as AgentRunResult | undefined) : undefined;
    return { failed: true, message: cause?.message ?? error.message, result: details };
  }
}

/** Activity types the run scheduled, in order. */
export async function scheduledActivities(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? [])
    .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter((n): n is string => !!n)
    .map((n) => n.replace(/^durableAgent\./, ''));
}

import { ApplicationFailure } from '@temporalio/common';
import { ErrorTypes } from './constants';
import type { AgentRunResult } from './run';

/**
 * The AgentRunResult of a run that ended `failed`: the workflow failed with a non-retryable
 * `DurableAgent.RunFailed` whose details hold the result. Accepts what a client's `result()`
 * throws (WorkflowFailedError, whose cause is that failure) or the failure itself; undefined for
 * any other error.
 */
export function runResultOfFailure(err: unknown): AgentRunResult | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof ApplicationFailure && current.type === ErrorTypes.RunFailed) {
      const details = current.details?.[0];
      return isRunResult(details) ? details : undefined;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

function isRunResult(value: unknown): value is AgentRunResult {
  return typeof value === 'object' && value !== null && typeof (value as AgentRunResult).exitReason === 'string';
}

import { ApplicationFailure, Context } from '@temporalio/activity';
import { OUTPUT_CHECK_BUSY_ERROR, type CheckOutputInput, type CheckOutputOutput } from '../shared/output-schema';
import { outputCheckPool, ValidatorBusyError } from './output-check-pool';

/**
 * The `checkOutput` activity (a local activity of runs with `outputSchema`): whether the run's
 * schema compiles, and whether a final answer is JSON valid against it. Its input comes from the
 * workflow, but is checked as any other: a text that is not a string is an answer that is not JSON.
 * The check runs in a validator thread with its own memory and time limits (output-check-pool.ts):
 * a schema that costs too much to check ends that thread, never the worker. The threads are shared
 * fairly between runs (by workflow id); a check that finds them busy for too long fails retryably
 * (OUTPUT_CHECK_BUSY_ERROR), and the workflow retries it with backoff.
 */
export async function checkOutput(input: CheckOutputInput): Promise<CheckOutputOutput> {
  const raw = input as unknown as Record<string, unknown> | null;
  const text = raw?.text;
  if (text !== undefined && typeof text !== 'string') {
    return { kind: 'invalid', violations: ['the answer is not a JSON text'] };
  }
  const schema = raw?.schema;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return { kind: 'bad_schema', message: 'outputSchema must be a JSON Schema object' };
  }
  const context = activityContext();
  try {
    return await outputCheckPool().check(
      { schema: schema as CheckOutputInput['schema'], ...(text !== undefined ? { text } : {}) },
      context?.cancellationSignal,
      runKey(context),
    );
  } catch (error) {
    if (error instanceof ValidatorBusyError) throw ApplicationFailure.retryable(error.message, OUTPUT_CHECK_BUSY_ERROR);
    throw error;
  }
}

/**
 * Whose check this is, for the pool's fairness and per-run budget: the execution (workflow id and run
 * id), so a new run that reuses a closed run's id starts with a budget of its own.
 */
function runKey(context: Context | undefined): string | undefined {
  const execution = context?.info.workflowExecution;
  return execution ? `${execution.workflowId}/${execution.runId}` : undefined;
}

/** The activity's context; none when called outside an activity (tests, tools). */
function activityContext(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

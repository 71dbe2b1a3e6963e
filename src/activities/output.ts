import { Context } from '@temporalio/activity';
import type { CheckOutputInput, CheckOutputOutput } from '../shared/output-schema';
import { outputCheckPool } from './output-check-pool';

/**
 * The `checkOutput` activity (a local activity of runs with `outputSchema`): whether the run's
 * schema compiles, and whether a final answer is JSON valid against it. Its input comes from the
 * workflow, but is checked as any other: a text that is not a string is an answer that is not JSON.
 * The check runs in a validator thread with its own memory and time limits (output-check-pool.ts):
 * a schema that costs too much to check ends that thread, never the worker.
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
  return outputCheckPool().check(
    { schema: schema as CheckOutputInput['schema'], ...(text !== undefined ? { text } : {}) },
    cancellationSignal(),
  );
}

/** The activity's cancellation signal; none when called outside an activity (tests, tools). */
function cancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

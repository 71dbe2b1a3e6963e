import type { CheckOutputInput, CheckOutputOutput } from '../shared/output-schema';
import { checkOutput as check } from './output-validator';

/**
 * The `checkOutput` activity (a local activity of runs with `outputSchema`): whether the run's
 * schema compiles, and whether a final answer is JSON valid against it. Its input comes from the
 * workflow, but is checked as any other: a text that is not a string is an answer that is not JSON.
 */
export async function checkOutput(input: CheckOutputInput): Promise<CheckOutputOutput> {
  const raw = input as unknown as Record<string, unknown> | null;
  const text = raw?.text;
  if (text !== undefined && typeof text !== 'string') {
    return { kind: 'invalid', violations: ['the answer is not a JSON text'] };
  }
  return Promise.resolve(
    check({ schema: raw?.schema as CheckOutputInput['schema'], ...(text !== undefined ? { text } : {}) }),
  );
}

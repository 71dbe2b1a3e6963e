import { z } from 'zod';
import type { AgentRunResult, OutputSchema } from './shared';

/**
 * Typed answers for library users: a zod schema as a run's `outputSchema`, and the run's `output`
 * as that schema's type. The workflow and worker see only JSON Schema (docs/output.md).
 */

/** The JSON Schema (draft 2020-12) of a zod schema, for the run input's `outputSchema`. */
export function outputSchemaOf(schema: z.ZodType): OutputSchema {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'throw' }) as OutputSchema;
}

/**
 * The run's typed answer: `result.output` parsed with the zod schema the run was given. Throws when
 * the run has none (it did not complete with a valid answer) or when it does not parse.
 */
export function typedOutput<T>(result: AgentRunResult, schema: z.ZodType<T>): T {
  if (!('output' in result) || result.output === undefined) {
    throw new Error(
      `run ended '${result.exitReason}' without a typed answer` + (result.error ? `: ${result.error.message}` : ''),
    );
  }
  return schema.parse(result.output);
}

/** True for a zod schema (given where a JSON Schema is expected). */
export function isZodSchema(value: unknown): value is z.ZodType {
  return value instanceof z.ZodType;
}

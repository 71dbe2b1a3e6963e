import { z } from 'zod';
import { onFirstUse } from './built-once';
import { jsonBytes } from './bounds';
import { outputSchemaBoundsProblem } from './output-schema-bounds';
import { ErrorTypes } from './constants';

export {
  MAX_OUTPUT_SCHEMA_DEPTH,
  MAX_OUTPUT_SCHEMA_EXPANSION,
  outputSchemaBoundsProblem,
} from './output-schema-bounds';

/**
 * Typed answers: a run with `outputSchema` (a JSON Schema object) must end with a final answer that
 * is JSON valid against it. Workflow-safe definitions only; the validator (ajv) runs on the worker.
 */

/** The schema travels with every model call of the run (native structured output), so it is kept small. */
export const MAX_OUTPUT_SCHEMA_BYTES = 16 * 1024;

/** Corrective turns a run gets after an answer that does not match its schema, before it ends `failed`. */
export const MAX_OUTPUT_CORRECTIONS = 2;

/** At most this many violations are named (each cut to VIOLATION_CHARS). */
export const MAX_VIOLATIONS = 10;
export const VIOLATION_CHARS = 300;

/** The failure type of a run whose answer never matched its `outputSchema`. */
export const OUTPUT_INVALID_ERROR = ErrorTypes.OutputInvalid;

/** The retryable failure of a `checkOutput` that found the worker's validator threads busy with other runs. */
export const OUTPUT_CHECK_BUSY_ERROR = ErrorTypes.ValidatorBusy;

export type OutputSchema = Record<string, unknown>;

function buildOutputSchemaSchema() {
  const outputSchemaSchema = z
    .record(z.string(), z.unknown(), {
      error: () => 'outputSchema must be a JSON Schema object, such as {"type": "object", "properties": {…}}',
    })
    .superRefine((schema, ctx) => {
      // Size first: the nesting and expansion checks then walk at most MAX_OUTPUT_SCHEMA_BYTES of JSON.
      const problem =
        jsonBytes(schema) > MAX_OUTPUT_SCHEMA_BYTES
          ? `outputSchema must be at most ${MAX_OUTPUT_SCHEMA_BYTES} bytes (${MAX_OUTPUT_SCHEMA_BYTES / 1024} KiB) as JSON`
          : outputSchemaBoundsProblem(schema);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    });
  return outputSchemaSchema;
}

export const outputSchemaSchema = onFirstUse('output-schema', buildOutputSchemaSchema);

/** Input of the `checkOutput` activity: the schema alone checks the schema; with `text`, the answer too. */
export interface CheckOutputInput {
  schema: OutputSchema;
  text?: string;
}

export type CheckOutputOutput =
  /** The schema is not valid JSON Schema: the validator's message. */
  | { kind: 'bad_schema'; message: string }
  /** The schema compiles (a check without text). */
  | { kind: 'schema_ok' }
  /** The answer is valid; `json` is its JSON text (surrounding prose or a code fence removed). */
  | { kind: 'valid'; json: string }
  | { kind: 'invalid'; violations: string[] };

/** How every corrective message starts (the offline demo model tells a correction from a new task by it). */
export const OUTPUT_CORRECTION_PREFIX = 'Your final answer does not match the required JSON Schema:';

/** The user message that asks the model to correct an answer that does not match the schema. */
export function outputCorrection(violations: readonly string[]): string {
  return (
    `${OUTPUT_CORRECTION_PREFIX}\n` +
    violations.map((v) => `- ${v}`).join('\n') +
    '\nReply with only the corrected JSON value, no other text.'
  );
}

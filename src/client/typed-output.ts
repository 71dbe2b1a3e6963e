import { z } from 'zod';
import type { AgentRunInput, AgentRunResult, OutputSchema } from '../shared';

/**
 * Typed answers for library users: a zod schema as a run's `outputSchema`, and the run's `output`
 * as that schema's type. The workflow and worker see only JSON Schema (docs/output.md).
 */

/** A run's input as a client gives it: `outputSchema` may be a zod schema (zod 4) or a JSON Schema object. */
export type RunStartInput = Omit<AgentRunInput, 'outputSchema'> & { outputSchema?: OutputSchema | z.ZodType };

/** An `AgentRunResult` whose `output` has the type of the run's schema (`unknown` without a zod schema). */
export type TypedRunResult<Output = unknown> = Omit<AgentRunResult, 'output'> & { output?: Output };

/**
 * A run's answer that the worker accepted (it matched the schema's JSON Schema) but the zod schema
 * refuses: a refinement (`.refine`, `.check`) has no JSON Schema, so only the client checks it.
 * `result` is the run's result as it came, `cause` zod's error.
 */
export class OutputMismatchError extends Error {
  constructor(
    readonly result: AgentRunResult,
    cause: z.ZodError,
  ) {
    super(`the run's answer does not match the zod schema: ${z.prettifyError(cause).replace(/\n+/g, '; ')}`, {
      cause,
    });
    this.name = 'OutputMismatchError';
  }
}

/** The JSON Schema (draft 2020-12) of a zod schema, for the run input's `outputSchema`. */
export function outputSchemaOf(schema: z.ZodType): OutputSchema {
  if (!isZodSchema(schema)) {
    throw new TypeError('outputSchemaOf takes a zod 4 schema (from `zod` ≥ 4 or `zod/v4`)');
  }
  try {
    return z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'throw' }) as OutputSchema;
  } catch (err) {
    throw new TypeError(
      `this zod schema has no JSON Schema, so no run can be given it as outputSchema ` +
        `(${err instanceof Error ? err.message : String(err)}); use types JSON Schema can say ` +
        `(objects, arrays, strings, numbers, booleans, enums, unions), no transforms, dates or functions`,
      { cause: err },
    );
  }
}

/** The run input with a zod `outputSchema` replaced by its JSON Schema. */
export function wireInput(input: RunStartInput): AgentRunInput {
  const { outputSchema, ...rest } = input;
  if (outputSchema === undefined) return rest;
  return { ...rest, outputSchema: isZodSchema(outputSchema) ? outputSchemaOf(outputSchema) : outputSchema };
}

/**
 * The result with `output` parsed by `schema` (its defaults and coercions applied); as it came without
 * a schema or without an output. Throws `OutputMismatchError` when the zod schema refuses the answer.
 */
export function parseOutput<Output>(
  result: AgentRunResult,
  schema: z.ZodType<Output> | undefined,
): TypedRunResult<Output> {
  if (!schema || result.output === undefined) return result as TypedRunResult<Output>;
  const parsed = schema.safeParse(result.output);
  if (!parsed.success) throw new OutputMismatchError(result, parsed.error);
  return { ...result, output: parsed.data };
}

/**
 * The run's typed answer: `result.output` parsed with the zod schema the run was given. Throws when
 * the run has none (it did not complete with a valid answer), and `OutputMismatchError` when it does
 * not parse.
 */
export function typedOutput<T>(result: AgentRunResult, schema: z.ZodType<T>): T {
  if (!('output' in result) || result.output === undefined) {
    throw new Error(
      `run ended '${result.exitReason}' without a typed answer` + (result.error ? `: ${result.error.message}` : ''),
    );
  }
  return parseOutput(result, schema).output as T;
}

/**
 * True for a zod 4 schema, also one made by another copy of zod than this package's (an
 * application's own `zod`): zod 4 schemas carry their definition in `_zod`. A zod 3 schema (`_def`
 * without `_zod`) is refused with what to use instead, rather than sent as if it were JSON Schema.
 */
export function isZodSchema(value: unknown): value is z.ZodType {
  if (value instanceof z.ZodType) return true;
  if (typeof value !== 'object' || value === null) return false;
  const internals = (value as { _zod?: unknown })._zod;
  if (typeof internals === 'object' && internals !== null && 'def' in internals) return true;
  if ('_def' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function') {
    throw new TypeError(
      'outputSchema is a zod 3 schema: durable-agent takes a zod 4 schema (`zod` ≥ 4, or `zod/v4`) or a JSON Schema object',
    );
  }
  return false;
}

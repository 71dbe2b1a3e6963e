import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import RE2 from 're2';
import { cutChars, jsonBytes } from '../shared/bounds';
import {
  MAX_OUTPUT_SCHEMA_BYTES,
  MAX_VIOLATIONS,
  outputSchemaBoundsProblem,
  VIOLATION_CHARS,
  type CheckOutputInput,
  type CheckOutputOutput,
  type OutputSchema,
} from '../shared/output-schema';

/**
 * Typed answers, on the worker (ajv is Node code, not for the workflow sandbox): compiles a run's
 * `outputSchema` and checks a final answer against it. The draft is chosen by the schema's
 * `$schema` (2020-12 — what `z.toJSONSchema` writes —, 2019-09, else draft-07); formats are checked.
 * Compiled validators are kept per schema text, a bounded number of them. The schema's `pattern`s
 * run on RE2, in time linear in the answer: the model's text cannot freeze the worker with a
 * pattern that backtracks (`^(a+)+$`). The worker runs these checks in a validator thread with its
 * own memory and time limits (output-check-pool.ts); the CLI calls them directly on a schema file.
 */

const re2Engine = Object.assign((pattern: string, flags: string) => new RE2(pattern, flags), {
  code: 'require("re2")',
});

const CACHE_SIZE = 64;
const compiled = new Map<string, ValidateFunction>();

/**
 * A schema's validator: with `allErrors` false it stops at the first failing keyword, so a `oneOf`
 * branch whose `const` tag does not match is left before its subschemas are walked (the pass/fail
 * check); with `allErrors` true it collects every error (the second pass, only on a failure).
 */
function validatorFor(schema: OutputSchema, allErrors = false): ValidateFunction {
  const key = `${allErrors ? 'all' : 'first'}:${JSON.stringify(schema)}`;
  const cached = compiled.get(key);
  if (cached) return cached;
  const draft = typeof schema.$schema === 'string' ? schema.$schema : '';
  const options = {
    allErrors,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    logger: false,
    code: { regExp: re2Engine },
  } as const;
  const ajv = draft.includes('2020-12')
    ? new Ajv2020(options)
    : draft.includes('2019-09')
      ? new Ajv2019(options)
      : new Ajv(options);
  addFormats(ajv);
  const validate = ajv.compile(schema);
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, validate);
  return validate;
}

/**
 * Undefined when the schema is valid JSON Schema within the run input's bounds (size, nesting, `$ref`
 * expansion: src/shared/output-schema-bounds.ts), else why not. The bounds come first, so a schema
 * that would cost too much is never compiled.
 */
export function outputSchemaProblem(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return 'outputSchema must be a JSON Schema object';
  }
  try {
    if (jsonBytes(schema) > MAX_OUTPUT_SCHEMA_BYTES) {
      return `outputSchema must be at most ${MAX_OUTPUT_SCHEMA_BYTES} bytes (${MAX_OUTPUT_SCHEMA_BYTES / 1024} KiB) as JSON`;
    }
    const bounds = outputSchemaBoundsProblem(schema as OutputSchema);
    if (bounds !== undefined) return bounds;
    validatorFor(schema as OutputSchema);
    return undefined;
  } catch (err) {
    return cutChars((err as Error).message || String(err), 1000);
  }
}

/**
 * A check's first verdict, decided with the validator that stops at the first error; `detail`, when
 * the answer fails, runs the second pass that names up to MAX_VIOLATIONS violations. Its cost can
 * grow much faster with the answer's nesting (every branch of a `oneOf` walked to its leaves), so the
 * validator thread bounds it in time and answers with `output` when it runs out (output-check-pool.ts).
 */
export interface FirstCheck {
  output: CheckOutputOutput;
  detail?: () => CheckOutputOutput;
}

/** The schema alone: whether it compiles. With `text`: whether that answer is JSON valid against it. */
export function checkOutputFirst(input: CheckOutputInput): FirstCheck {
  const problem = outputSchemaProblem(input.schema);
  if (problem !== undefined) return { output: { kind: 'bad_schema', message: problem } };
  if (input.text === undefined) return { output: { kind: 'schema_ok' } };
  const json = jsonText(input.text);
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return {
      output: {
        kind: 'invalid',
        violations: [cutChars(`the answer is not JSON (${(err as Error).message})`, VIOLATION_CHARS)],
      },
    };
  }
  const first = validatorFor(input.schema);
  if (first(value)) return { output: { kind: 'valid', json } };
  const output = invalid(first.errors ?? []);
  return {
    output,
    detail: () => {
      const all = validatorFor(input.schema, true);
      return all(value) ? output : invalid(all.errors ?? []);
    },
  };
}

/** Both passes, on this thread (the CLI's check of a schema file; tests). */
export function checkOutput(input: CheckOutputInput): CheckOutputOutput {
  const first = checkOutputFirst(input);
  return first.detail ? first.detail() : first.output;
}

function invalid(errors: readonly ErrorObject[]): CheckOutputOutput {
  const violations = errors.slice(0, MAX_VIOLATIONS).map((e) => cutChars(describeError(e), VIOLATION_CHARS));
  if (errors.length > MAX_VIOLATIONS) violations.push(`… and ${errors.length - MAX_VIOLATIONS} more`);
  return { kind: 'invalid', violations: violations.length ? violations : ['the answer does not match the schema'] };
}

/**
 * The JSON in an answer: the whole text, or the body of a single Markdown code fence around it
 * (models add one even when told not to). Anything else is taken as it is, and JSON.parse says why not.
 */
export function jsonText(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[a-zA-Z]*[ \t]*\r?\n([\s\S]*?)\r?\n?```$/.exec(trimmed);
  return fenced ? fenced[1]!.trim() : trimmed;
}

/** `/items/0/price must be number`, `(root) must have required property 'name'`. */
function describeError(e: ErrorObject): string {
  const where = e.instancePath || '(root)';
  const params = e.params as Record<string, unknown>;
  if (e.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return `${where} must not have property '${params.additionalProperty}'`;
  }
  if (e.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    return `${where} must be one of ${JSON.stringify(params.allowedValues)}`;
  }
  return `${where} ${e.message ?? `fails ${e.keyword}`}`;
}

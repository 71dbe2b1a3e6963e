/**
 * Native structured output, per provider, for runs with `outputSchema`. Whatever the provider
 * claims, the workflow still checks the answer against the schema (docs/output.md).
 */

/** The name OpenAI's `response_format.json_schema` requires (letters, digits, `_`, `-`). */
export const OPENAI_SCHEMA_NAME = 'final_answer';

/**
 * Whether OpenAI's strict mode can take the schema as it is: every object lists all its properties
 * in `required` and sets `additionalProperties: false` (strict mode refuses other schemas outright).
 * Otherwise the schema is sent with `strict: false`, as guidance.
 */
export function openAIStrictCompatible(schema: unknown, depth = 0): boolean {
  if (depth > 64) return false;
  if (Array.isArray(schema)) return schema.every((s) => openAIStrictCompatible(s, depth + 1));
  if (typeof schema !== 'object' || schema === null) return true;
  const s = schema as Record<string, unknown>;
  const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || 'properties' in s;
  if (isObject) {
    const properties = typeof s.properties === 'object' && s.properties !== null ? Object.keys(s.properties) : [];
    const required = Array.isArray(s.required) ? s.required : [];
    if (s.additionalProperties !== false || !properties.every((p) => required.includes(p))) return false;
  }
  return Object.entries(s).every(
    ([key, value]) =>
      key === 'enum' || key === 'const' || key === 'default' || openAIStrictCompatible(value, depth + 1),
  );
}

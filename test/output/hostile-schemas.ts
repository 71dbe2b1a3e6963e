/** Output schemas that cost a validator more than their size suggests (issue 44), shared by the tests. */

/** The finding's schema: `levels` of `$defs`, each `{anyOf: [{$ref: next}, {$ref: next}]}`, 2^levels once expanded. */
export function doublingSchema(levels = 24): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) {
    defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  }
  defs[`d${levels}`] = { type: 'string' };
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', $ref: '#/$defs/d0', $defs: defs };
}

/**
 * Passes the start bounds (its expansion is small: the recursion counts once), but every level of an
 * answer's nesting doubles the validator's work: a recursive type whose item is one of two references
 * to itself.
 */
export const recursiveDoublingSchema = {
  $ref: '#/$defs/t',
  $defs: { t: { type: 'array', items: { anyOf: [{ $ref: '#/$defs/t' }, { $ref: '#/$defs/t' }] } } },
};
/** An answer 40 arrays deep whose innermost value fails both branches at every level. */
export const deepAnswer = `${'['.repeat(40)}1${']'.repeat(40)}`;

/** The worker-side check of typed answers: ajv compiles the schema and names each violation. */
import { checkOutput, jsonText, outputSchemaProblem } from '../../src/activities/output-validator';

const schema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    name: { type: 'string' },
    count: { type: 'integer', minimum: 0 },
    mail: { type: 'string', format: 'email' },
  },
  required: ['name', 'count'],
  additionalProperties: false,
};

test('a schema that is not valid JSON Schema is refused with the validator message', () => {
  expect(outputSchemaProblem({ type: 'strng' })).toMatch(
    /schema is invalid: data\/type must be equal to one of the allowed values/,
  );
  expect(outputSchemaProblem({ type: 'object', frobnicate: true })).toMatch(/unknown keyword: "frobnicate"/);
  expect(outputSchemaProblem({ type: 'string', format: 'no-such-format' })).toMatch(/unknown format "no-such-format"/);
  expect(outputSchemaProblem(schema)).toBeUndefined();
  expect(checkOutput({ schema: { type: 'strng' } })).toMatchObject({ kind: 'bad_schema' });
  expect(checkOutput({ schema })).toEqual({ kind: 'schema_ok' });
});

test('a valid answer is accepted, also inside a code fence, and its JSON text returned', () => {
  expect(checkOutput({ schema, text: ' {"name": "a", "count": 2} ' })).toEqual({
    kind: 'valid',
    json: '{"name": "a", "count": 2}',
  });
  expect(checkOutput({ schema, text: '```json\n{"name": "a", "count": 0}\n```' })).toEqual({
    kind: 'valid',
    json: '{"name": "a", "count": 0}',
  });
  expect(jsonText('```\n[1]\n```')).toBe('[1]');
});

test('every violation is named with where it is', () => {
  const checked = checkOutput({ schema, text: '{"count": -1, "extra": 1, "mail": "not-mail"}' });
  expect(checked.kind).toBe('invalid');
  const violations = checked.kind === 'invalid' ? checked.violations : [];
  expect(violations).toEqual(
    expect.arrayContaining([
      "(root) must have required property 'name'",
      "(root) must not have property 'extra'",
      '/count must be >= 0',
      '/mail must match format "email"',
    ]),
  );
});

test('an answer that is not JSON is a violation that says so', () => {
  const checked = checkOutput({ schema, text: 'Here you go: name a' });
  expect(checked).toMatchObject({ kind: 'invalid', violations: [expect.stringMatching(/^the answer is not JSON \(/)] });
});

test('draft-07 schemas (no $schema) and 2019-09 ones compile', () => {
  expect(checkOutput({ schema: { type: 'array', items: { type: 'number' } }, text: '[1, "x"]' })).toEqual({
    kind: 'invalid',
    violations: ['/1 must be number'],
  });
  expect(
    checkOutput({ schema: { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'number' }, text: '3' }),
  ).toEqual({ kind: 'valid', json: '3' });
});

test('patterns run in linear time (RE2): a backtracking pattern cannot freeze the worker on the model text', () => {
  const started = Date.now();
  const checked = checkOutput({
    schema: { type: 'string', pattern: '^(a+)+$' },
    text: JSON.stringify(`${'a'.repeat(40)}b`),
  });
  expect(checked).toEqual({ kind: 'invalid', violations: ['(root) must match pattern "^(a+)+$"'] });
  expect(Date.now() - started).toBeLessThan(10_000); // backtracking would take hours
  // A pattern RE2 cannot run (a back-reference) is refused with the schema, at start.
  expect(outputSchemaProblem({ type: 'string', pattern: '(a)\\1' })).toMatch(/invalid escape sequence/);
});

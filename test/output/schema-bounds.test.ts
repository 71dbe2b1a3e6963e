/**
 * Hostile output schemas, checked without a server: the run-input bounds on a schema's nesting and
 * `$ref` expansion (src/shared/output-schema-bounds.ts), and the validator thread's own memory and
 * time limits for what the bounds let through (src/activities/output-check-pool.ts).
 */
import { z } from 'zod';
import { checkOutput as checkOutputActivity } from '../../src/activities/output';
import { OutputCheckPool } from '../../src/activities/output-check-pool';
import { outputSchemaProblem } from '../../src/activities/output-validator';
import {
  MAX_OUTPUT_SCHEMA_DEPTH,
  outputSchemaBoundsProblem,
  outputSchemaSchema,
  parseRunInput,
} from '../../src/shared';
import { deepAnswer, doublingSchema, recursiveDoublingSchema } from './hostile-schemas';

jest.setTimeout(60_000);

test('the 2 KB schema whose $refs double 24 times is refused as run input, with the reason', () => {
  const schema = doublingSchema();
  expect(JSON.stringify(schema).length).toBeLessThan(2_500);
  expect(outputSchemaBoundsProblem(schema)).toMatch(/expands to more than 20000 subschemas/);
  const parsed = outputSchemaSchema().safeParse(schema);
  expect(parsed.success).toBe(false);
  const input = parseRunInput({ prompt: 'x', outputSchema: schema });
  expect(input.ok).toBe(false);
  expect(JSON.stringify(input)).toMatch(/outputSchema expands to more than 20000 subschemas/);
  // The CLI's check of a schema file (and the worker's) refuses it the same way, before compiling it.
  expect(outputSchemaProblem(schema)).toMatch(/expands to more than/);
  // Fewer levels are ordinary schemas.
  expect(outputSchemaBoundsProblem(doublingSchema(8))).toBeUndefined();
});

test('ordinary schemas pass the bounds: zod objects, recursive types, anchors, nested $id resources', () => {
  type Node = { name: string; children: Node[] };
  const node: z.ZodType<Node> = z.lazy(() => z.object({ name: z.string(), children: z.array(node) }));
  const zodSchema = z.toJSONSchema(z.object({ a: node, b: z.array(node), c: z.enum(['x', 'y']) }));
  expect(outputSchemaBoundsProblem(zodSchema as Record<string, unknown>)).toBeUndefined();
  expect(outputSchemaBoundsProblem(recursiveDoublingSchema)).toBeUndefined();
  expect(
    outputSchemaBoundsProblem({
      $defs: {
        p: { $anchor: 'point', type: 'object' },
        q: { $id: 'https://example.com/q', $defs: { r: {} }, $ref: '#/$defs/r' },
      },
      properties: { at: { $ref: '#point' }, q: { $ref: '#/$defs/q' } },
    }),
  ).toBeUndefined();
});

test('references the check cannot follow, and deep nesting, are refused with what is accepted', () => {
  expect(outputSchemaBoundsProblem({ $ref: 'https://example.com/schema.json' })).toMatch(
    /points outside the schema; only references within it are accepted, such as '#\/\$defs\/name'/,
  );
  expect(outputSchemaBoundsProblem({ $ref: '#/$defs/missing' })).toMatch(/points to nothing/);
  expect(outputSchemaBoundsProblem({ $ref: '#nowhere' })).toMatch(/names no \$anchor/);
  let deep: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < MAX_OUTPUT_SCHEMA_DEPTH; i++) deep = { not: deep };
  expect(outputSchemaBoundsProblem(deep)).toMatch(/nests deeper than 64 levels/);
  // Doubling hidden behind anchors is counted the same way.
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < 24; i++)
    defs[`d${i}`] = { $anchor: `a${i}`, anyOf: [{ $ref: `#a${i + 1}` }, { $ref: `#a${i + 1}` }] };
  defs.d24 = { $anchor: 'a24', type: 'string' };
  expect(outputSchemaBoundsProblem({ $ref: '#a0', $defs: defs })).toMatch(/expands to more than/);
});

test('a check that passes the bounds but would exhaust memory or time ends only its thread, as an invalid answer', async () => {
  const pool = new OutputCheckPool({ heapMb: 32, deadlineMs: 5_000 });
  try {
    const started = Date.now();
    const checked = await pool.check({ schema: recursiveDoublingSchema, text: deepAnswer });
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(checked).toEqual({
      kind: 'invalid',
      violations: [
        expect.stringMatching(
          /^the answer could not be checked against outputSchema: the check (ran out of memory|took longer)/,
        ),
      ],
    });
    // The pool goes on: the next check gets a fresh thread and its verdict.
    expect(await pool.check({ schema: recursiveDoublingSchema, text: '[[], [[]]]' })).toEqual({
      kind: 'valid',
      json: '[[], [[]]]',
    });
    expect(await pool.check({ schema: { type: 'integer' }, text: '"1"' })).toEqual({
      kind: 'invalid',
      violations: ['(root) must be integer'],
    });
  } finally {
    await pool.close();
  }
});

test('the checkOutput activity checks in the validator thread: a schema over the bounds is a bad schema, not a dead worker', async () => {
  expect(await checkOutputActivity({ schema: doublingSchema(), text: '1' })).toMatchObject({
    kind: 'bad_schema',
    message: expect.stringMatching(/expands to more than/),
  });
  expect(
    await checkOutputActivity({ schema: { type: 'object', properties: { a: { type: 'integer' } } }, text: '{"a": 1}' }),
  ).toEqual({
    kind: 'valid',
    json: '{"a": 1}',
  });
  const stopped = await checkOutputActivity({ schema: recursiveDoublingSchema, text: deepAnswer });
  expect(stopped).toMatchObject({ kind: 'invalid', violations: [expect.stringMatching(/could not be checked/)] });
});

/**
 * The README's tour without a key: `run --output-schema … --json` on the offline demo model. The demo
 * used to answer in prose, get corrective turns it read as new tasks (9 calls), then fail
 * `OutputInvalid`. It now answers with JSON built from the schema and what it found; and the files it
 * finds are those git would show (the glob tool skips what .gitignore excludes), every one measured.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { checkOutput } from '../../src/activities/output-validator';
import { OfflineDemoModel } from '../../src/models/offline';
import { answerForSchema, type OfflineFacts } from '../../src/models/offline-schema-answer';
import { OFFLINE_MODEL, WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { runResult } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

jest.setTimeout(60_000);

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const facts: OfflineFacts = {
  summary: 'I found 2 TypeScript files.',
  files: ['src/big.ts', 'src/a.ts'],
  total: 2,
  sizes: [
    { path: 'src/big.ts', bytes: 900 },
    { path: 'src/a.ts', bytes: 10 },
  ],
};

const schemas: Record<string, Record<string, unknown>> = {
  'the docs example': {
    type: 'object',
    properties: { files: { type: 'array', items: { type: 'string' } } },
    required: ['files'],
    additionalProperties: false,
  },
  'zod output with formats, enums, bounds and nullable fields': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok', 'error'] },
      checkedAt: { type: 'string', format: 'date-time' },
      contact: { type: 'string', format: 'email' },
      count: { type: 'integer', minimum: 1, maximum: 10 },
      ratio: { type: 'number', exclusiveMinimum: 0, multipleOf: 0.25 },
      code: { type: 'string', minLength: 3, maxLength: 5 },
      note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
    },
    required: ['status', 'checkedAt', 'contact', 'count', 'ratio', 'code', 'note', 'tags'],
    additionalProperties: false,
  },
  'nested objects through $defs and allOf': {
    type: 'object',
    properties: {
      largest: { $ref: '#/$defs/file' },
      files: { type: 'array', items: { $ref: '#/$defs/file' } },
      meta: { allOf: [{ type: 'object', properties: { a: { type: 'boolean' } } }, { required: ['a'] }] },
    },
    required: ['largest', 'files', 'meta'],
    additionalProperties: false,
    $defs: {
      file: {
        type: 'object',
        properties: { path: { type: 'string' }, bytes: { type: 'integer', minimum: 0 } },
        required: ['path', 'bytes'],
        additionalProperties: false,
      },
    },
  },
  'a bare array of numbers': { type: 'array', items: { type: 'number' }, minItems: 2 },
  'a const and a tuple': {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: {
      kind: { const: 'report' },
      pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
    },
  },
};

test.each(Object.entries(schemas))('the demo answer validates: %s', (_name, schema) => {
  const text = JSON.stringify(answerForSchema(schema, facts));
  expect(checkOutput({ schema, text })).toEqual({ kind: 'valid', json: text });
});

test('values come from the work where names say what they want', () => {
  expect(answerForSchema(schemas['nested objects through $defs and allOf']!, facts)).toEqual({
    largest: { path: 'src/big.ts', bytes: 900 },
    files: [
      { path: 'src/big.ts', bytes: 900 },
      { path: 'src/a.ts', bytes: 10 },
    ],
    meta: { a: true },
  });
});

test('run --output-schema on the offline demo: a typed answer in three calls, from the files git would show', async () => {
  const workspace = await tempWorkspace('offline-schema');
  const write = async (rel: string, bytes: number) => {
    await fs.mkdir(path.dirname(path.join(workspace, rel)), { recursive: true });
    await fs.writeFile(path.join(workspace, rel), 'x'.repeat(bytes));
  };
  await fs.writeFile(path.join(workspace, '.gitignore'), 'dist/\n');
  await write('src/index.ts', 300);
  await write('src/models/big.ts', 5000);
  await write('test/a.test.ts', 100);
  await write('dist/bundle.d.ts', 90_000); // build output: bigger than anything, and ignored
  const schema = {
    type: 'object',
    properties: {
      files: { type: 'array', items: { type: 'string' } },
      largest: { type: 'string' },
      bytes: { type: 'integer', minimum: 0 },
    },
    required: ['files', 'largest', 'bytes'],
    additionalProperties: false,
  };
  const model = new OfflineDemoModel();
  const result = await withWorker(env, { model }, async (taskQueue) => {
    const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `offline-schema-${Date.now()}`,
      args: [
        {
          prompt: 'List the TypeScript files here and tell me which one is largest',
          model: OFFLINE_MODEL,
          workspace,
          outputSchema: schema,
        },
      ],
    });
    return runResult(handle);
  });
  expect(result).toMatchObject({
    exitReason: 'completed',
    iterations: 3,
    output: { largest: 'src/models/big.ts', bytes: 5000 },
  });
  const output = (result as { output: { files: string[] } }).output;
  expect([...output.files].sort()).toEqual(['src/index.ts', 'src/models/big.ts', 'test/a.test.ts']);
});

/** `run --output-schema FILE` and `--tool-choice` through the built CLI: the typed answer in `--json`, bad values refused with exit 2. */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text } from '../../src/models/scripted';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent } from '../cli/cli-helpers';

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('cli-output-schema');
});
afterAll(async () => {
  await env?.close();
});

const runArgs = (workflowId: string) => [
  '--model',
  'scripted-output',
  '--workspace',
  workspace,
  '--id',
  workflowId,
  '--no-inline-worker',
  '--json',
];

test('run --output-schema FILE --json prints the result with the parsed answer in output', async () => {
  const file = path.join(workspace, 'schema.json');
  await fs.writeFile(
    file,
    JSON.stringify({ type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }),
  );
  const model = new ScriptedModel([text('{"ok": "yes"}'), text('{"ok": true}')]);
  const outcome = await withWorker(env, { model }, (taskQueue) =>
    durableAgent(['run', 'check it', '--output-schema', file, ...runArgs(`cli-schema-${tag}`)], { taskQueue }),
  );
  expect(outcome.code).toBe(0);
  expect(JSON.parse(outcome.stdout)).toMatchObject({
    exitReason: 'completed',
    finalText: '{"ok": true}',
    output: { ok: true },
    iterations: 2,
  });
}, 60_000);

test('a schema file that is not JSON Schema, not JSON or missing is refused with exit code 2 before anything starts', async () => {
  const bad = path.join(workspace, 'bad.json');
  await fs.writeFile(bad, JSON.stringify({ type: 'objekt' }));
  const notJson = path.join(workspace, 'not.json');
  await fs.writeFile(notJson, '{type: object}');
  const cases: [string, RegExp][] = [
    [
      bad,
      /--output-schema .*bad\.json: not valid JSON Schema: schema is invalid: data\/type must be equal to one of the allowed values/,
    ],
    [notJson, /--output-schema .*not\.json: not JSON \(/],
    [path.join(workspace, 'missing.json'), /--output-schema .*missing\.json: no such file/],
  ];
  for (const [file, message] of cases) {
    const id = `cli-schema-bad-${tag}-${path.basename(file)}`;
    const outcome = await durableAgent(['run', 'check it', '--output-schema', file, ...runArgs(id)]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toMatch(message);
    await expect(env.client.workflow.getHandle(id).describe()).rejects.toThrow();
  }
}, 60_000);

test('run --tool-choice: a forced tool for a model that rejects forcing, or a bad value, exits 2 before anything starts', async () => {
  const refused = await durableAgent([
    'run',
    'look',
    '--model',
    'claude-sonnet-5-5',
    '--tool-protocol',
    'xml',
    '--tool-choice',
    'glob',
    '--id',
    `cli-choice-${tag}`,
    '--no-inline-worker',
  ]);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('toolChoice other than');
  await expect(env.client.workflow.getHandle(`cli-choice-${tag}`).describe()).rejects.toThrow();
  const bad = await durableAgent(['run', 'look', '--tool-choice', 'two words', '--no-inline-worker']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("--tool-choice must be auto, none, any, required or a tool name, got 'two words'");
}, 60_000);

test('run --tool-choice none reaches the run input', async () => {
  const model = new ScriptedModel([text('No tools needed.')]);
  const id = `cli-choice-none-${tag}`;
  const outcome = await withWorker(env, { model }, (taskQueue) =>
    durableAgent(['run', 'look', '--tool-choice', 'none', ...runArgs(id)], { taskQueue }),
  );
  expect(outcome.code).toBe(0);
  expect(model.requests[0]!.toolChoice).toEqual({ type: 'none' });
}, 60_000);

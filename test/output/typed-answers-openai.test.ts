/**
 * Typed answers with the OpenAI provider (the real `openai` SDK against the local fake Chat
 * Completions server), with native tool calls and with the text tool protocol.
 */
import { OpenAIProvider } from '../../src/models/openai';
import { WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { answer, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';
import { runResult } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

let env: TestEnv;
let fake: FakeOpenAI;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  fake = await startFakeOpenAI();
});
afterEach(async () => {
  await fake?.close();
});

const strictSchema = {
  type: 'object',
  properties: { files: { type: 'array', items: { type: 'string' } } },
  required: ['files'],
  additionalProperties: false,
};

let counter = 0;
async function run(input: Partial<AgentRunInput>) {
  const model = new OpenAIProvider({ baseURL: fake.url }, {});
  const workspace = await tempWorkspace('typed-openai');
  return withWorker(env, { model }, async (taskQueue) => {
    const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `typed-openai-${Date.now()}-${++counter}`,
      args: [{ prompt: 'List the files', model: 'openai:fake-model', workspace, outputSchema: strictSchema, ...input }],
    });
    return runResult(handle);
  });
}

function lastUserText(i: number): string {
  const messages = fake.requests[i]!.body.messages as { role: string; content: string }[];
  return messages[messages.length - 1]!.content;
}

test('OpenAI: response_format json_schema is asked for (strict when the schema allows), tools run, the answer is typed', async () => {
  fake.enqueue(
    toolCalls([{ id: 'call_1', name: 'glob', arguments: JSON.stringify({ pattern: '*' }) }]),
    answer('{"files": ["a.txt"]}'),
  );
  const result = await run({});
  expect(result).toMatchObject({ exitReason: 'completed', output: { files: ['a.txt'] }, iterations: 2 });
  for (const request of fake.requests) {
    expect(request.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'final_answer', schema: strictSchema, strict: true },
    });
  }
});

test('OpenAI: a schema strict mode cannot take is sent with strict false, and still checked', async () => {
  const loose = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
  fake.enqueue(answer('{"m": 1}'), answer('{"n": 1}'));
  const result = await run({ outputSchema: loose });
  expect(result).toMatchObject({ exitReason: 'completed', output: { n: 1 }, iterations: 2 });
  expect(fake.requests[0]!.body.response_format.json_schema.strict).toBe(false);
  expect(lastUserText(1)).toContain("(root) must have required property 'n'");
});

test('text protocol: no native structured output, the <final_answer> is checked and corrected', async () => {
  fake.enqueue(
    answer('<final_answer>The files are a.txt</final_answer>'),
    answer('<final_answer>{"files": ["a.txt"]}</final_answer>'),
  );
  const result = await run({ toolProtocol: 'xml' });
  expect(result).toMatchObject({
    exitReason: 'completed',
    finalText: '{"files": ["a.txt"]}',
    output: { files: ['a.txt'] },
    iterations: 2,
  });
  for (const request of fake.requests) expect(request.body.response_format).toBeUndefined();
  expect(lastUserText(1)).toContain('the answer is not JSON');
});

/**
 * The text tool protocol (`toolProtocol: 'xml'`) on an `openai:` model end to end: the real workflow
 * and worker, the real `openai` SDK and built-in tools, and a fake Chat Completions server whose
 * "model" has no native tool calling and writes `<tool_code>` blocks in its text instead.
 */
import { OpenAIProvider } from '../../src/models/openai';
import { WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { answer, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { runResult } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

let env: TestEnv;
let fake: FakeOpenAI;
let workspace: string;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  fake = await startFakeOpenAI();
  workspace = await tempWorkspace('openai-xml');
});
afterEach(async () => {
  await fake?.close();
});

const call = (name: string, params: unknown) =>
  `<tool_code>\n<name>${name}</name>\n<parameters>${JSON.stringify(params)}</parameters>\n</tool_code>`;

function lastUserText(i: number): string {
  const messages = fake.requests[i]!.body.messages as { role: string; content: string }[];
  return messages[messages.length - 1]!.content;
}

test('tools are described in the system prompt, one <tool_code> call per turn runs, results come back as observations', async () => {
  fake.enqueue(
    answer(`I will write the file.\n${call('write_file', { path: 'a.txt', content: 'hello' })}`),
    answer('```xml\n<tool_code><name>read_file</name><parameters>{"path": a.txt}</parameters></tool_code>\n```'),
    answer(call('read_file', { path: 'a.txt' })),
    answer('<final_answer>The file says hello.</final_answer>'),
  );
  const model = new OpenAIProvider({ baseURL: fake.url }, {});
  const result = await withWorker(env, { model }, async (tq) =>
    runResult(
      await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue: tq,
        workflowId: `openai-xml-${Date.now()}`,
        args: [{ prompt: 'write and read a.txt', model: 'openai:fake-model', workspace, toolProtocol: 'xml' }],
      }),
    ),
  );

  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'The file says hello.', iterations: 4 });
  expect(fake.requests).toHaveLength(4);
  for (const request of fake.requests) {
    // No native tool calling: no tools in the API request, the definitions in the system prompt.
    expect(request.body.tools).toBeUndefined();
    const system = request.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('<tool_definitions>');
    expect(system.content).toContain('<name>write_file</name>');
  }
  expect(lastUserText(1)).toMatch(/^<observation tool="write_file">/);
  // The malformed call (bad JSON) was not run; the model was told why and shown the format.
  expect(lastUserText(2)).toMatch(/^<observation status="error">/);
  expect(lastUserText(2)).toContain('not valid JSON');
  expect(lastUserText(2)).toContain('<tool_code>');
  expect(lastUserText(3)).toMatch(/^<observation tool="read_file">/);
  expect(lastUserText(3)).toContain('hello');
});

/**
 * The run input's `toolChoice` on the real server, seen at the fake APIs: `none` on every call, a
 * forced tool (or `any`) until the model has called it, asked for in words from the models that reject
 * forcing, and refused when no such tool is offered.
 */
import { AnthropicProvider } from '../../src/models/anthropic';
import { OpenAIProvider } from '../../src/models/openai';
import { WORKFLOW_TYPE, parseRunInput, type AgentRunInput } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { message } from '../support/fake-anthropic';
import { answer, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';
import { runResult } from '../support/run-helpers';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useFakeAnthropicSuite } from '../support/workflow-suite';

const t = useFakeAnthropicSuite();

let counter = 0;
async function run(input: Partial<AgentRunInput>, model: AnthropicProvider | OpenAIProvider) {
  const workspace = await tempWorkspace('tool-choice');
  return withWorker(t.env, { model }, async (taskQueue) => {
    const handle = await t.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `tool-choice-${Date.now()}-${++counter}`,
      args: [{ prompt: 'Look around', model: 'claude-sonnet-4-6', workspace, ...input }],
    });
    return runResult(handle).catch((err: unknown) => err);
  });
}
const anthropic = () => new AnthropicProvider({ baseURL: t.fake.url, apiKey: 'sk-test' });
const globCall = { type: 'tool_use', id: 'toolu_1', name: 'glob', input: { pattern: '*' } };

test('a forced tool is asked for on the first call only; later calls are auto, so the run ends', async () => {
  t.fake.enqueue(message([globCall]), message('Nothing here.'));
  const result = await run({ toolChoice: { type: 'tool', name: 'glob' } }, anthropic());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Nothing here.', iterations: 2 });
  expect(t.fake.requests.map((r) => r.body.tool_choice)).toEqual([{ type: 'tool', name: 'glob' }, { type: 'auto' }]);
});

test("toolChoice 'none' holds for every call", async () => {
  t.fake.enqueue(message('From the prompt alone.'));
  const result = await run({ toolChoice: 'none' }, anthropic());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'From the prompt alone.' });
  expect(t.fake.requests[0]!.body.tool_choice).toEqual({ type: 'none' });
});

test("'any' (and its alias 'required') asks for a tool call until the model has made one", async () => {
  t.fake.enqueue(message([globCall]), message('Nothing here.'));
  const result = await run({ toolChoice: 'required' }, anthropic());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Nothing here.' });
  expect(t.fake.requests.map((r) => r.body.tool_choice)).toEqual([{ type: 'any' }, { type: 'auto' }]);
});

test("in done-tool mode 'any' holds on every call: the run ends only with done", async () => {
  const doneCall = { type: 'tool_use', id: 'toolu_2', name: 'done', input: { summary: 'Nothing here.' } };
  t.fake.enqueue(message([globCall]), message([doneCall]));
  const result = await run({ toolChoice: 'any', requireDoneTool: true }, anthropic());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Nothing here.' });
  expect(t.fake.requests.map((r) => r.body.tool_choice)).toEqual([{ type: 'any' }, { type: 'any' }]);
});

test('a 5.5-generation model is not refused a forced tool: an answer without the call is met with a request to make it', async () => {
  t.fake.enqueue(message('I will just answer.'), message([globCall]), message('Nothing here.'));
  const result = await run({ model: 'claude-sonnet-5-5', toolChoice: { type: 'tool', name: 'glob' } }, anthropic());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Nothing here.' });
  // Never forced (the model rejects it): auto, and asked again in words.
  expect(t.fake.requests.map((r) => r.body.tool_choice)).toEqual([
    { type: 'auto' },
    { type: 'auto' },
    { type: 'auto' },
  ]);
  expect(JSON.stringify(t.fake.requests[1]!.body.messages.at(-1))).toContain('You must call the `glob` tool now');
  // The client takes it the same way; 'any' and 'required' are choices too.
  expect(parseRunInput({ prompt: 'x', toolChoice: { type: 'tool', name: 'glob' } })).toMatchObject({ ok: true });
  expect(parseRunInput({ prompt: 'x', toolChoice: 'none' })).toMatchObject({ ok: true });
  expect(parseRunInput({ prompt: 'x', toolChoice: 'any' })).toMatchObject({ ok: true });
  expect(parseRunInput({ prompt: 'x', toolChoice: 'sometimes' })).toEqual({
    ok: false,
    error: `Invalid run input: toolChoice: toolChoice must be 'auto', 'none', 'any', 'required' or {"type": "tool", "name": "<tool>"}`,
  });
  expect(
    parseRunInput({
      prompt: 'x',
      model: 'claude-sonnet-4-6',
      tools: ['grep'],
      toolChoice: { type: 'tool', name: 'glob' },
    }),
  ).toMatchObject({
    ok: false,
    error: expect.stringContaining("toolChoice names 'glob', which is not among the run's tools"),
  });
  expect(parseRunInput({ prompt: 'x', toolProtocol: 'xml', toolChoice: 'none' })).toMatchObject({
    ok: false,
    error: expect.stringContaining('needs native tool calling'),
  });
});

test('a forced tool the worker does not offer ends the run failed, naming the tools it has', async () => {
  const result = await run({ toolChoice: { type: 'tool', name: 'no_such_tool' } }, anthropic());
  expect(result).toMatchObject({ exitReason: 'failed', error: { type: 'DurableAgent.InvalidInput' } });
  expect((result as { error: { message: string } }).error.message).toMatch(
    /toolChoice names tool 'no_such_tool', which this run is not offered; its tools: bash, /,
  );
  expect(t.fake.requests).toHaveLength(0);
});

describe('OpenAI', () => {
  let openai: FakeOpenAI;
  beforeEach(async () => {
    openai = await startFakeOpenAI();
  });
  afterEach(async () => {
    await openai?.close();
  });

  test('a forced tool becomes tool_choice {type: function} on the first call, then auto', async () => {
    openai.enqueue(toolCalls([{ id: 'call_1', name: 'glob', arguments: { pattern: '*' } }]), answer('Done.'));
    const result = await run(
      { model: 'openai:fake-model', toolChoice: { type: 'tool', name: 'glob' } },
      new OpenAIProvider({ baseURL: openai.url }, {}),
    );
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Done.' });
    expect(openai.requests.map((r) => r.body.tool_choice)).toEqual([
      { type: 'function', function: { name: 'glob' } },
      'auto',
    ]);
  });
});

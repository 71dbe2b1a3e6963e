/**
 * The run input's `toolChoice` on the real server, seen at the fake APIs: `none` on every call, a
 * forced tool on the first call only, refused for the models that reject forcing and when no such tool is offered.
 */
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
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

test('a 5.5-generation model refuses a forced tool at start, with a readable message', async () => {
  const result = await run({ model: 'claude-sonnet-5-5', toolChoice: { type: 'tool', name: 'glob' } }, anthropic());
  expect(result).toBeInstanceOf(WorkflowFailedError);
  const cause = (result as WorkflowFailedError).cause as ApplicationFailure;
  expect(cause.type).toBe('DurableAgent.InvalidInput');
  expect(cause.message).toContain("toolChoice: model 'claude-sonnet-5-5' rejects a forced tool choice");
  expect(t.fake.requests).toHaveLength(0);
  // The client refuses it the same way, and 'auto'/'none' are fine with those models.
  expect(parseRunInput({ prompt: 'x', toolChoice: { type: 'tool', name: 'glob' } })).toMatchObject({ ok: false });
  expect(parseRunInput({ prompt: 'x', toolChoice: 'none' })).toMatchObject({ ok: true });
  expect(parseRunInput({ prompt: 'x', toolChoice: 'any' })).toEqual({
    ok: false,
    error: `Invalid run input: toolChoice: toolChoice must be 'auto', 'none' or {"type": "tool", "name": "<tool>"}`,
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

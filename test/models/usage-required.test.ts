import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { AnthropicProvider } from '../../src/models/anthropic';
import { OpenAIProvider } from '../../src/models/openai';
import type { ModelCallContext, ModelProvider } from '../../src/models/types';
import { MAX_CALL_TOKENS } from '../../src/models/usage-check';
import { ErrorTypes, WORKFLOW_TYPE, type AgentRunInput, type ModelRequest } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { message, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { answer, startFakeOpenAI, toolCalls, type FakeOpenAI } from '../support/fake-openai';
import { runResult } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

/**
 * "maxBudgetUsd is not enforced when an OpenAI-compatible server omits or negates usage": a
 * missing or invalid token count was read as 0, so the call cost nothing and its tools ran. It is
 * now a retryable provider error (`ModelError.MalformedResponse`): the answer is not used, the call
 * is repeated, and the run's budget counts what the provider reports on the repeat. Real workflow,
 * worker and SDKs against the local fake servers.
 */

let env: TestEnv;
let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});
beforeEach(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
});
afterEach(async () => {
  await Promise.all([openai?.close(), anthropic?.close()]);
});

let counter = 0;
async function budgetRun(
  model: ModelProvider,
  modelId: string,
  maxBudgetUsd: number,
  input: Partial<AgentRunInput> = {},
) {
  const workspace = await tempWorkspace('usage');
  const result = await withWorker(env, { model }, async (taskQueue) => {
    const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `usage-${Date.now()}-${++counter}`,
      args: [{ prompt: 'write the files', model: modelId, workspace, maxBudgetUsd, ...input }],
    });
    return runResult(handle);
  });
  return { result, workspace };
}

const openaiProvider = () => new OpenAIProvider({ baseURL: openai.url, heartbeatIntervalMs: 200 }, {});
const writeCall = (id: string, file: string) => ({ id, name: 'write_file', arguments: { path: file, content: 'x' } });

// gpt-4o-mini: $0.15 per million input tokens, so 1M tokens cost $0.15, past a $0.05 budget.
const OVER_BUDGET = { prompt_tokens: 1_000_000, completion_tokens: 0 };

test.each([
  ['omits usage', null],
  ['negates usage', { prompt_tokens: -1_000_000, completion_tokens: 5 }],
  ['sends a fractional count', { prompt_tokens: 10.5, completion_tokens: 5 }],
  ['sends a count past belief', { prompt_tokens: MAX_CALL_TOKENS + 1, completion_tokens: 5 }],
])(
  'maxBudgetUsd is enforced when an OpenAI-compatible server %s: the answer is refused and the call repeated',
  async (_what, usage) => {
    openai.enqueue(
      toolCalls([writeCall('call_free', 'free.txt')], { usage }),
      toolCalls([writeCall('call_paid', 'paid.txt')], { usage: OVER_BUDGET }),
    );
    const { result, workspace } = await budgetRun(openaiProvider(), 'openai:gpt-4o-mini', 0.05);
    // The answer without a valid usage was never acted on: its tool call did not run.
    expect(existsSync(path.join(workspace, 'free.txt'))).toBe(false);
    expect(openai.requests).toHaveLength(2);
    expect(result.exitReason).toBe('max_budget');
    expect(result.costUsd).toBeCloseTo(0.15, 9);
    expect(result.usage.inputTokens).toBe(1_000_000);
  },
);

test('a server that never reports usage ends the run failed once the bounded retries are spent, its tools never run', async () => {
  openai.enqueue(
    toolCalls([writeCall('call_1', 'one.txt')], { usage: null }),
    toolCalls([writeCall('call_2', 'two.txt')], { usage: null }),
  );
  const { result, workspace } = await budgetRun(openaiProvider(), 'openai:gpt-4o-mini', 0.05, {
    timeouts: { modelMaxAttempts: 2 },
  });
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe(ErrorTypes.MalformedResponse);
  expect(result.error?.message).toContain('reported no valid token usage');
  expect(openai.requests).toHaveLength(2);
  expect(existsSync(path.join(workspace, 'one.txt')) || existsSync(path.join(workspace, 'two.txt'))).toBe(false);
});

test('maxBudgetUsd is enforced when the Anthropic API negates usage: the answer is refused and the call repeated', async () => {
  const write = (id: string, file: string) => [
    { type: 'tool_use', id, name: 'write_file', input: { path: file, content: 'x' } },
  ];
  anthropic.enqueue(
    message(write('toolu_free', 'free.txt'), { usage: { input_tokens: -1_000_000, output_tokens: 5 } }),
    // claude-sonnet-5-5: 100k in × $2/M = $0.20, past a $0.05 budget.
    message(write('toolu_paid', 'paid.txt'), { usage: { input_tokens: 100_000, output_tokens: 0 } }),
  );
  const provider = new AnthropicProvider({ baseURL: anthropic.url, apiKey: 'sk-test' });
  const { result, workspace } = await budgetRun(provider, 'claude-sonnet-5-5', 0.05);
  expect(existsSync(path.join(workspace, 'free.txt'))).toBe(false);
  expect(anthropic.requests).toHaveLength(2);
  expect(result.exitReason).toBe('max_budget');
  expect(result.costUsd).toBeCloseTo(0.2, 9);
});

describe('a missing or invalid usage is a retryable ModelError.MalformedResponse naming the field', () => {
  const request: ModelRequest = {
    model: 'openai:gpt-4o-mini',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    maxTokens: 64,
  };
  const ctx = (): ModelCallContext => ({ signal: new AbortController().signal, heartbeat: () => {} });

  test('an OpenAI-compatible stream without a usage chunk', async () => {
    openai.enqueue(answer('hi', { usage: null }));
    await expect(openaiProvider().call(request, ctx())).rejects.toMatchObject({
      type: ErrorTypes.MalformedResponse,
      nonRetryable: false,
      message: expect.stringContaining('the stream sent no usage chunk'),
    });
  });

  test('an OpenAI-compatible stream with a negative count', async () => {
    openai.enqueue(answer('hi', { usage: { prompt_tokens: 10, completion_tokens: -3 } }));
    await expect(openaiProvider().call(request, ctx())).rejects.toMatchObject({
      type: ErrorTypes.MalformedResponse,
      nonRetryable: false,
      message: expect.stringContaining('usage.completion_tokens is -3'),
    });
  });

  test('an Anthropic message with a negative count', async () => {
    anthropic.enqueue(message('hi', { usage: { input_tokens: 10, output_tokens: -3 } }));
    const provider = new AnthropicProvider({ baseURL: anthropic.url, apiKey: 'sk-test' });
    await expect(provider.call({ ...request, model: 'claude-sonnet-5-5' }, ctx())).rejects.toMatchObject({
      type: ErrorTypes.MalformedResponse,
      nonRetryable: false,
      message: expect.stringContaining('usage.output_tokens is -3'),
    });
  });
});

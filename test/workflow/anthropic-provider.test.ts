import { AnthropicProvider } from '../../src/models/anthropic';
import { WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { apiError, message } from '../support/fake-anthropic';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useFakeAnthropicSuite } from '../support/workflow-suite';
import { runResult } from '../support/run-helpers';

// The real @anthropic-ai/sdk, driven by a real workflow and worker, against a local fake Messages API.
const t = useFakeAnthropicSuite();

let counter = 0;
async function run(prompt: string) {
  const model = new AnthropicProvider({ baseURL: t.fake.url, apiKey: 'sk-test' });
  const workspace = await tempWorkspace('anthropic');
  return withWorker(t.env, { model }, async (taskQueue) => {
    const handle = await t.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `anthropic-${Date.now()}-${++counter}`,
      args: [{ prompt, model: 'claude-sonnet-5-5', workspace }],
    });
    return runResult(handle);
  });
}

test('a 429 with retry-after is retried after the delay it names, then the run completes', async () => {
  t.fake.enqueue(
    apiError(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit', {
      headers: { 'retry-after': '3' },
    }),
    message('Recovered after the rate limit.', { usage: { input_tokens: 1000, output_tokens: 100 } }),
  );
  const result = await run('hello');
  expect(result).toMatchObject({
    exitReason: 'completed',
    finalText: 'Recovered after the rate limit.',
    iterations: 1,
  });
  // $2/M in + $10/M out on claude-sonnet-5-5.
  expect(result.costUsd).toBeCloseTo((1000 * 2 + 100 * 10) / 1e6, 9);
  expect(t.fake.requests).toHaveLength(2);
  const gap = t.fake.requests[1]!.receivedAt - t.fake.requests[0]!.receivedAt;
  // The default first backoff is 1 s; the server asked for 3 s.
  expect(gap).toBeGreaterThanOrEqual(2800);
  // Temporal alone owns retries: the SDK made one attempt per activity attempt, never streamed twice on its own.
  expect(t.fake.requests.every((r) => r.body.stream === true)).toBe(true);
});

test('a 400 fails the run at once, typed, without retries', async () => {
  t.fake.enqueue(apiError(400, 'invalid_request_error', 'messages.0.content: field required'));
  const result = await run('hello');
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe('ModelError.BadRequest');
  expect(result.error?.message).toContain('messages.0.content: field required');
  expect(t.fake.requests).toHaveLength(1);
});

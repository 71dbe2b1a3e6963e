import { AnthropicProvider } from '../../src/models/anthropic';
import { MAX_ERROR_MESSAGE_CHARS } from '../../src/models/error-body';
import { OpenAIProvider } from '../../src/models/openai';
import type { ModelProvider } from '../../src/models/types';
import { ErrorTypes, WORKFLOW_TYPE } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { apiError, startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { chatError, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai';
import { runResult } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

/**
 * "A 3 MB provider 400 body turns a non-retryable error into heartbeat-timeout retries": the SDKs
 * read an error body whole into the failure's message, which then was too large for the worker to
 * report. Error bodies are now read with a bound and failure messages cut, so the run ends failed
 * at once with `ModelError.BadRequest`, after one request. Real workflow, worker and SDKs against
 * the local fake servers.
 */

const HUGE = 3 * 1024 * 1024;
/** Far below a heartbeat timeout plus a retry: the failure is reported at once. */
const QUICKLY_MS = 15_000;

let env: TestEnv;
let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
beforeAll(async () => {
  env = await connectTestEnv();
  [anthropic, openai] = await Promise.all([startFakeAnthropic(), startFakeOpenAI()]);
});
afterAll(async () => {
  await Promise.all([anthropic?.close(), openai?.close()]);
  await env?.close();
});

let counter = 0;
async function timedRun(model: ModelProvider, modelId: string) {
  const workspace = await tempWorkspace('huge-error');
  const started = Date.now();
  const result = await withWorker(env, { model }, async (taskQueue) => {
    const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `huge-error-${Date.now()}-${++counter}`,
      args: [{ prompt: 'hello', model: modelId, workspace }],
    });
    return runResult(handle);
  });
  return { result, elapsedMs: Date.now() - started };
}

test('a 3 MB provider 400 body from the Anthropic API ends the run failed quickly with ModelError.BadRequest', async () => {
  anthropic.enqueue(apiError(400, 'invalid_request_error', `bad request ${'x'.repeat(HUGE)}`));
  const { result, elapsedMs } = await timedRun(
    new AnthropicProvider({ baseURL: anthropic.url, apiKey: 'sk-test' }),
    'claude-sonnet-5-5',
  );
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe(ErrorTypes.BadRequest);
  expect(result.error?.message).toMatch(/^Anthropic API 400/);
  expect(result.error!.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS + 1);
  expect(anthropic.requests).toHaveLength(1);
  expect(elapsedMs).toBeLessThan(QUICKLY_MS);
});

test('a 3 MB provider 400 body from an OpenAI-compatible server ends the run failed quickly with ModelError.BadRequest', async () => {
  openai.enqueue(chatError(400, `bad request ${'x'.repeat(HUGE)}`));
  const { result, elapsedMs } = await timedRun(
    new OpenAIProvider({ baseURL: openai.url, heartbeatIntervalMs: 200 }, {}),
    'openai:fake-model',
  );
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe(ErrorTypes.BadRequest);
  expect(result.error?.message).toMatch(/^OpenAI-compatible API 400/);
  expect(result.error!.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS + 1);
  expect(openai.requests).toHaveLength(1);
  expect(elapsedMs).toBeLessThan(QUICKLY_MS);
});

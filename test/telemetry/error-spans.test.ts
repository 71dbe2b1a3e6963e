/**
 * Spans that tell the truth about failures, received by a real OTLP endpoint:
 * - with content capture off, no span carries an error's text (a provider's message can echo the
 *   prompt or a key): the status says the error's type, `exception` events keep only their type;
 * - a conversation-cache miss (a restarted or another worker) is not a failed `chat` span: it never
 *   reached the provider, and the call resent in full has its own span;
 * - the `execute_tool task` span of a subagent carries the call's `gen_ai.tool.call.id`.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ConversationCache } from '../../src/activities/conversation-cache';
import { fail, ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { ErrorTypes } from '../../src/shared/constants';
import type { Telemetry } from '../../src/telemetry';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { runResult } from '../support/run-helpers';
import { uniqueQueue } from '../support/temporal';
import { useTraceSuite } from './trace-suite';

jest.setTimeout(90_000);
const t = useTraceSuite();

const SECRET = 'sk-ant-api03-LEAKED-KEY-IN-ERROR';

function workerWith(telemetry: Telemetry, model: ScriptedModel, taskQueue: string, conversations?: ConversationCache) {
  return createAgentWorker({
    connection: t.env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: t.otelBundle,
    deps: { models: () => model, tools: createDefaultRegistry(), ...(conversations ? { conversations } : {}) },
    stickyActivities: false,
    telemetry,
    shutdownGraceTime: 200,
  });
}

async function runToEnd(telemetry: Telemetry, model: ScriptedModel, conversations?: ConversationCache) {
  const taskQueue = uniqueQueue('otel-err');
  const w = await workerWith(telemetry, model, taskQueue, conversations);
  const result = await w.runUntil(async () => runResult(await t.start(taskQueue, `otel-err-${Date.now()}`)));
  await t.flushed(telemetry);
  return result;
}

const providerError = () =>
  fail(
    ApplicationFailure.create({
      type: ErrorTypes.BadRequest,
      message: `Anthropic API 400: invalid x-api-key ${SECRET} in "take notes"`,
      nonRetryable: true,
      details: [
        { status: 400, apiErrorType: 'invalid_request_error', errorCode: null, requestId: null, retryAfterMs: null },
      ],
    }),
  );

test('with content capture off, no span carries the error text; the type and status stay', async () => {
  const telemetry = t.telemetryFor();
  const result = await runToEnd(telemetry, new ScriptedModel([providerError()]));
  expect(result.exitReason).toBe('failed');
  expect(JSON.stringify(t.receiver.spans)).not.toContain(SECRET);
  const chat = t.one('chat scripted-test');
  expect(chat.attributes).toMatchObject({ 'error.type': ErrorTypes.BadRequest, 'http.response.status_code': 400 });
  expect(chat.status?.message).toBe(ErrorTypes.BadRequest);
  expect(chat.events.find((e) => e.name === 'exception')?.attributes).toEqual({
    'exception.type': ErrorTypes.BadRequest,
  });
  // Temporal's own spans fail too, with the type only.
  const failedSpans = t.receiver.spans.filter((s) => s.status?.message);
  expect(failedSpans.map((s) => s.name)).toEqual(expect.arrayContaining(['RunActivity:durableAgent.firstModelCall']));
  for (const span of t.receiver.spans) {
    for (const event of span.events) {
      expect(Object.keys(event.attributes)).not.toEqual(expect.arrayContaining(['exception.message']));
    }
  }
});

test('with the content opt-in, the error text is recorded', async () => {
  const telemetry = t.telemetryFor({ content: true });
  await runToEnd(telemetry, new ScriptedModel([providerError()]));
  expect(t.one('chat scripted-test').status?.message).toContain(SECRET);
});

test('a conversation-cache miss is no chat span; the call resent in full is', async () => {
  const telemetry = t.telemetryFor();
  const model = new ScriptedModel([toolUse([{ id: 'toolu_g', name: 'glob', input: { pattern: '*' } }]), text('Done.')]);
  // A cache that keeps nothing: the second call misses, as on a worker that restarted.
  const conversations = new ConversationCache({ maxConversations: 0 });
  const result = await runToEnd(telemetry, model, conversations);
  expect(result.exitReason).toBe('completed');
  // Two attempts at the second call: the miss, and the call resent in full.
  expect(t.named('RunActivity:durableAgent.callModel')).toHaveLength(2);
  const chats = t.named('chat ');
  expect(chats).toHaveLength(2);
  for (const chat of chats) expect(chat.attributes['error.type']).toBeUndefined();
});

test('the execute_tool task span carries the task call id', async () => {
  const telemetry = t.telemetryFor();
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_task_1', name: 'task', input: { prompt: 'count the files', description: 'count' } }]),
    text('Three files.'),
    text('The subagent says three.'),
  ]);
  const result = await runToEnd(telemetry, model);
  expect(result.exitReason).toBe('completed');
  for (let i = 0; i < 40 && t.named('execute_tool task').length === 0; i++) {
    await telemetry.forceFlush();
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(t.one('execute_tool task').attributes).toMatchObject({
    'gen_ai.tool.name': 'task',
    'gen_ai.tool.call.id': 'toolu_task_1',
  });
});

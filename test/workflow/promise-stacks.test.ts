import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ScriptedModel, fail, text } from '../../src/models/scripted';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { workerSettings } from '../../src/worker/settings';
import { stateQuery } from '../../src/shared';
import { uniqueQueue, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * The agent's bundles format workflow stacks themselves (src/workflows/sdk/promise-stacks.ts), which
 * turns off the SDK's per-promise stack collection: the `__stack_trace` query (the Web UI's Stack
 * Trace tab) is empty, an error thrown by workflow code still carries its stack, and a worker with
 * `workflowStackTraces: true` has the SDK's stacks back. The real worker and server: the test bundle
 * is preloaded as `npm run build` preloads the production one.
 */
const { suite, start } = useWorkflowSuite('promise-stacks');

/** A session that answered its first message and now waits for the next one. */
async function waitingSession(taskQueue: string): Promise<WorkflowHandle> {
  const handle = await start(taskQueue, { session: true });
  await untilWaiting(handle);
  return handle;
}

async function untilWaiting(handle: WorkflowHandle): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const state = await handle.query(stateQuery);
    if (state.status === 'awaiting_input') return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the session never waited for input');
}

test('the Stack Trace query is empty for a run of the agent bundle, and the run goes on', async () => {
  const model = new ScriptedModel([text('first answer'), text('second answer')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await waitingSession(tq);
    expect(await handle.query<string>('__stack_trace')).toBe('');
    await handle.executeUpdate('sendMessage', { args: [{ message: 'again' }] });
    await untilWaiting(handle);
    expect(await handle.query<string>('__stack_trace')).toBe('');
    await handle.executeUpdate('endSession', { args: [] });
    const result = await handle.result();
    expect(result.finalText).toBe('second answer');
  });
});

test("an error thrown by workflow code keeps its stack: the failed run's failure names the workflow function", async () => {
  const model = new ScriptedModel([fail(ApplicationFailure.nonRetryable('the provider refused', 'ProviderRefused'))]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq);
    const error = await handle.result().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    const history = await handle.fetchHistory();
    const failed = history.events?.find((e) => e.workflowExecutionFailedEventAttributes)
      ?.workflowExecutionFailedEventAttributes?.failure;
    expect(failed?.message).toMatch(/the run failed/);
    // Formatted by the workflow context: frames in the bundle's file, the function that threw it.
    expect(failed?.stackTrace).toMatch(/^\s+at endWith \(.*workflow-bundle\.js:\d+:\d+\)$/m);
  });
});

test('workflowStackTraces: true bundles at start without it, and the Stack Trace query shows the SDK stacks', async () => {
  const model = new ScriptedModel([text('first answer')]);
  const taskQueue = uniqueQueue('stacks');
  const worker = await createAgentWorker({
    connection: suite.env.nativeConnection,
    namespace: 'default',
    taskQueue,
    deps: { models: () => model, tools: createDefaultRegistry() },
    stickyActivities: false,
    workflowStackTraces: true,
  });
  await worker.runUntil(async () => {
    const handle = await waitingSession(taskQueue);
    // The SDK's source-mapped stack of the awaiting promise: the TypeScript source's path and line.
    expect(await handle.query<string>('__stack_trace')).toMatch(/src\/workflows\/.+\.ts:\d+:\d+/);
    await handle.executeUpdate('endSession', { args: [] });
    await handle.result();
  });
}, 120_000);

test('DURABLE_AGENT_WORKFLOW_STACK_TRACES takes a switch and refuses anything else, naming what it accepts', () => {
  expect(workerSettings({}).workflowStackTraces).toBe(false);
  expect(workerSettings({ DURABLE_AGENT_WORKFLOW_STACK_TRACES: ' On ' }).workflowStackTraces).toBe(true);
  expect(workerSettings({ DURABLE_AGENT_WORKFLOW_STACK_TRACES: '0' }).workflowStackTraces).toBe(false);
  expect(() => workerSettings({ DURABLE_AGENT_WORKFLOW_STACK_TRACES: 'maybe' })).toThrow(
    "DURABLE_AGENT_WORKFLOW_STACK_TRACES must be 1, true, on or yes (or 0, false, off, no), got 'maybe'",
  );
});

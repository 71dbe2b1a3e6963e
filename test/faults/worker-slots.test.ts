/**
 * The production worker takes a bounded number of workflow tasks at once (queries wait behind the
 * tasks the worker holds): DURABLE_AGENT_WORKFLOW_TASK_SLOTS, else the default; a caller's own slot
 * count or tuner wins, and a tuner next to the default is not refused by the SDK.
 */
import type { Worker } from '@temporalio/worker';
import { ScriptedModel, text } from '../../src/models';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker, DEFAULT_WORKFLOW_TASK_SLOTS, workflowTaskSlots, type AgentWorker } from '../../src/worker';
import { connectTestEnv, testBundlePath, uniqueQueue, type TestEnv } from '../support/temporal';

jest.setTimeout(60_000);

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => env?.close());

async function workflowSlotsOf(options: Parameters<typeof createAgentWorker>[0]['workerOptions']): Promise<unknown> {
  const worker: AgentWorker = await createAgentWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue: uniqueQueue('slots'),
    workflowBundlePath: testBundlePath(),
    deps: { models: () => new ScriptedModel([text('unused')]), tools: createDefaultRegistry() },
    stickyActivities: false,
    ...(options ? { workerOptions: options } : {}),
  });
  // The SDK compiles slot counts into its tuner; the main worker is the one polling workflow tasks.
  const main = (worker as unknown as { main: Worker }).main;
  await worker.runUntil(Promise.resolve()); // releases its hold on the connection
  return main.options.tuner.workflowTaskSlotSupplier;
}

test('the worker takes DURABLE_AGENT_WORKFLOW_TASK_SLOTS workflow tasks at once, else the default', async () => {
  expect(await workflowSlotsOf(undefined)).toEqual({ type: 'fixed-size', numSlots: DEFAULT_WORKFLOW_TASK_SLOTS });
  process.env.DURABLE_AGENT_WORKFLOW_TASK_SLOTS = '3';
  try {
    expect(await workflowSlotsOf(undefined)).toEqual({ type: 'fixed-size', numSlots: 3 });
  } finally {
    delete process.env.DURABLE_AGENT_WORKFLOW_TASK_SLOTS;
  }
});

test("a caller's slot count or tuner replaces the default; the SDK accepts the tuner alone", async () => {
  expect(await workflowSlotsOf({ maxConcurrentWorkflowTaskExecutions: 25 })).toEqual({
    type: 'fixed-size',
    numSlots: 25,
  });
  const fixed = (numSlots: number) => ({ type: 'fixed-size' as const, numSlots });
  const tuner = {
    workflowTaskSlotSupplier: fixed(7),
    activityTaskSlotSupplier: fixed(50),
    localActivityTaskSlotSupplier: fixed(50),
    nexusTaskSlotSupplier: fixed(10),
  };
  expect(await workflowSlotsOf({ tuner })).toEqual(fixed(7));
  expect(workflowTaskSlots({ workflowTaskSlots: 10 }, { tuner })).toEqual({});
  expect(workflowTaskSlots({ workflowTaskSlots: 10 }, undefined)).toEqual({ maxConcurrentWorkflowTaskExecutions: 10 });
});

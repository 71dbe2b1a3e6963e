/**
 * The production worker takes a bounded number of workflow tasks at once (queries wait behind the
 * tasks the worker holds): DURABLE_AGENT_WORKFLOW_TASK_SLOTS, else the default; a caller's own slot
 * count or tuner wins, and a tuner next to the default is not refused by the SDK. With
 * DURABLE_AGENT_CPU_TARGET its activities take the SDK's resource-based slots (runs under load:
 * `node dist/bench/query-latency.js`, docs/benchmarks.md).
 */
import type { Worker } from '@temporalio/worker';
import { ScriptedModel, text } from '../../src/models';
import { createDefaultRegistry } from '../../src/tools';
import {
  createAgentWorker,
  DEFAULT_WORKFLOW_TASK_SLOTS,
  workerSlots,
  workerSettings,
  type AgentWorker,
} from '../../src/worker';
import { connectTestEnv, testBundlePath, uniqueQueue, type TestEnv } from '../support/temporal';

jest.setTimeout(60_000);

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => env?.close());

const fixed = (numSlots: number) => ({ type: 'fixed-size' as const, numSlots });

/** A caller's own tuner: fixed slots for workflow tasks and activities (50 local activities, 10 Nexus tasks). */
const fixedTuner = (workflowTasks: number, activities: number) => ({
  workflowTaskSlotSupplier: fixed(workflowTasks),
  activityTaskSlotSupplier: fixed(activities),
  localActivityTaskSlotSupplier: fixed(50),
  nexusTaskSlotSupplier: fixed(10),
});

async function workflowSlotsOf(options: Parameters<typeof createAgentWorker>[0]['workerOptions']): Promise<unknown> {
  return (await tunerOf(options)).workflowTaskSlotSupplier;
}

async function tunerOf(
  options: Parameters<typeof createAgentWorker>[0]['workerOptions'],
): Promise<Record<string, { type: string; numSlots?: number }>> {
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
  return main.options.tuner as unknown as Record<string, { type: string; numSlots?: number }>;
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
  const tuner = fixedTuner(7, 50);
  expect(await workflowSlotsOf({ tuner })).toEqual(fixed(7));
  expect(workerSlots({ workflowTaskSlots: 10 }, { tuner })).toEqual({});
  expect(workerSlots({ workflowTaskSlots: 10 }, undefined)).toEqual({ maxConcurrentWorkflowTaskExecutions: 10 });
});

/** Runs `fn` with DURABLE_AGENT_CPU_TARGET set to `value`, then puts back what was there. */
async function withCpuTarget<T>(value: string, fn: () => Promise<T>): Promise<T> {
  const before = process.env.DURABLE_AGENT_CPU_TARGET;
  process.env.DURABLE_AGENT_CPU_TARGET = value;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.DURABLE_AGENT_CPU_TARGET;
    else process.env.DURABLE_AGENT_CPU_TARGET = before;
  }
}

test("DURABLE_AGENT_CPU_TARGET gives both workers' activities resource-based slots, at most 100", async () => {
  await withCpuTarget('80%', async () => {
    expect(workerSettings().cpuTarget).toBe(0.8);
    const tuner = await tunerOf(undefined);
    expect(tuner.activityTaskSlotSupplier).toMatchObject({ type: 'resource-based', maximumSlots: 100 });
    expect(tuner.workflowTaskSlotSupplier).toEqual({ type: 'fixed-size', numSlots: DEFAULT_WORKFLOW_TASK_SLOTS });
    // The worker's own activity queue (sticky activities) gets the same slots, on the same controller.
    const worker = await createAgentWorker({
      connection: env.nativeConnection,
      namespace: 'default',
      taskQueue: uniqueQueue('slots-own'),
      workflowBundlePath: testBundlePath(),
      deps: { models: () => new ScriptedModel([text('unused')]), tools: createDefaultRegistry() },
      stickyActivities: true,
    });
    const { main, sticky: own } = worker as unknown as { main: Worker; sticky?: Worker };
    await worker.runUntil(Promise.resolve());
    expect(own).toBeDefined();
    const activitySlots = (w: Worker) => w.options.tuner.activityTaskSlotSupplier as { controller?: unknown };
    expect(activitySlots(own!)).toMatchObject({ type: 'resource-based' });
    expect(activitySlots(own!).controller).toBe(activitySlots(main).controller);
  });
});

test("a caller's slot count or tuner wins over DURABLE_AGENT_CPU_TARGET", async () => {
  await withCpuTarget('0.8', async () => {
    // The SDK refuses a tuner next to slot counts: a caller's count wins and the target is not applied.
    expect((await tunerOf({ maxConcurrentActivityTaskExecutions: 7 })).activityTaskSlotSupplier).toEqual({
      type: 'fixed-size',
      numSlots: 7,
    });
    expect((await tunerOf({ maxConcurrentWorkflowTaskExecutions: 5 })).activityTaskSlotSupplier?.type).toBe(
      'fixed-size',
    );
    const tuner = fixedTuner(7, 9);
    expect((await tunerOf({ tuner })).activityTaskSlotSupplier).toEqual(fixed(9));
  });
});

test('DURABLE_AGENT_CPU_TARGET is refused unless it is a share from 0.1 to 1', () => {
  for (const bad of ['0', '2', '5%', 'fast', '0.05', '80']) {
    expect(() => workerSettings({ DURABLE_AGENT_CPU_TARGET: bad })).toThrow(/DURABLE_AGENT_CPU_TARGET must be a share/);
  }
  expect(workerSettings({ DURABLE_AGENT_CPU_TARGET: '0.5' }).cpuTarget).toBe(0.5);
  expect(workerSettings({ DURABLE_AGENT_CPU_TARGET: '100%' }).cpuTarget).toBe(1);
  expect(workerSettings({}).cpuTarget).toBeUndefined();
});

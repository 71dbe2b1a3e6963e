import type { WorkflowHandle } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { AGENT_WORKFLOW_MODULES } from '../../src/worker/workflow-bundle';
import { noteSignal, noteUpdate } from '../fixtures/input-order-workflows';
import { eventType } from '../support/run-helpers';
import { inThreads, uniqueQueue } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * Outside input last (src/workflows/sdk/input-order.ts). Live, the SDK can hand a run an update in
 * an activation after the one that took a result from the same workflow task (a query answered from
 * a history that already holds the result, docs/contributing.md "Input from outside, last"), so the
 * update is recorded after the commands the result led to; rebuilt from history, the SDK hands both
 * in one activation, the update first. Here an update and a signal reach the server while no worker
 * runs, beside a timer that fired, so the next workflow task brings all three in one activation:
 * - taken last (the agent's order), the run records the timer's command before the update's
 *   acceptance, as a split delivery records it, and its history replays; the same history replayed
 *   in the SDK's order (input first) fails with the nondeterminism error the agent's sessions met;
 * - taken first (the SDK's order), the history records the acceptance first and does not replay
 *   in the agent's order: a build that changes the order is a new build (docs/upgrading.md).
 */
const { suite } = useWorkflowSuite('input-order');
const quietLogger = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };
const bundles: Record<'last' | 'first', string> = { last: '', first: '' };

beforeAll(async () => {
  for (const [order, file] of [
    ['last', 'input-order-workflows'],
    ['first', 'input-order-first-workflows'],
  ] as const) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve(`../fixtures/${file}`),
      preloadModules: [...AGENT_WORKFLOW_MODULES],
      logger: quietLogger,
    });
    bundles[order] = code;
  }
}, 120_000);

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never: ${what}`);
}

const eventTypes = async (handle: WorkflowHandle) => ((await handle.fetchHistory()).events ?? []).map(eventType);

/**
 * One run of the probe in the given order: its timer fires while no worker runs, an update and a
 * signal reach the server meanwhile, then a worker takes the workflow task that holds all three.
 */
async function runProbe(order: 'last' | 'first', workflow = 'inputOrderProbe', args: unknown[] = []) {
  const { client, nativeConnection } = suite.env;
  const taskQueue = uniqueQueue(`input-${order}`);
  const worker = () =>
    Worker.create({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundle: { code: bundles[order] },
      // No cache, so no sticky queue: the run's next workflow task goes to the next worker's pollers.
      maxCachedWorkflows: 0,
    });
  const handle = await (
    await worker()
  ).runUntil(async () => {
    const started = await client.workflow.start(workflow, { taskQueue, workflowId: taskQueue, args });
    await eventually(async () => (await eventTypes(started)).includes('TIMER_STARTED'), 'timer started');
    return started;
  });
  await eventually(async () => (await eventTypes(handle)).includes('TIMER_FIRED'), 'timer fired');
  const update = handle.executeUpdate(noteUpdate, { args: ['update'] });
  await handle.signal(noteSignal, 'signal');
  await eventually(async () => (await handle.describe()).raw.pendingWorkflowTask != null, 'a workflow task waits');
  // Time for the update to be admitted at the server before a worker polls (it is then delivered with the task).
  await new Promise((r) => setTimeout(r, 1_000));
  return (await worker()).runUntil(async () => {
    const result = (await handle.result()) as string[];
    const answer = await update.catch((err: Error) => err);
    const history = await handle.fetchHistory();
    const types = (history.events ?? []).map(eventType);
    /** The commands of the workflow task that took the timer, the update and the signal. */
    const last = types.slice(types.lastIndexOf('WORKFLOW_TASK_COMPLETED') + 1);
    return { result, history, last, answer };
  });
}

test('taken last, input beside a fired timer is recorded after its command, and replays only in that order', async () => {
  const run = await runProbe('last');
  expect(run.result).toEqual(['timer', 'signal', 'update']);
  // The update answers with the number of notes it found, its own included.
  expect(run.answer).toBe(3);
  expect(run.last).toEqual([
    'TIMER_STARTED',
    'TIMER_STARTED',
    'WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
    'WORKFLOW_EXECUTION_UPDATE_COMPLETED',
    'WORKFLOW_EXECUTION_COMPLETED',
  ]);
  await expect(
    Worker.runReplayHistory(inThreads({ workflowBundle: { code: bundles.last } }), run.history),
  ).resolves.toBeUndefined();
  await expect(
    Worker.runReplayHistory(inThreads({ workflowBundle: { code: bundles.first } }), run.history),
  ).rejects.toThrow(
    /Nondeterminism error: Update machine does not handle this event: HistoryEvent\(id: \d+, TimerStarted\)/,
  );
}, 60_000);

test('taken first (the SDK order), the acceptance is recorded first, and such a history does not replay in the agent order', async () => {
  const run = await runProbe('first');
  expect(run.result).toEqual(['signal', 'update', 'timer']);
  expect(run.answer).toBe(2);
  expect(run.last[0]).toBe('WORKFLOW_EXECUTION_UPDATE_ACCEPTED');
  await expect(
    Worker.runReplayHistory(inThreads({ workflowBundle: { code: bundles.first } }), run.history),
  ).resolves.toBeUndefined();
  await expect(
    Worker.runReplayHistory(inThreads({ workflowBundle: { code: bundles.last } }), run.history),
  ).rejects.toThrow(/Nondeterminism/);
}, 60_000);

test('a run that ends right after the result waits for the input that came with it (inputSettled)', async () => {
  // What a hand-over or a closing run does: the update and the signal are handled before the end, so a
  // message is carried to the next execution, not accepted after the snapshot and lost.
  const settled = await runProbe('last', 'inputOrderEnding', ['inputSettled']);
  expect(settled.result).toEqual(['timer', 'signal', 'update']);
  expect(settled.answer).toBe(3);
  await expect(
    Worker.runReplayHistory(inThreads({ workflowBundle: { code: bundles.last } }), settled.history),
  ).resolves.toBeUndefined();
  // Waiting for the handlers alone, the run ends before the held input is taken: the update is then
  // accepted after the run's last command (here its completion), which is what lost messages.
  const handlersOnly = await runProbe('last', 'inputOrderEnding', ['allHandlersFinished']);
  expect(handlersOnly.result).toEqual(['timer']);
}, 60_000);

import { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createActivities } from '../../src/activities';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { endSessionUpdate, sendMessageUpdate } from '../../src/shared';
import { defineTool, ToolRegistry } from '../../src/tools';
import { createAgentWorker, workerActivities } from '../../src/worker';
import { eventType, eventually, waitForState } from '../support/run-helpers';
import { inThreads, testAddress, testBundlePath, uniqueQueue } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * A message that comes with the result that makes a run hand over (continue as new) is carried to the
 * next execution (src/workflows/steps/hand-over.ts waits for `inputSettled`). The agent takes input
 * from outside last (src/workflows/sdk/input-order.ts): when one activation brings a tool's result and
 * a `sendMessage` update, the loop goes on with the result first, so it can reach the hand-over
 * before the update's handler has put the message in the inbox. Here the tool's result lands while no
 * worker runs the workflow, and the update reaches the server meanwhile, so the next workflow task
 * brings both in one activation; the run's own limit (`continueAsNewAfter.events`) is past by then.
 */
const { suite, start } = useWorkflowSuite('hand-over-input');

jest.setTimeout(60_000);

const { TimeoutType } = temporal.api.enums.v1;
const MESSAGE = 'a message that came with the hand-over';

/** A read-only tool without input (a regular activity): `name` and what it answers. */
const noInputTool = (name: string, execute: () => Promise<string>) =>
  defineTool({
    name,
    description: `The test's ${name} tool.`,
    inputSchema: z.strictObject({}),
    sideEffect: 'read_only',
    execute,
  });

/** A tool that holds its call until the test lets it go. */
function heldTool() {
  let started!: () => void;
  let release!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  const released = new Promise<void>((r) => (release = r));
  const tool = noInputTool('hold', async () => {
    started();
    await released;
    return 'held result';
  });
  return { tool, started: startedP, release };
}

test('a message that arrives with the result that triggers continue-as-new is taken into the next execution', async () => {
  const { client, nativeConnection } = suite.env;
  const taskQueue = uniqueQueue('hand-over-input');
  const held = heldTool();
  // Three quick iterations bring the history near the run's limit (50 events, the least it takes); the
  // fourth, the held call, takes it past: the loop hands over right after that result.
  const quick = noInputTool('quick', async () => 'quick result');
  const model = new ScriptedModel([
    ...[1, 2, 3].map(() => toolUse([{ name: 'quick', input: {} }])),
    toolUse([{ name: 'hold', input: {} }]),
    text('Got the message.'),
  ]);
  const deps = { models: () => model, tools: new ToolRegistry([quick, held.tool]) };

  // The workflow's worker: runs the workflow and its local activities, takes no activity task, and
  // keeps no run cached, so a restarted one gets the run's next workflow task from the shared queue.
  const workflowWorker = (connection: NativeConnection) =>
    createAgentWorker({
      connection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: testBundlePath(),
      deps,
      stickyActivities: false,
      workerOptions: { enableNonLocalActivities: false, maxCachedWorkflows: 0 },
    });
  // The activities' worker: the model call and the held tool run here, and go on while the workflow's is down.
  const activityWorker = await Worker.create({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    activities: workerActivities(createActivities(deps), undefined),
  });

  // Its own connection, closed once it stopped, so no poll of it lingers on the server to take the
  // run's next workflow task instead of the next worker.
  const firstConnection = await NativeConnection.connect({ address: testAddress() });
  let handle: Awaited<ReturnType<typeof start>> | undefined;
  try {
    await activityWorker.runUntil(async () => {
      const first = await workflowWorker(firstConnection);
      handle = await first.runUntil(async () => {
        const started = await start(taskQueue, { session: true, continueAsNewAfter: { events: 50 } });
        await held.started;
        // The limit must be crossed by the held call's result, not before: its result adds four
        // events (the call's start and completion, the next workflow task's scheduling and start).
        const sofar = (await started.fetchHistory()).events?.length ?? 0;
        if (sofar >= 50 || sofar + 4 < 50)
          throw new Error(`history at the held call: ${sofar} events; adjust the script`);
        return started;
      });
      await firstConnection.close();
      await handOverWithMessage(handle);
    });
  } finally {
    held.release();
    await firstConnection.close().catch(() => {});
    await handle?.terminate('test ended').catch(() => {});
  }

  async function handOverWithMessage(handle: Awaited<ReturnType<typeof start>>) {
    // No worker runs the workflow now. The update waits on the server; the tool's result lands beside it.
    const sent = handle.executeUpdate(sendMessageUpdate, { args: [{ message: MESSAGE }] });
    sent.catch(() => {});
    held.release();
    const firstRunId = handle.firstExecutionRunId;
    await eventually(
      async () =>
        ((await client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory()).events ?? []).map(eventType),
      // Four model calls and four tool calls done, the next workflow task waiting for a worker.
      (types) => {
        expect(types.filter((t) => t === 'ACTIVITY_TASK_COMPLETED')).toHaveLength(8);
        expect(types.at(-1)).toBe('WORKFLOW_TASK_SCHEDULED');
      },
    );
    // The update reaches the server before the next worker starts (it cannot take effect without one,
    // so a slower one fails the test rather than passing it): that worker's first task brings both.
    await new Promise((r) => setTimeout(r, 1000));

    const second = await workflowWorker(nativeConnection);
    await second.runUntil(async () => {
      expect(await sent).toMatchObject({ pendingMessages: 1 });
      const latest = client.workflow.getHandle(handle.workflowId);
      await waitForState(latest, (s) => s.status === 'awaiting_input' && s.pendingMessages === 0);
      expect(await latest.executeUpdate(endSessionUpdate, { args: [{}] })).toEqual({ status: 'completed' });
      expect((await handle.result()).exitReason).toBe('completed');
      expect(model.requests).toHaveLength(5);
    });

    // The first execution took the tool's result and the update in one workflow task, accepted the
    // update and continued as new; the message reached the model in the next execution.
    const history = (await client.workflow.getHandle(handle.workflowId, firstRunId).fetchHistory()).events ?? [];
    const types = history.map(eventType);
    expect(types.at(-1)).toBe('WORKFLOW_EXECUTION_CONTINUED_AS_NEW');
    const toolDone = types.lastIndexOf('ACTIVITY_TASK_COMPLETED');
    const accepted = types.indexOf('WORKFLOW_EXECUTION_UPDATE_ACCEPTED');
    expect(accepted).toBeGreaterThan(toolDone);
    expect(types.slice(toolDone, accepted).filter((t) => t === 'WORKFLOW_TASK_COMPLETED')).toHaveLength(1);
    // No other call after the held one, and no failed or timed-out workflow task: it handed over right there.
    expect(types.filter((t) => t === 'ACTIVITY_TASK_SCHEDULED')).toHaveLength(8);
    // (A task the first worker's sticky queue held may time out before it is started: not a failure.)
    const stuck = history
      .slice(toolDone)
      .filter(
        (e) =>
          e.workflowTaskFailedEventAttributes ||
          (e.workflowTaskTimedOutEventAttributes &&
            e.workflowTaskTimedOutEventAttributes.timeoutType !== TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START),
      );
    expect(stuck.map(eventType)).toEqual([]);
    // The message travels in the next execution's input (the carried inbox) ...
    const next = history.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.input?.payloads ?? [];
    expect(next.map((p) => Buffer.from(p.data ?? []).toString()).join('')).toContain(MESSAGE);
    // ... and reaches the model there, after the held result.
    const carried = JSON.stringify(model.requests[4]?.messages);
    expect(carried).toContain(MESSAGE);
    expect(carried).toContain('held result');

    // Each execution's history replays with the same bundle.
    const executions = [firstRunId, (await client.workflow.getHandle(handle.workflowId).describe()).runId];
    for (const runId of executions) {
      await Worker.runReplayHistory(
        inThreads({ workflowBundle: { codePath: testBundlePath() } }),
        await client.workflow.getHandle(handle.workflowId, runId).fetchHistory(),
        `${handle.workflowId}-${runId}`,
      );
    }
  }
});

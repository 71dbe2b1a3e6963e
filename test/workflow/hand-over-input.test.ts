import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { createActivities } from '../../src/activities';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { endSessionUpdate, sendMessageUpdate } from '../../src/shared';
import { defineTool, ToolRegistry } from '../../src/tools';
import { createAgentWorker, workerActivities } from '../../src/worker';
import { eventType, eventually, waitForState } from '../support/run-helpers';
import { testAddress, testBundlePath, uniqueQueue } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * A message that comes with the result that makes a run hand over (continue as new) is carried to the
 * next execution (src/workflows/steps/hand-over.ts waits for `inputSettled`). The agent takes input
 * from outside last (src/workflows/run/input-order.ts): when one activation brings a tool's result and
 * a `sendMessage` update, the loop goes on with the result first, so it can reach the hand-over
 * before the update's handler has put the message in the inbox. Here the tool's result lands while no
 * worker runs the workflow, and the update reaches the server meanwhile, so the next workflow task
 * brings both in one activation; the run's own limit (`continueAsNewAfter.events`) is past by then.
 */
const { suite, start } = useWorkflowSuite('hand-over-input');

jest.setTimeout(60_000);

const MESSAGE = 'a message that came with the hand-over';

/** A read-only tool that holds its call until the test lets it go. */
function heldTool() {
  let started!: () => void;
  let release!: () => void;
  const startedP = new Promise<void>((r) => (started = r));
  const released = new Promise<void>((r) => (release = r));
  const tool = defineTool({
    name: 'hold',
    description: 'Returns once the test lets it.',
    inputSchema: z.strictObject({}),
    sideEffect: 'read_only',
    async execute() {
      started();
      await released;
      return 'held result';
    },
  });
  return { tool, started: startedP, release };
}

test('a message that arrives with the result that triggers continue-as-new is taken into the next execution', async () => {
  const { client, nativeConnection } = suite.env;
  const taskQueue = uniqueQueue('hand-over-input');
  const held = heldTool();
  // Three quick iterations bring the history near the run's limit (50 events, the least it takes); the
  // fourth, the held call, takes it past: the loop hands over right after that result.
  const quick = defineTool({
    name: 'quick',
    description: 'Returns at once.',
    inputSchema: z.strictObject({}),
    sideEffect: 'read_only',
    execute: async () => 'quick result',
  });
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

  await activityWorker.runUntil(async () => {
    // Its own connection, closed once it stopped: a poll the server still held for it would take the
    // next workflow task and let it time out (10 s) instead of leaving it to the next worker.
    const firstConnection = await NativeConnection.connect({ address: testAddress() });
    const first = await workflowWorker(firstConnection);
    const handle = await first.runUntil(async () => {
      const started = await start(taskQueue, { session: true, continueAsNewAfter: { events: 50 } });
      await held.started;
      return started;
    });
    await firstConnection.close();
    // No worker runs the workflow now. The update waits on the server; the tool's result lands beside it.
    const sent = handle.executeUpdate(sendMessageUpdate, { args: [{ message: MESSAGE }] });
    sent.catch(() => {});
    await new Promise((r) => setTimeout(r, 1000));
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
    // Both are on the server before the next worker starts: its first task brings them together.
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
    const carried = JSON.stringify(model.requests[4]?.messages);
    expect(carried).toContain(MESSAGE);
    expect(carried).toContain('held result');

    // Each execution's history replays with the same bundle.
    const executions = [firstRunId, (await client.workflow.getHandle(handle.workflowId).describe()).runId];
    for (const runId of executions) {
      await Worker.runReplayHistory(
        { workflowBundle: { codePath: testBundlePath() } },
        await client.workflow.getHandle(handle.workflowId, runId).fetchHistory(),
        `${handle.workflowId}-${runId}`,
      );
    }
  });
});

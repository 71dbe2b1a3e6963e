import { randomUUID } from 'node:crypto';
import { ScriptedModel, delayed, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { AgentRunResult } from '../../src/shared';
import { durableAgent, listJson, statusJson } from '../cli/cli-helpers';
import { eventually } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import {
  decodeSearchAttribute,
  eventTypes,
  failedWorkflowTasks,
  query,
  temporal,
  temporalJson,
  waitForStatus,
} from './temporal-cli-helpers';

/**
 * The ends an operator brings about with the official `temporal` CLI — cancel, terminate, a run
 * timeout, reset — and continue-as-new, as Temporal's describe, the workflow's `state` query, the
 * `DurableAgentStatus` search attribute and durable-agent's `status` and `list` report them.
 */

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
const id = (label: string) => `tlife-${tag}-${label}`;
const forever: ScriptStep = delayed(120_000, text('never'));

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('tlife');
});
afterAll(async () => {
  await env?.close();
});

function start(workflowId: string, taskQueue: string, input: Record<string, unknown>, ...extra: string[]) {
  const args = ['workflow', 'start', '--type', 'agentWorkflow', '--task-queue', taskQueue, '-w', workflowId];
  return temporal([...args, '--input', JSON.stringify({ workspace, ...input }), ...extra]);
}

interface Described {
  workflowExecutionInfo: { status: string };
}
const describe = (workflowId: string) => temporalJson<Described>(['workflow', 'describe', '-w', workflowId]);
const storedStatus = (d: Described) => decodeSearchAttribute(d, 'DurableAgentStatus');

test('temporal workflow cancel: the run ends Canceled and every view says cancelled', async () => {
  const workflowId = id('cancel');
  await withWorker(env, { model: new ScriptedModel([forever]) }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi' })).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'running');
    const cancelled = await temporal(['workflow', 'cancel', '-w', workflowId]);
    expect(cancelled).toMatchObject({ code: 0, stdout: expect.stringContaining('Canceled workflow') });
    await eventually(
      () => describe(workflowId),
      (d) => expect(d.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_CANCELED'),
    );
    // The workflow ran its cancellation: the state it answers and the attribute it wrote say so.
    expect(await query(workflowId, 'state')).toMatchObject({ status: 'cancelled' });
    expect(storedStatus(await describe(workflowId))).toBe('cancelled');
    // Nothing drawn as pending forever: the model call's end is recorded.
    const types = await eventTypes(workflowId);
    expect(types.filter((t) => t === 'EVENT_TYPE_ACTIVITY_TASK_SCHEDULED').length).toBe(
      types.filter((t) => /EVENT_TYPE_ACTIVITY_TASK_(COMPLETED|FAILED|CANCELED|TIMED_OUT)/.test(t)).length,
    );
  });
  const printed = await temporal(['workflow', 'result', '-w', workflowId]);
  expect(printed.code).toBe(1);
  expect(printed.stdout).toMatch(/^\s+Status\s+CANCELED$/m);
  expect(await statusJson(workflowId)).toMatchObject({ status: 'cancelled', executionStatus: 'CANCELLED' });
  await eventually(
    () => listJson('--query', `WorkflowId = '${workflowId}'`),
    (runs) => expect(runs).toEqual([expect.objectContaining({ status: 'cancelled' })]),
  );
});

test('temporal workflow terminate: status and list say terminated, not running', async () => {
  const workflowId = id('terminate');
  await withWorker(env, { model: new ScriptedModel([forever]) }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi' })).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'running');
    const terminated = await temporal(['workflow', 'terminate', '-w', workflowId, '--reason', 'from the temporal CLI']);
    expect(terminated).toMatchObject({ code: 0, stdout: expect.stringContaining('Workflow terminated') });
  });
  const described = await describe(workflowId);
  expect(described.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_TERMINATED');
  // Workflow code cannot run on terminate: the attribute still says running. The CLI reconciles.
  expect(storedStatus(described)).toBe('running');
  expect(await statusJson(workflowId)).toMatchObject({
    status: 'terminated',
    executionStatus: 'TERMINATED',
    reason: 'terminated: from the temporal CLI',
  });
  const text = await durableAgent(['status', workflowId]);
  expect(text.stdout).toMatch(/^status +terminated$/m);
  expect(text.stdout).not.toMatch(/running/);
  await eventually(
    () => listJson('--query', `WorkflowId = '${workflowId}'`),
    (runs) => expect(runs).toEqual([expect.objectContaining({ status: 'terminated' })]),
  );
  expect(await listJson('--query', `WorkflowId = '${workflowId}'`, '--status', 'running')).toEqual([]);
});

test('temporal workflow start --run-timeout: the timed-out run is reported timed_out', async () => {
  const workflowId = id('timeout');
  await withWorker(env, { model: new ScriptedModel([forever]) }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi' }, '--run-timeout', '3s')).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'running');
    await eventually(
      () => describe(workflowId),
      (d) => expect(d.workflowExecutionInfo.status).toBe('WORKFLOW_EXECUTION_STATUS_TIMED_OUT'),
      15_000,
    );
  });
  expect(await statusJson(workflowId)).toMatchObject({ status: 'timed_out', executionStatus: 'TIMED_OUT' });
  await eventually(
    () => listJson('--query', `WorkflowId = '${workflowId}'`, '--status', 'timed_out'),
    (runs) => expect(runs).toHaveLength(1),
  );
  expect(await listJson('--query', `WorkflowId = '${workflowId}'`, '--status', 'running')).toEqual([]);
});

test('temporal workflow reset to an earlier workflow task: the reset run completes with the same result', async () => {
  const workflowId = id('reset');
  const glob: ScriptStep = toolUse([{ name: 'glob', input: { pattern: '*' } }]);
  // The reset run replays the first model call from history and calls the model again after it.
  const model = new ScriptedModel([glob, text('Found nothing much.'), text('Found nothing much.')]);
  await withWorker(env, { model }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'look around' })).code).toBe(0);
    const first = await temporalJson<{ runId: string; closeEvent: Record<string, { result?: AgentRunResult[] }> }>([
      'workflow',
      'result',
      '-w',
      workflowId,
    ]);
    const original = first.closeEvent.workflowExecutionCompletedEventAttributes?.result?.[0];
    expect(original).toMatchObject({ exitReason: 'completed', iterations: 2 });

    // The second completed workflow task: after the first model call, before the tool ran.
    const history = await temporalJson<{ events: Array<{ eventId: string; eventType: string }> }>([
      'workflow',
      'show',
      '-w',
      workflowId,
    ]);
    const tasks = history.events.filter((e) => e.eventType === 'EVENT_TYPE_WORKFLOW_TASK_COMPLETED');
    expect(tasks.length).toBeGreaterThan(2);
    const reset = await temporal([
      'workflow',
      'reset',
      '-w',
      workflowId,
      '--event-id',
      String(tasks[1]?.eventId),
      '--reason',
      'redo from the tool call',
    ]);
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain(`Resetting workflow ${workflowId} to event ID ${tasks[1]?.eventId}`);

    const again = await eventually(
      () =>
        temporalJson<{ runId: string; closeEvent: Record<string, { result?: AgentRunResult[] }> }>([
          'workflow',
          'result',
          '-w',
          workflowId,
        ]),
      (r) => expect(r.runId).not.toBe(first.runId),
    );
    expect(again.closeEvent.workflowExecutionCompletedEventAttributes?.result?.[0]).toEqual(original);
    expect(model.remaining).toBe(0);
    // The reset itself records a failed workflow task where the new run branches off; nothing else fails.
    expect(await failedWorkflowTasks(workflowId, again.runId)).toEqual(['WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW']);
    expect(await statusJson(workflowId)).toMatchObject({ status: 'completed', runId: again.runId });
  });
}, 60_000);

test('continue-as-new: describe, status and list follow the latest execution; the handed-over ones read continued', async () => {
  const workflowId = id('chain');
  const glob: ScriptStep = toolUse([{ name: 'glob', input: { pattern: '*' } }]);
  const model = new ScriptedModel([...new Array<ScriptStep>(12).fill(glob), forever]);
  await withWorker(env, { model }, async (taskQueue) => {
    expect((await start(workflowId, taskQueue, { prompt: 'hi', continueAsNewAfter: { events: 50 } })).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.iteration === 12, 30_000);
    const handedOver = await temporalJson<Array<{ execution: { runId: string }; status: string }>>([
      'workflow',
      'list',
      '--query',
      `WorkflowId = '${workflowId}' AND ExecutionStatus = 'ContinuedAsNew'`,
    ]);
    expect(handedOver.length).toBeGreaterThan(0);
    const live = await statusJson(workflowId);
    expect(live).toMatchObject({ status: 'running', source: 'query', iteration: 12 });
    expect(handedOver.map((r) => r.execution.runId)).not.toContain(live.runId);
    await eventually(
      () => listJson('--query', `WorkflowId = '${workflowId}'`, '--status', 'running'),
      (runs) => expect(runs.map((r) => r.runId)).toEqual([live.runId]),
    );
    const everything = await listJson('--query', `WorkflowId = '${workflowId}'`);
    for (const run of everything.filter((r) => r.runId !== live.runId)) {
      expect(run).toMatchObject({ status: 'continued', executionStatus: 'CONTINUED_AS_NEW' });
    }
    await temporal(['workflow', 'terminate', '-w', workflowId, '--reason', 'test over']);
  });
}, 60_000);

import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, type Duration } from '@temporalio/common';
import { randomUUID } from 'node:crypto';
import { ScriptedModel, delayed, fail, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { AgentRunInput, AgentRunResult } from '../../src/shared';
import { ErrorTypes, WORKFLOW_TYPE, stateQuery } from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { eventually, waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, uniqueQueue, withWorker, type TestEnv } from '../support/temporal';
import { durableAgent, listJson, statusJson, storedStatus } from './cli-helpers';

/**
 * `durable-agent status`, `list` and `result` reconcile what the workflow last wrote with what
 * Temporal knows: a run Temporal cancelled, terminated, timed out or continued as new never shows as
 * `running`, and a closed run answers at once with no worker up. Checked against the search
 * attributes and Temporal's own describe.
 */

let env: TestEnv;
let workspace: string;
const tag = randomUUID().slice(0, 8);
const id = (label: string) => `status-${tag}-${label}`;
const only = (workflowId: string) => `WorkflowId = '${workflowId}'`;

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('status');
});
afterAll(async () => {
  await env?.close();
});

function start(taskQueue: string, workflowId: string, input: Partial<AgentRunInput> = {}, runTimeout?: Duration) {
  return env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [{ prompt: 'work on it', model: 'scripted-status', workspace, ...input }],
    ...(runTimeout ? { workflowRunTimeout: runTimeout } : {}),
  });
}

/** A model call that waits (abortably) until the run is stopped. */
const forever: ScriptStep = delayed(120_000, text('never'));

test('a cancelled run ends Canceled, and status, state, the search attribute and list say cancelled', async () => {
  const workflowId = id('cancel');
  const model = new ScriptedModel([forever]);
  await withWorker(env, { model }, async (taskQueue) => {
    const handle = await start(taskQueue, workflowId);
    await waitForState(
      handle,
      (s) => s.status === 'running' && s.activeTools.length === 0 && model.requests.length > 0,
    );
    await handle.cancel();
    const ended = await handle.result().catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(WorkflowFailedError);
    expect((ended as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    // The workflow ran its cancellation: the state it answers and the attribute it wrote say so.
    expect((await handle.query(stateQuery)).status).toBe('cancelled');
    const description = await handle.describe();
    expect(description.status.name).toBe('CANCELLED');
    expect(storedStatus(description)).toBe('cancelled');
  });
  // No worker from here on: a closed run answers from history.
  const report = await statusJson(workflowId);
  // From the AgentRunResult the run kept (in its memo).
  expect(report).toMatchObject({ status: 'cancelled', executionStatus: 'CANCELLED', source: 'result' });
  expect(report.reason).toContain('cancelled');
  const text = await durableAgent(['status', workflowId]);
  expect(text.stdout).toMatch(/^status +cancelled$/m);
  expect(text.stdout).toMatch(/^temporal +cancelled$/m);

  // The run kept its AgentRunResult (in its memo): result --json prints it, and says how the run ended.
  const result = await durableAgent(['result', workflowId, '--json']);
  expect(result.code).toBe(1);
  expect(JSON.parse(result.stdout)).toMatchObject({ exitReason: 'cancelled', iterations: 0 });
  expect(result.stderr.trim()).toBe("run ended 'cancelled': cancelled by a Temporal client (workflow cancel)");

  await eventually(
    () => listJson('--query', only(workflowId)),
    (runs) => expect(runs).toEqual([expect.objectContaining({ status: 'cancelled', executionStatus: 'CANCELLED' })]),
  );
  expect(await listJson('--query', only(workflowId), '--status', 'running')).toEqual([]);
  expect(await listJson('--query', only(workflowId), '--status', 'cancelled')).toHaveLength(1);
});

test('a terminated run is reported terminated by status and list, though its attribute still says running', async () => {
  const workflowId = id('terminate');
  await withWorker(env, { model: new ScriptedModel([forever]) }, async (taskQueue) => {
    const handle = await start(taskQueue, workflowId);
    await waitForState(handle, (s) => s.status === 'running');
    await eventually(
      () => handle.describe(),
      (d) => expect(storedStatus(d)).toBe('running'),
    );
    await handle.terminate('operator pulled the plug');
  });
  const description = await env.client.workflow.getHandle(workflowId).describe();
  expect(description.status.name).toBe('TERMINATED');
  // Workflow code cannot run on terminate: the attribute keeps its last value. This is what the CLI reconciles.
  expect(storedStatus(description)).toBe('running');

  const report = await statusJson(workflowId);
  expect(report).toMatchObject({
    status: 'terminated',
    executionStatus: 'TERMINATED',
    source: 'search-attributes',
    model: 'scripted-status',
    iteration: 0,
    reason: 'terminated: operator pulled the plug',
  });
  expect(report.closeTime).not.toBeNull();

  await eventually(
    () => listJson('--query', only(workflowId)),
    (runs) => expect(runs).toEqual([expect.objectContaining({ status: 'terminated', executionStatus: 'TERMINATED' })]),
  );
  // The raw attribute matches `running`; the CLI's filter pairs it with the execution status.
  expect(await listJson('--query', only(workflowId), '--status', 'running')).toEqual([]);
  expect(await listJson('--query', only(workflowId), '--status', 'terminated')).toHaveLength(1);

  const result = await durableAgent(['result', workflowId]);
  expect(result.code).toBe(1);
  expect(result.stderr.trim()).toBe("error: run ended 'terminated': terminated: operator pulled the plug");
});

test('a run whose run timeout expired is reported timed_out, never running', async () => {
  const workflowId = id('timeout');
  await withWorker(env, { model: new ScriptedModel([forever]) }, async (taskQueue) => {
    const handle = await start(taskQueue, workflowId, {}, '3 seconds');
    await waitForState(handle, (s) => s.status === 'running');
    const ended = await handle.result().catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(WorkflowFailedError);
  });
  const description = await env.client.workflow.getHandle(workflowId).describe();
  expect(description.status.name).toBe('TIMED_OUT');
  expect(storedStatus(description)).toBe('running');

  expect(await statusJson(workflowId)).toMatchObject({
    status: 'timed_out',
    executionStatus: 'TIMED_OUT',
    reason: 'the workflow run timeout expired',
  });
  await eventually(
    () => listJson('--query', only(workflowId)),
    (runs) => expect(runs).toEqual([expect.objectContaining({ status: 'timed_out', executionStatus: 'TIMED_OUT' })]),
  );
  expect(await listJson('--query', only(workflowId), '--status', 'running')).toEqual([]);
  expect(await listJson('--query', only(workflowId), '--status', 'timed_out')).toHaveLength(1);
});

test('across continue-as-new, status follows the latest execution and the handed-over ones are never running', async () => {
  const workflowId = id('chain');
  const readDir: ScriptStep = toolUse([{ name: 'glob', input: { pattern: '*' } }]);
  // Enough iterations to pass 50 history events at least once, then a call that waits.
  const model = new ScriptedModel([...new Array<ScriptStep>(12).fill(readDir), forever]);
  await withWorker(env, { model }, async (taskQueue) => {
    const first = await start(taskQueue, workflowId, { continueAsNewAfter: { events: 50 } });
    const latest = env.client.workflow.getHandle(workflowId);
    await eventually(
      () => latest.describe(),
      (d) => expect(d.runId).not.toBe(first.firstExecutionRunId),
    );
    await waitForState(latest, (s) => s.iteration === 12 && model.remaining === 0, 30_000);

    const live = await statusJson(workflowId);
    expect(live).toMatchObject({ status: 'running', executionStatus: 'RUNNING', source: 'query', iteration: 12 });
    expect(live.runId).not.toBe(first.firstExecutionRunId);

    const executions = `${only(workflowId)} AND ExecutionStatus = 'ContinuedAsNew'`;
    const handedOver = await eventually(
      () => listJson('--query', executions),
      (runs) => {
        expect(runs.length).toBeGreaterThan(0);
        for (const run of runs) expect(run).toMatchObject({ status: 'continued', executionStatus: 'CONTINUED_AS_NEW' });
      },
    );
    // The old executions' attribute says so too (written before handing over).
    for (const run of handedOver) {
      expect(storedStatus(await env.client.workflow.getHandle(workflowId, run.runId).describe())).toBe('continued');
    }
    // `--status running` finds exactly the live execution; the default listing hides the handed-over ones.
    const running = await eventually(
      () => listJson('--query', only(workflowId), '--status', 'running'),
      (runs) => expect(runs.map((r) => r.runId)).toEqual([live.runId]),
    );
    expect(running).toHaveLength(1);
    expect((await listJson('--status', 'continued', '--limit', '1000')).map((r) => r.runId)).toEqual(
      expect.arrayContaining(handedOver.map((r) => r.runId)),
    );
    await latest.terminate('test over');
  });
}, 90_000);

test('a run whose agent failed ends Failed in Temporal, and result/status still give its AgentRunResult', async () => {
  const workflowId = id('failed');
  const model = new ScriptedModel([
    fail(ApplicationFailure.nonRetryable('the request is malformed', ErrorTypes.BadRequest)),
  ]);
  await withWorker(env, { model }, async (taskQueue) => {
    const handle = await start(taskQueue, workflowId);
    const ended = await handle.result().catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(WorkflowFailedError);
    const cause = (ended as WorkflowFailedError).cause as ApplicationFailure;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe(ErrorTypes.RunFailed);
    expect(cause.nonRetryable).toBe(true);
    expect(cause.details?.[0]).toMatchObject({ exitReason: 'failed', iterations: 0 });
  });
  expect((await env.client.workflow.getHandle(workflowId).describe()).status.name).toBe('FAILED');

  const result = await durableAgent(['result', workflowId, '--json']);
  expect(result.code).toBe(1);
  const printed = JSON.parse(result.stdout) as AgentRunResult;
  expect(printed).toMatchObject({ exitReason: 'failed', model: 'scripted-status' });
  expect(printed.error?.message).toContain('the request is malformed');
  expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^run ended 'failed': .*malformed/)]);

  const report = await statusJson(workflowId);
  expect(report).toMatchObject({ status: 'failed', executionStatus: 'FAILED', source: 'result' });
  expect(report.result).toEqual(printed);
  await eventually(
    () => listJson('--query', only(workflowId), '--status', 'failed'),
    (runs) => expect(runs).toEqual([expect.objectContaining({ status: 'failed', executionStatus: 'FAILED' })]),
  );
});

test('a completed run answers status from its result with no worker up', async () => {
  const workflowId = id('done');
  await withWorker(env, { model: new ScriptedModel([text('All done.')]) }, async (taskQueue) => {
    await (await start(taskQueue, workflowId)).result();
  });
  const report = await statusJson(workflowId);
  expect(report).toMatchObject({ status: 'completed', executionStatus: 'COMPLETED', source: 'result', iteration: 1 });
  expect(report.result).toMatchObject({ exitReason: 'completed', finalText: 'All done.' });
  expect(report.note).toBeUndefined();
});

test('an open run with no worker falls back to the search attributes and says why', async () => {
  const workflowId = id('no-worker');
  const handle = await start(uniqueQueue('status-idle'), workflowId);
  try {
    const report = await statusJson(workflowId);
    expect(report).toMatchObject({ status: 'running', executionStatus: 'RUNNING', source: 'search-attributes' });
    // Without waiting 10 s for an answer that cannot come: the server's record, saying so (issue 44).
    expect(report.note).toMatch(
      /^the run did not answer within \d+ ms \(its worker is busy, or none polls\); so this is the server's record at /,
    );
  } finally {
    await handle.terminate('test over');
  }
}, 30_000);

test('an update to a closed run says how the run ended, not "no such run"', async () => {
  const workflowId = id('closed-update');
  await withWorker(env, { model: new ScriptedModel([text('Done.')]) }, async (taskQueue) => {
    await (await start(taskQueue, workflowId)).result();
  });
  const sent = await durableAgent(['send', workflowId, 'more please']);
  expect(sent.code).toBe(1);
  expect(sent.stderr.trim()).toBe(`error: message not possible: run ${workflowId} has already ended ('completed')`);
  const ended = await durableAgent(['end', workflowId]);
  expect(ended.code).toBe(1);
  expect(ended.stderr.trim()).toBe(
    `error: end of session not possible: run ${workflowId} has already ended ('completed')`,
  );
  const missing = await durableAgent(['status', `${workflowId}-nope`]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/^error: no such run/);
});

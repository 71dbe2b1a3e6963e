import { randomUUID } from 'node:crypto';
import { main } from '../../src/cli/main';
import type { RunListing } from '../../src/cli/list-command';
import { listQuery } from '../../src/cli/list-command';
import { getRun, interruptRun, startRun } from '../../src/client';
import { ScriptedModel, delayed, text, toolUse } from '../../src/models/scripted';
import type { ModelProvider } from '../../src/models/types';
import { WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import { connectTestEnv, tempWorkspace, testAddress, withWorker, type TestEnv } from '../support/temporal';
import { eventually } from '../support/run-helpers';

/**
 * `durable-agent list` against the test server: real runs whose workflows keep the search
 * attributes current, read back through the CLI's entry point. Visibility is eventually
 * consistent, so every check polls until the listing matches.
 */

let env: TestEnv;
let workspace: string;
const savedAddress = process.env.TEMPORAL_ADDRESS;
const tag = randomUUID().slice(0, 8);
const queue = `test-list-${tag}`;
const idleQueue = `test-list-idle-${tag}`;
const id = (label: string) => `list-${tag}-${label}`;
/** Only this file's runs: its worker's queue and the queue no worker polls. */
const ours = `TaskQueue = '${queue}' OR TaskQueue = '${idleQueue}'`;

beforeAll(async () => {
  env = await connectTestEnv();
  workspace = await tempWorkspace('list');
  process.env.TEMPORAL_ADDRESS = testAddress();
});
afterAll(async () => {
  if (savedAddress === undefined) delete process.env.TEMPORAL_ADDRESS;
  else process.env.TEMPORAL_ADDRESS = savedAddress;
  await env?.close();
});

/** Runs the CLI and returns its exit code and what it printed on stdout. */
async function cli(...argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    const code = await main(argv);
    return { code, stdout };
  } finally {
    spy.mockRestore();
  }
}

async function listJson(...flags: string[]): Promise<RunListing[]> {
  const { code, stdout } = await cli('list', '--json', ...flags);
  expect(code).toBe(0);
  return JSON.parse(stdout) as RunListing[];
}

const byId = (runs: RunListing[]) => Object.fromEntries(runs.map((r) => [r.workflowId, r]));

function input(prompt: string, extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return { prompt, workspace, ...extra };
}

/** One model for all of this file's runs, answering by the model name each run asks for. */
function routerModel(): ModelProvider {
  const scripts: Record<string, ScriptedModel> = {
    'scripted-list-a': new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'echo hi' } }]), text('A done')]),
    'scripted-list-b': new ScriptedModel([
      toolUse([{ name: 'glob', input: { pattern: '*' } }]),
      text('B summary: stopped at the iteration limit'),
    ]),
    'unpriced-list-c': new ScriptedModel([text('C done')]),
    // Waits (abortably) until the test interrupts it.
    'scripted-list-e': new ScriptedModel([delayed(60_000, text('never'))]),
  };
  return {
    name: 'list-router',
    call(request, ctx) {
      const model = scripts[request.model];
      if (!model) throw new Error(`no script for model ${request.model}`);
      return model.call(request, ctx);
    },
  };
}

test('the default query lists agent runs and hides continued-as-new executions', () => {
  expect(listQuery({})).toBe("WorkflowType = 'agentWorkflow' AND ExecutionStatus != 'ContinuedAsNew'");
  expect(listQuery({ query: "TaskQueue = 'q'" })).toBe("TaskQueue = 'q'");
});

test('--status pairs DurableAgentStatus with the execution status, so a stale attribute never matches', () => {
  // Terminate, a run timeout and continue-as-new leave the attribute at `running`: only open executions count.
  expect(listQuery({ status: 'running' })).toBe(
    "WorkflowType = 'agentWorkflow' AND DurableAgentStatus = 'running' AND ExecutionStatus = 'Running'",
  );
  expect(listQuery({ status: 'completed' })).toBe(
    "WorkflowType = 'agentWorkflow' AND DurableAgentStatus = 'completed' AND ExecutionStatus = 'Completed'",
  );
  // Ends only Temporal records are found by Temporal's status alone.
  expect(listQuery({ status: 'terminated' })).toBe("WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'Terminated'");
  expect(listQuery({ status: 'timed_out' })).toBe("WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'TimedOut'");
  expect(listQuery({ status: 'cancelled' })).toBe("WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'Canceled'");
  expect(listQuery({ status: 'continued' })).toBe(
    "WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'ContinuedAsNew'",
  );
  // A failed agent ends the execution Failed; older runs completed with the attribute `failed`.
  expect(listQuery({ query: "TaskQueue = 'q' OR TaskQueue = 'r'", status: 'failed' })).toBe(
    "(TaskQueue = 'q' OR TaskQueue = 'r') AND " +
      "(ExecutionStatus = 'Failed' OR (DurableAgentStatus = 'failed' AND ExecutionStatus = 'Completed'))",
  );
});

test('bad --status and --limit values are usage errors that name the valid choices', async () => {
  await expect(cli('list', '--status', 'done')).rejects.toThrow(
    '--status must be one of running, awaiting_approval, awaiting_input, completed, interrupted, max_iterations, ' +
      "max_budget, refused, failed, cancelled, terminated, timed_out, continued; got 'done'",
  );
  await expect(cli('list', '--limit', '0')).rejects.toThrow('--limit must be at least 1, got 0');
  await expect(cli('list', '--limit', 'many')).rejects.toThrow("--limit must be a whole number, got 'many'");
});

test('list shows status, iterations, cost and model from the search attributes, and what Temporal knows otherwise', async () => {
  const client = env.client;
  // A run started without search attributes (another client; the helper sets them at start) that no
  // worker ever picks up has none: like a run from before they existed.
  const idle = await client.workflow.start(WORKFLOW_TYPE, {
    args: [input('never picked up')],
    workflowId: id('d'),
    taskQueue: idleQueue,
  });
  // Not an agent run: the default listing leaves it out.
  const other = await client.workflow.start('someOtherWorkflow', { taskQueue: idleQueue, workflowId: id('other') });

  await withWorker(env, { model: routerModel(), taskQueue: queue }, async () => {
    const a = await startRun(client, input('task A', { model: 'scripted-list-a' }), {
      workflowId: id('a'),
      taskQueue: queue,
    });
    const b = await startRun(client, input('task B', { model: 'scripted-list-b', maxIterations: 1 }), {
      workflowId: id('b'),
      taskQueue: queue,
    });
    const c = await startRun(client, input('task C', { model: 'unpriced-list-c' }), {
      workflowId: id('c'),
      taskQueue: queue,
    });
    const e = await startRun(client, input('task E', { model: 'scripted-list-e' }), {
      workflowId: id('e'),
      taskQueue: queue,
    });
    await Promise.all([a.result(), b.result(), c.result()]);

    // E is mid-call: the listing shows it running, at iteration 0, with its model.
    await eventually(
      () => listJson('--query', ours),
      (runs) => expect(byId(runs)[id('e')]).toMatchObject({ status: 'running', iterations: 0, costUsd: 0 }),
    );
    await interruptRun(getRun(client, id('e')), 'test over');
    await e.result();
  });
  await idle.terminate('test over');
  await other.terminate('test over');

  const runs = await eventually(
    () => listJson('--query', ours),
    (list) => {
      expect(list.map((r) => r.workflowId).sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'other'].map(id).sort());
      expect(byId(list)[id('e')]?.status).toBe('interrupted');
      expect(byId(list)[id('d')]?.status).toBe('terminated');
    },
  );
  const listed = byId(runs);
  expect(listed[id('a')]).toMatchObject({
    status: 'completed',
    executionStatus: 'COMPLETED',
    iterations: 2,
    costUsd: 0,
    model: 'scripted-list-a',
    taskQueue: queue,
  });
  expect(listed[id('b')]).toMatchObject({ status: 'max_iterations', iterations: 1, model: 'scripted-list-b' });
  expect(listed[id('c')]).toMatchObject({ status: 'completed', iterations: 1, model: 'unpriced-list-c' });
  expect(listed[id('e')]).toMatchObject({ status: 'interrupted', executionStatus: 'COMPLETED', iterations: 0 });
  expect(listed[id('d')]).toMatchObject({
    status: 'terminated',
    executionStatus: 'TERMINATED',
    iterations: null,
    costUsd: null,
    model: null,
  });
  for (const run of runs) {
    expect(Number.isNaN(Date.parse(run.startTime))).toBe(false);
    expect(run.closeTime).not.toBeNull();
  }

  // --status narrows to what the workflow wrote; --limit caps the count.
  const completed = await listJson('--query', ours, '--status', 'completed');
  expect(completed.map((r) => r.workflowId).sort()).toEqual([id('a'), id('c')]);
  expect(await listJson('--query', ours, '--limit', '2')).toHaveLength(2);

  // Without --query: agent runs of every queue (others' too), and nothing else.
  const everything = await listJson('--limit', '1000');
  const everyId = everything.map((r) => r.workflowId);
  expect(everyId).toEqual(expect.arrayContaining([id('a'), id('b'), id('c'), id('d'), id('e')]));
  expect(everyId).not.toContain(id('other'));

  // The table: one row per run, dashes where a run carries no attributes.
  const { code, stdout } = await cli('list', '--query', `WorkflowId = '${id('a')}' OR WorkflowId = '${id('d')}'`);
  expect(code).toBe(0);
  const lines = stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^ID\s+STATUS\s+ITER\s+COST\s+MODEL\s+STARTED$/);
  const row = (runId: string) => lines.find((l) => l.startsWith(runId))?.split(/\s{2,}/);
  expect(row(id('a'))).toEqual([id('a'), 'completed', '2', '$0', 'scripted-list-a', expect.stringMatching(/^\d{4}-/)]);
  expect(row(id('d'))).toEqual([id('d'), 'terminated', '-', '-', '-', expect.stringMatching(/^\d{4}-/)]);

  expect((await cli('list', '--query', `WorkflowId = 'no-such-run-${tag}'`)).stdout).toBe(
    `No runs match: WorkflowId = 'no-such-run-${tag}'\n`,
  );
}, 90_000);

test('a run on a model without a price lists its cost as unknown, never as 0', async () => {
  const model = new ScriptedModel([text('priceless', { usage: { inputTokens: 10, outputTokens: 5 } })]);
  const workflowId = id('unpriced');
  const result = await withWorker(env, { model }, async (taskQueue) =>
    (await startRun(env.client, input('how much?', { model: 'unpriced-model' }), { workflowId, taskQueue })).result(),
  );
  expect(result.costUsd).toBeNull();
  await eventually(
    () => listJson('--query', `WorkflowId = '${workflowId}'`),
    (runs) =>
      expect(runs).toEqual([expect.objectContaining({ status: 'completed', model: 'unpriced-model', costUsd: null })]),
    5_000,
  );
  const { stdout } = await cli('list', '--query', `WorkflowId = '${workflowId}'`);
  expect(stdout).toContain('cost unknown');
});

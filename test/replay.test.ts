import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
import { historyToJSON, type History } from '@temporalio/common/lib/proto-utils';
import { Worker, bundleWorkflowCode } from '@temporalio/worker';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TERMINAL_STATUSES, WORKFLOW_TYPE, runResultOfFailure } from '../src/shared';
import type { agentWorkflow } from '../src/workflows';
import { SCENARIOS, modelOf, writeFiles } from './replay/scenarios';
import { HISTORIES_DIR, loadRecordedHistories } from './support/recorded-histories';
import {
  connectTestEnv,
  inThreads,
  quietRuntime,
  tempWorkspace,
  testAddress,
  testBundlePath,
  withWorker,
  type TestEnv,
} from './support/temporal';
import { ScriptedModel, text, toolUse } from '../src/models/scripted';
import { RoutedModel } from './subagents/routed-model';

/**
 * Replay tests: histories of real runs, recorded once and committed, replayed against today's
 * workflow code. A change that would break runs in flight (non-determinism) fails here; such a
 * change ships as a new Worker Deployment version (docs/upgrading.md), or behind `patched()`.
 *
 * Record (a new file per history and label; older ones stay):
 * `DA_RECORD_HISTORIES=1 DA_RECORD_LABEL=<label> npx jest test/replay.test.ts`.
 *
 * 0.3.0 starts a new run with `firstModelCall` where 0.2.x scheduled the `prepareRun` local activity
 * (docs/upgrading.md, "0.3.0"), so it cannot replay the 0.2.x recordings of runs started that way:
 * they were retired when the corpus was recorded again as `*-v0.3.0.json`. That includes
 * `sticky-routing-v0.2.0.json`, recorded apart by 0.2.0 with sticky activities on, which has no 0.3.0
 * counterpart. Three 0.2.0 recordings stay and replay: a continued execution
 * (`continue-as-new-v0.2.0-execution-2.json`, which carries its context and prepares nothing) and the
 * subagents pair (a run offering `task`, as this parent and its child both do, starts with
 * `prepareRun` in 0.3.0 too).
 *
 * 0.3.1 (docs/upgrading.md, "0.3.1") replays every 0.3.0 recording; the corpus was recorded again as
 * `*-v0.3.1.json`, with a budgeted subagent tree (`subagents-budget-*`) whose calls reserve their cost.
 * 0.4.0 (docs/upgrading.md, "0.4.0") replays every 0.3.x recording; the corpus was recorded again as
 * `*-v0.4.0.json` (the tests' workers record with checkpoints off, as test/global-setup.ts sets them).
 */
const HISTORIES = HISTORIES_DIR;

const recordOnly = process.env.DA_RECORD_HISTORIES === '1' ? test : test.skip;

/** How a recorded run ended: its exit reason, also when the workflow itself failed or was cancelled. */
async function outcomeOf(handle: WorkflowHandle): Promise<string> {
  try {
    return (await handle.result()).exitReason;
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof CancelledFailure) return 'cancelled';
    return runResultOfFailure(err)?.exitReason ?? `threw ${String(err)}: ${String((err as Error).cause)}`;
  }
}

/** The canonical JSON history (as the CLI and the Web UI write it) of every execution of the run, in order. */
async function executionHistories(env: TestEnv, workflowId: string, firstRunId: string): Promise<string[]> {
  const histories: string[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: History = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.push(historyToJSON(history));
    const last = history.events?.[history.events.length - 1];
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

recordOnly.each(SCENARIOS.map((s) => [s.name, s] as const))('record: %s', async (name, scenario) => {
  const env = await connectTestEnv();
  const extra = scenario.deps?.();
  try {
    const workspace = await tempWorkspace(`record-${name}`);
    await writeFiles(workspace, scenario.files);
    const workflowId = `recorded-${name}-${Date.now()}`;
    const { prompt, ...rest } = scenario.input(workspace);
    const handle = await withWorker(env, { model: modelOf(scenario), deps: extra?.deps }, async (taskQueue) => {
      const started = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [{ prompt: prompt ?? name, model: 'scripted-demo', workspace, ...rest }],
      });
      await scenario.drive?.(started);
      expect(await outcomeOf(started)).toBe(scenario.exit);
      return started;
    });
    const histories = await executionHistories(env, workflowId, handle.firstExecutionRunId);
    if (scenario.input(workspace).continueAsNewAfter) expect(histories.length).toBeGreaterThan(1);
    const label = process.env.DA_RECORD_LABEL ?? new Date().toISOString().slice(0, 10);
    await fs.mkdir(HISTORIES, { recursive: true });
    for (const [i, json] of histories.entries()) {
      const suffix = histories.length > 1 ? `-execution-${i + 1}` : '';
      await fs.writeFile(path.join(HISTORIES, `${name}-${label}${suffix}.json`), json);
    }
  } finally {
    await extra?.close();
    await env.close();
  }
});

/**
 * Subagent trees: two subagents (one named) started in parallel; recorded once without a budget (the
 * children's spending comes back in their results) and once with `maxBudgetUsd` on a priced model
 * (0.3.1: each model call reserves its expected cost with the run that owns the budget, by signals).
 */
recordOnly.each([
  ['subagents', {}],
  ['subagents-budget', { model: 'claude-haiku-4-5', maxBudgetUsd: 5 }],
] as const)('record: %s, a run whose task calls start two subagents in parallel', async (prefix, extra) => {
  const env = await connectTestEnv();
  try {
    const workspace = await tempWorkspace('record-subagents');
    await fs.writeFile(path.join(workspace, 'README.md'), '# demo\nhello world\n');
    const parent = new ScriptedModel([
      toolUse([
        { id: 'toolu_s1', name: 'task', input: { prompt: 'child one: read the README', description: 'read' } },
        { id: 'toolu_s2', name: 'task', input: { prompt: 'child two: say hi', agent: 'greeter' } },
      ]),
      text('Both subagents answered.'),
    ]);
    const one = new ScriptedModel([
      toolUse([{ id: 'toolu_c1', name: 'read_file', input: { path: 'README.md' } }], { usage: { inputTokens: 50 } }),
      text('It says hello world.', { usage: { inputTokens: 60 } }),
    ]);
    const two = new ScriptedModel([text('hi', { usage: { inputTokens: 10 } })]);
    const model = new RoutedModel({ Delegate: parent, 'child one': one, 'child two': two });
    const workflowId = `recorded-subagents-${Date.now()}`;
    await withWorker(env, { model }, async (taskQueue) => {
      const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
        taskQueue,
        workflowId,
        args: [
          {
            prompt: 'Delegate to subagents',
            model: 'scripted-demo',
            workspace,
            tools: ['read_file', 'task'],
            ...extra,
            agents: { greeter: { description: 'Says hi', prompt: 'You greet.' } },
          },
        ],
      });
      expect((await handle.result()).exitReason).toBe('completed');
    });
    const label = process.env.DA_RECORD_LABEL ?? new Date().toISOString().slice(0, 10);
    // The parent's history and its first child's.
    for (const [id, name] of [
      [workflowId, `${prefix}-parent`],
      [`${workflowId}.task-1`, `${prefix}-child`],
    ]) {
      const json = execFileSync(process.env.DA_TEST_TEMPORAL_CLI!, [
        'workflow',
        'show',
        '--workflow-id',
        id!,
        '--address',
        testAddress(),
        '--output',
        'json',
      ]);
      const recorded = { workflowId: id, ...JSON.parse(json.toString('utf8')) };
      await fs.writeFile(path.join(HISTORIES, `${name}-${label}.json`), JSON.stringify(recorded, null, 2));
    }
  } finally {
    await env.close();
  }
});

async function replayFailures(workflowBundle: { code: string } | { codePath: string }): Promise<string[]> {
  quietRuntime();
  const failures: string[] = [];
  for await (const result of Worker.runReplayHistories(inThreads({ workflowBundle }), await loadRecordedHistories())) {
    if (result.error) failures.push(`${result.workflowId}: ${String(result.error)}`);
  }
  return failures;
}

test('recorded histories replay without non-determinism against the current workflow code', async () => {
  expect((await loadRecordedHistories()).length).toBeGreaterThan(0);
  expect(await replayFailures({ codePath: testBundlePath() })).toEqual([]);
});

test('the corpus has a recorded run for every scenario, and the scenarios end in every exit reason', async () => {
  const files = (await fs.readdir(HISTORIES)).filter((f) => f.endsWith('.json'));
  const missing = SCENARIOS.filter((s) => !files.some((f) => f.startsWith(`${s.name}-`))).map((s) => s.name);
  expect(missing).toEqual([]);
  expect(new Set(SCENARIOS.map((s) => s.exit))).toEqual(new Set(TERMINAL_STATUSES));
});

test('the replay check catches a workflow change that would break runs in flight', async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./fixtures/drifted-workflow'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  const failures = await replayFailures({ code });
  expect(failures.length).toBe((await loadRecordedHistories()).length);
  expect(failures[0]).toMatch(/[Nn]ondeterminism|DeterminismViolation|does not match/);
});

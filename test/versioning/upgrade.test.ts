import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { temporal } from '@temporalio/proto';
import { ScriptedModel, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import { WORKFLOW_TYPE, approveToolUpdate, sendMessageUpdate } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker, type AgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import { waitForState } from '../support/run-helpers';
import { setCurrentVersion } from './set-current';
import { connectTestEnv, tempWorkspace, testAddress, testBundlePath, type TestEnv } from '../support/temporal';

/**
 * The upgrade path on the real server (docs/upgrading.md): workers of two builds of one Worker
 * Deployment on one task queue. A run keeps its build's workflow code while another build is
 * current; new runs start on the current build. A continued execution asks to start on the current
 * build (AUTO_UPGRADE), which servers newer than 1.29 honour; this dev server (1.29.1) keeps it pinned.
 */
const deploymentName = `da-upgrade-${randomUUID().slice(0, 8)}`;
const taskQueue = `versioning-${randomUUID().slice(0, 8)}`;

let env: TestEnv;
const workers: { worker: AgentWorker; done: Promise<void>; connection: NativeConnection }[] = [];

beforeAll(async () => {
  env = await connectTestEnv();
});

afterAll(async () => {
  for (const w of workers) w.worker.shutdown();
  await Promise.all(workers.map((w) => w.done));
  for (const w of workers) await w.connection.close();
  await env?.close();
});

/** A worker of build `buildId` whose model answers `answers` in turn (then fails loudly). */
async function startWorker(buildId: string, steps: ScriptStep[]): Promise<ScriptedModel> {
  const model = new ScriptedModel(steps);
  // One worker per task queue and connection in a process: each build gets a connection of its own.
  const connection = await NativeConnection.connect({ address: testAddress() });
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: createDefaultRegistry() },
    // The process's own activity queue stays unversioned: exercised here on purpose.
    stickyActivities: true,
    identity: `worker-${buildId}`,
    deployment: { deploymentName, buildId },
  });
  workers.push({ worker, done: worker.run(), connection });
  return model;
}

const setCurrent = (buildId: string) => setCurrentVersion(deploymentName, buildId, { client: env.client, taskQueue });

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

async function eventsOf(workflowId: string, runId: string): Promise<HistoryEvent[]> {
  return (await env.client.workflow.getHandle(workflowId, runId).fetchHistory()).events ?? [];
}

/** The builds that completed the execution's workflow tasks, in order. */
const taskBuilds = (events: HistoryEvent[]) =>
  events
    .map((e) => e.workflowTaskCompletedEventAttributes)
    .filter((a) => !!a)
    .map((a) => a.deploymentVersion?.buildId ?? `(${a.identity})`);

/** The workers that started the execution's activities, in order. */
const activityWorkers = (events: HistoryEvent[]) =>
  events.map((e) => e.activityTaskStartedEventAttributes?.identity).filter((id): id is string => !!id);

async function pinnedBuild(handle: WorkflowHandle): Promise<string | undefined> {
  const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
  return info?.deploymentVersion?.buildId ?? undefined;
}

/**
 * Whether the server starts a continued execution on the current build when the workflow asks for it
 * (AUTO_UPGRADE): Temporal after 1.29. The test runs on the embedded 1.29.1 dev server by default; with
 * DA_TEST_EXTERNAL_TEMPORAL_ADDRESS it runs on a server of your own (docs/upgrading.md#testing-it).
 */
async function upgradesAtContinueAsNew(): Promise<boolean> {
  const { serverVersion } = await env.connection.workflowService.getSystemInfo({});
  const [major = 0, minor = 0] = (serverVersion ?? '').split('.').map(Number);
  return major > 1 || (major === 1 && minor >= 30);
}

const currentRunId = async (workflowId: string) => (await env.client.workflow.getHandle(workflowId).describe()).runId;

test('a run keeps its build while a newer one is current, its next execution after continue-as-new starts on the current build (Temporal after 1.29; 1.29 keeps it pinned), and new runs start on the current build', async () => {
  const workspace = await tempWorkspace('versioning');
  const modelA = await startWorker('A', [
    toolUse([{ id: 'toolu_v1', name: 'write_file', input: { path: 'a.txt', content: 'a\n' } }]),
    ...Array.from({ length: 10 }, (_, i) => text(`A answers ${i + 1}`)),
  ]);
  await setCurrent('A');

  const workflowId = `versioned-session-${randomUUID().slice(0, 8)}`;
  const first = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId,
    args: [
      {
        prompt: 'Write a.txt',
        model: 'scripted-demo',
        workspace,
        session: true,
        approveMutating: true,
        continueAsNewAfter: { events: 50 },
      },
    ],
  });
  await waitForState(first, (s) => s.pendingApprovals.length === 1);
  expect(await pinnedBuild(first)).toBe('A');

  // Build B deploys and becomes current while the run waits for an approval.
  const modelB = await startWorker(
    'B',
    Array.from({ length: 10 }, (_, i) => text(`B answers ${i + 1}`)),
  );
  await setCurrent('B');

  // The decision is taken by the run's own build: its workflow task and the approved tool run on A.
  await first.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_v1' }] });
  const session = env.client.workflow.getHandle(workflowId);
  // Messages until the session hands over (its history passes 50 events, or the new target asks for it).
  for (let i = 0; i < 8 && (await currentRunId(workflowId)) === first.firstExecutionRunId; i++) {
    await waitForState(session, (s) => s.status === 'awaiting_input');
    if ((await currentRunId(workflowId)) !== first.firstExecutionRunId) break;
    await session.executeUpdate(sendMessageUpdate, { args: [{ message: `message ${i + 1}` }] });
  }
  const secondRunId = await currentRunId(workflowId);
  expect(secondRunId).not.toBe(first.firstExecutionRunId);

  const before = await eventsOf(workflowId, first.firstExecutionRunId);
  expect(new Set(taskBuilds(before))).toEqual(new Set(['A']));
  expect(activityWorkers(before)).toContain('worker-A');
  expect(activityWorkers(before)).not.toContain('worker-B');
  expect(before.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();

  // The continued execution asks to start on the current build (AUTO_UPGRADE). Temporal after 1.29
  // does so: the session goes on on B, with B's model. Temporal 1.29 (the embedded dev server) carries
  // a pinned run's version into its continued execution instead: it goes on on A (docs/upgrading.md).
  const upgrades = await upgradesAtContinueAsNew();
  const [build, model, other] = upgrades ? ['B', modelB, 'worker-A'] : ['A', modelA, 'worker-B'];
  await waitForState(session, (s) => s.status === 'awaiting_input');
  const answered = model.requests.length;
  await session.executeUpdate(sendMessageUpdate, { args: [{ message: 'and now?' }] });
  await waitForState(session, (s) => s.status === 'awaiting_input' && model.requests.length > answered);
  const after = await eventsOf(workflowId, secondRunId);
  expect(new Set(taskBuilds(after))).toEqual(new Set([build]));
  expect(activityWorkers(after)).not.toContain(other);
  expect(await pinnedBuild(env.client.workflow.getHandle(workflowId, secondRunId))).toBe(build);
  if (!upgrades) expect(modelB.requests).toHaveLength(0);

  // A run started now goes to B.
  const fresh = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `versioned-new-${randomUUID().slice(0, 8)}`,
    args: [{ prompt: 'Hello', model: 'scripted-demo', workspace }],
  });
  expect((await fresh.result()).finalText).toMatch(/^B answers/);
  expect(await pinnedBuild(fresh)).toBe('B');
  expect(new Set(taskBuilds(await eventsOf(fresh.workflowId, fresh.firstExecutionRunId)))).toEqual(new Set(['B']));
}, 180_000);

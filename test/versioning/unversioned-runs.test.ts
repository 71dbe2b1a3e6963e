import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { WORKFLOW_TYPE, approveToolUpdate } from '../../src/shared';
import { createDefaultRegistry } from '../../src/tools';
import type { AgentDeployment } from '../../src/worker/deployment';
import { createAgentWorker } from '../../src/worker';
import type { agentWorkflow } from '../../src/workflows';
import { waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, testAddress, testBundlePath } from '../support/temporal';
import { setCurrentVersion } from './set-current';

/**
 * Why 0.1.x runs cannot simply stay behind when 0.2.0 becomes a current version (docs/upgrading.md):
 * a run started by an unversioned worker (every 0.1.x worker is one) is not pinned, so once the task
 * queue has a current version its next workflow task goes there. A 0.2.0 worker cannot replay a 0.1.x
 * history, so those runs must drain first or stay on a task queue of their own.
 */
test('a run started on an unversioned worker moves to the current version at its next workflow task', async () => {
  const env = await connectTestEnv();
  const deploymentName = `da-unversioned-${randomUUID().slice(0, 8)}`;
  const taskQueue = `unversioned-${randomUUID().slice(0, 8)}`;
  const workers: { shutdown(): void; done: Promise<void>; connection: NativeConnection }[] = [];
  const startWorker = async (name: string, deployment: AgentDeployment | false, model: ScriptedModel) => {
    const connection = await NativeConnection.connect({ address: testAddress() });
    const worker = await createAgentWorker({
      connection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: testBundlePath(),
      deps: { models: () => model, tools: createDefaultRegistry() },
      stickyActivities: false,
      identity: name,
      deployment,
    });
    workers.push({ shutdown: () => worker.shutdown(), done: worker.run(), connection });
  };
  try {
    await startWorker(
      'worker-unversioned',
      false,
      new ScriptedModel([toolUse([{ id: 'toolu_u1', name: 'write_file', input: { path: 'u.txt', content: 'u' } }])]),
    );
    const handle = await env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
      taskQueue,
      workflowId: `unversioned-${randomUUID().slice(0, 8)}`,
      args: [
        {
          prompt: 'Write u.txt',
          model: 'scripted-demo',
          workspace: await tempWorkspace('unversioned'),
          approveMutating: true,
        },
      ],
    });
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);

    await startWorker('worker-B', { deploymentName, buildId: 'B' }, new ScriptedModel([text('B answers')]));
    await setCurrentVersion(deploymentName, 'B', { client: env.client, taskQueue });
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_u1' }] });

    expect((await handle.result()).finalText).toBe('B answers');
    const events = (await handle.fetchHistory()).events ?? [];
    const tasks = events.map((e) => e.workflowTaskCompletedEventAttributes?.identity).filter((id) => !!id);
    expect(tasks[0]).toBe('worker-unversioned');
    expect(tasks.at(-1)).toBe('worker-B');
  } finally {
    for (const w of workers) w.shutdown();
    await Promise.all(workers.map((w) => w.done));
    for (const w of workers) await w.connection.close();
    await env.close();
  }
}, 120_000);

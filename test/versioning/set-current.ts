import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { testAddress } from '../support/temporal';

const run = promisify(execFile);
const { TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY } = temporal.api.enums.v1.TaskQueueType;

/**
 * `temporal worker deployment set-current-version`, as an operator runs it, once the build's workers
 * poll; then waits until `taskQueue` (workflow and activity side) routes to it. The command returns
 * before the task queue's partitions have the new routing (a few hundred ms on a loaded machine),
 * and a task dispatched in between still goes by the old one.
 */
export async function setCurrentVersion(
  deploymentName: string,
  buildId: string,
  routedOn?: { client: Client; taskQueue: string },
): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await run(process.env.DA_TEST_TEMPORAL_CLI!, [
        'worker',
        'deployment',
        'set-current-version',
        '--deployment-name',
        deploymentName,
        '--build-id',
        buildId,
        '--address',
        testAddress(),
        '--yes',
      ]);
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  if (!routedOn) return;
  for (const taskQueueType of [TASK_QUEUE_TYPE_WORKFLOW, TASK_QUEUE_TYPE_ACTIVITY]) {
    for (;;) {
      const described = await routedOn.client.workflowService.describeTaskQueue({
        namespace: routedOn.client.options.namespace,
        taskQueue: { name: routedOn.taskQueue },
        taskQueueType,
      });
      if (described.versioningInfo?.currentDeploymentVersion?.buildId === buildId) break;
      if (Date.now() > deadline) throw new Error(`task queue ${routedOn.taskQueue} never routed to build ${buildId}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

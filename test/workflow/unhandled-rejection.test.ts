import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { AGENT_WORKFLOW_MODULES } from '../../src/worker/workflow-bundle';
import { uniqueQueue } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * The agent's bundles answer the SDK's promise hook lookups themselves (`cheapHookLookups`,
 * src/workflows/sdk/promise-stacks.ts). The SDK's unhandled-rejection handler uses the same lookup to
 * find which run a rejected promise belongs to: when it finds none, it throws on the workflow thread
 * and every run of the worker goes down with it. Here, with the agent's preloaded modules, a run
 * that leaves a rejection unhandled fails its own workflow task, and a run waiting beside it on the
 * same thread finishes when told to, afterwards.
 */
const { suite } = useWorkflowSuite('unhandled-rejection');

test('an unhandled rejection fails the workflow task of its own run; the run beside it finishes', async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../fixtures/unhandled-rejection-workflows'),
    preloadModules: [...AGENT_WORKFLOW_MODULES],
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  const taskQueue = uniqueQueue('unhandled');
  const worker = await Worker.create({
    connection: suite.env.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundle: { code },
  });
  const { client } = suite.env;
  await worker.runUntil(async () => {
    const quiet = await client.workflow.start('waitsQuietly', {
      taskQueue,
      workflowId: `${taskQueue}-quiet`,
    });
    const leaking = await client.workflow.start('leavesRejectionUnhandled', {
      taskQueue,
      workflowId: `${taskQueue}-leaking`,
    });
    let failure: string | undefined;
    for (let i = 0; i < 100 && failure === undefined; i++) {
      const history = await leaking.fetchHistory();
      failure =
        history.events?.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure
          ?.message ?? undefined;
      if (failure === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(failure).toMatch(/Unhandled Promise rejection.*left unhandled on purpose/);
    // The run beside it was waiting on the same thread all along; it is told to finish only now.
    await quiet.signal('finish');
    expect(await quiet.result()).toBe('quiet run finished');
    await leaking.terminate('test over');
  });
});

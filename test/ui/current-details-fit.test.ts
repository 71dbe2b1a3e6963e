import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { getRun, interruptRun, startRun } from '../../src/client';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { webUiLink } from '../../src/server/dev-server';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { waitForState } from '../support/run-helpers';
import { quietRuntime, tempWorkspace, testBundlePath } from '../support/temporal';
import {
  describeWithChromium,
  launchChromium,
  markdownHeights,
  renderedUnder,
  save,
  startUiServer,
  suiteName,
} from './ui-support';

/**
 * Current Details must fit the Web UI's frame for it (2.42.1, in the temporal CLI 1.5.1): found by a
 * hostile-client review, four blank-line paragraphs needed 152 px where 122 px show, so the last
 * line was cut. Now it is one paragraph with hard line breaks, `running:` folded into the status line.
 */
describeWithChromium(suiteName('Current Details fits its frame'), () => {
  test('Current Details of a run awaiting approval fits its frame', async () => {
    quietRuntime();
    const [server, browser] = await Promise.all([startUiServer(), launchChromium()]);
    process.env.TEMPORAL_UI_URL = server.uiBase;
    const connection = await Connection.connect({ address: server.address });
    const nativeConnection = await NativeConnection.connect({ address: server.address });
    const client = new Client({ connection });
    const model = new ScriptedModel([
      toolUse([
        { name: 'bash', input: { command: 'sleep 120' } },
        { name: 'write_file', input: { path: 'n.txt', content: 'x' } },
      ]),
      text('never'),
    ]);
    const taskQueue = `repro-details-${Date.now()}`;
    const worker = await createAgentWorker({
      connection: nativeConnection,
      namespace: 'default',
      taskQueue,
      workflowBundlePath: testBundlePath(),
      deps: { models: () => model, tools: createDefaultRegistry() },
    });
    const workerDone = worker.run();
    const workflowId = `repro-details-${Date.now()}`;
    try {
      const input = {
        prompt: 'x',
        workspace: await tempWorkspace('repro-details'),
        permissions: { write_file: 'ask' as const },
      };
      const handle = await startRun(client, input, { workflowId, taskQueue });
      await waitForState(handle, (s) => s.pendingApprovals.length === 1 && s.activeTools.includes('bash'));
      const page = await browser.context.newPage();
      await page.goto(webUiLink('default', workflowId, handle.firstExecutionRunId));
      await page.getByTestId('user-metadata-tab').click();
      await renderedUnder(page, 'Current Details', (t) => t.includes('running: bash'));
      await save(page, 'repro-current-details-clipped');
      const { shown, needed } = await markdownHeights(page, 'Current Details');
      expect(needed).toBeLessThanOrEqual(shown);
    } finally {
      await interruptRun(getRun(client, workflowId), 'test over').catch(() => undefined);
      await getRun(client, workflowId)
        .result()
        .catch(() => undefined);
      worker.shutdown();
      await workerDone;
      await browser.close();
      await connection.close();
      await nativeConnection.close();
      await server.stop();
    }
  }, 120_000);
});

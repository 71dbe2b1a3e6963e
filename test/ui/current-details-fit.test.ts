import { startRun } from '../../src/client';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { webUiLink } from '../../src/server/dev-server';
import { waitForState } from '../support/run-helpers';
import { tempWorkspace } from '../support/temporal';
import { describeWithChromium, markdownHeights, renderedUnder, save, suiteName } from './ui-support';
import { startUiStack } from './ui-stack';

/**
 * Current Details must fit the Web UI's frame for it (2.42.1, in the temporal CLI 1.5.1): found by a
 * hostile-client review, four blank-line paragraphs needed 152 px where 122 px show, so the last
 * line was cut. Now it is one paragraph with hard line breaks, `running:` folded into the status line.
 */
describeWithChromium(suiteName('Current Details fits its frame'), () => {
  test('Current Details of a run awaiting approval fits its frame', async () => {
    const model = new ScriptedModel([
      toolUse([
        { name: 'bash', input: { command: 'sleep 120' } },
        { name: 'write_file', input: { path: 'n.txt', content: 'x' } },
      ]),
      text('never'),
    ]);
    const stack = await startUiStack('details-fit', model);
    const { browser, client, taskQueue } = stack;
    const workflowId = `details-fit-${Date.now()}`;
    try {
      const input = {
        prompt: 'x',
        workspace: await tempWorkspace('details-fit'),
        permissions: { write_file: 'ask' as const },
      };
      const handle = await startRun(client, input, { workflowId, taskQueue });
      await waitForState(handle, (s) => s.pendingApprovals.length === 1 && s.activeTools.includes('bash'));
      const page = await browser.context.newPage();
      await page.goto(webUiLink('default', workflowId, handle.firstExecutionRunId));
      await page.getByTestId('user-metadata-tab').click();
      await renderedUnder(page, 'Current Details', (t) => t.includes('running: bash'));
      await save(page, 'current-details-fit');
      const { shown, needed } = await markdownHeights(page, 'Current Details');
      expect(needed).toBeLessThanOrEqual(shown);
    } finally {
      await stack.close(workflowId);
    }
  }, 120_000);
});

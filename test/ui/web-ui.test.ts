import { Client } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { startRun } from '../../src/client';
import { ScriptedModel, delayed, text, toolUse } from '../../src/models/scripted';
import { webUiLink } from '../../src/server/dev-server';
import { eventually } from '../support/run-helpers';
import { tempWorkspace } from '../support/temporal';
import { UI_TIMEOUT_MS, describeWithChromium, renderedUnder, save, suiteName, type Browser } from './ui-support';
import { startUiStack, type UiStack } from './ui-stack';

/**
 * The Temporal Web UI, checked in a real browser: an own dev server WITH the UI (in memory, free
 * ports), a worker on a scripted model, a run that called bash and read_file and now waits in its
 * second model call, and Debian's Chromium driven headless by playwright-core (no browser download).
 * Screenshots land in test-artifacts/. Skipped only when /usr/bin/chromium is missing (.ci/run
 * installs it).
 */
describeWithChromium(suiteName('Temporal Web UI'), () => {
  let stack: UiStack | undefined;
  let client: Client;
  let browser: Browser;
  const run = { workflowId: `ui-run-${Date.now()}`, link: '', workspace: '' };

  beforeAll(async () => {
    // A run that called bash and read_file, and now waits in its second model call (so it is
    // running, with live details) until afterAll interrupts it.
    run.workspace = await tempWorkspace('ui');
    await fs.writeFile(path.join(run.workspace, 'notes.txt'), 'remember the milk\n');
    const model = new ScriptedModel([
      toolUse([
        { name: 'bash', input: { command: 'echo hello from bash' } },
        { name: 'read_file', input: { path: 'notes.txt' } },
      ]),
      delayed(120_000, text('never')),
    ]);
    stack = await startUiStack('ui', model);
    ({ browser, client } = stack);
    const taskQueue = stack.taskQueue;
    const handle = await startRun(
      client,
      { prompt: 'Check the notes in the workspace\nand say hello.', model: 'scripted-ui', workspace: run.workspace },
      { workflowId: run.workflowId, taskQueue },
    );
    // The link the CLI prints, pointed at this server's UI by TEMPORAL_UI_URL.
    run.link = webUiLink('default', run.workflowId, handle.firstExecutionRunId);
    await eventually(
      async () => model.requests.length,
      (n) => expect(n).toBe(2),
      UI_TIMEOUT_MS,
    );
  }, 240_000);

  afterAll(async () => {
    await stack?.close(run.link ? run.workflowId : undefined);
  });

  test("the event history shows the run summary (the prompt's first line) and every activity's summary", async () => {
    const page = await browser.context.newPage();
    await page.goto(run.link);
    // The table labels each event's details; a summary is a "Summary" label followed by its value.
    const summaries = page.locator('xpath=//tr//p[normalize-space()="Summary"]/following-sibling::div[1]');
    const shown = await eventually(
      () => summaries.allInnerTexts(),
      (texts) => expect(texts.map((t) => t.trim())).toEqual(expect.arrayContaining(EXPECTED_SUMMARIES)),
      UI_TIMEOUT_MS,
    );
    // The workflow's summary is on its first event, and it is only the prompt's first line.
    const started = page.locator('tr', { hasText: 'Workflow Execution Started' });
    expect(await started.innerText()).toContain('Check the notes in the workspace');
    expect(await started.innerText()).not.toContain('and say hello');
    // The timeline names each (server-side) activity by type and summary. read_file runs as a local
    // activity: it has no timeline bar, and its summary is the marker's, checked in the table above.
    const timeline = (await page.locator('svg text').allTextContents()).map((t) => t.trim());
    expect(timeline).toEqual(expect.arrayContaining(['durableAgent.runTool • bash: echo hello from bash']));
    // Run start goes with the first model call (the label may be cut to the bar's width).
    expect(timeline.some((t) => t.startsWith('durableAgent.firstModelCall • assemble context'))).toBe(true);
    expect(shown.length).toBeGreaterThanOrEqual(EXPECTED_SUMMARIES.length);
    await save(page, 'web-ui-history');
  }, 60_000);

  test('the User Metadata tab shows the summary, the static details, the activities and the live current details', async () => {
    const page = await browser.context.newPage();
    await page.goto(run.link);
    await page.getByTestId('user-metadata-tab').click();

    expect(await renderedUnder(page, 'Summary', (t) => t.includes('Check the notes'))).toBe(
      'Check the notes in the workspace',
    );
    const details = await renderedUnder(page, 'Details', (t) => t.includes('Model'));
    expect(details).toContain('Model: scripted-ui');
    expect(details).toContain('Limits: 200 iterations · no budget limit · 8192 max tokens per model call');
    expect(details).toContain(`Workspace: ${run.workspace}`);
    expect(details).toContain('Tools: bash, read_file, write_file, edit_file, glob, grep');

    const events = page.locator(
      'xpath=//h3[normalize-space()="Events with Metadata"]/following::span[@class="text-sm"]',
    );
    await eventually(
      () => events.allInnerTexts(),
      (texts) =>
        expect(texts).toEqual([
          // Run start (the context and hooks) goes with the first model call: one activity.
          'assemble context · model scripted-ui · iteration 1',
          'bash: echo hello from bash',
          'read_file notes.txt',
          'model scripted-ui · iteration 2',
        ]),
      UI_TIMEOUT_MS,
    );

    // Current details come from the running workflow (setCurrentDetails), through a query.
    const current = await renderedUnder(page, 'Current Details', (t) => t.includes('iteration'));
    expect(current).toContain('running · iteration 1 / 200 · model scripted-ui');
    // Dollar signs would be math in the UI's markdown: the cost is written in USD.
    expect(current).toContain('cost 0.0000 USD');
    await save(page, 'web-ui-user-metadata');
  }, 60_000);
});

const EXPECTED_SUMMARIES = [
  'Check the notes in the workspace',
  'assemble context · model scripted-ui · iteration 1',
  'bash: echo hello from bash',
  'read_file notes.txt',
  'model scripted-ui · iteration 2',
];

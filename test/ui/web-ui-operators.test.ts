import { Client } from '@temporalio/client';
import { startRun } from '../../src/client';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { webUiLink } from '../../src/server/dev-server';
import { costOf, type AgentRunState } from '../../src/shared';
import { eventually, waitForState } from '../support/run-helpers';
import { tempWorkspace } from '../support/temporal';
import {
  UI_TIMEOUT_MS,
  describeWithChromium,
  markdownUnder,
  renderedUnder,
  save,
  suiteName,
  type Browser,
} from './ui-support';
import { startUiStack, type UiStack } from './ui-stack';

/**
 * What an operator sees in the Web UI while a run needs them: one turn runs a slow bash command
 * (allowed) and asks approval for a write_file (permission `ask`), on a priced model with a budget.
 * Current Details must put the pending approval first and render the cost as text (the UI's
 * markdown once turned `$0.0070 of $2` into LaTeX); Pending Activities must show the running bash
 * call's heartbeat details (tool, call, elapsed seconds), not `null`.
 */
const MODEL = 'claude-sonnet-5-5';
const USAGE = { inputTokens: 1_000, outputTokens: 500 };
const BUDGET_USD = 2;
/** A prompt whose first line is markdown by accident: math, emphasis, HTML, a list marker. */
const PROMPT_LINE = '- Build for $5, not $10: *fast* <b>now</b> `make` [docs](x)';

/** How the UI's markdown renders a formula (`$…$` becomes `\(…\)` in a span of class math). */
const MATH_NODES = '.math, .katex, math, mjx-container';

describeWithChromium(suiteName('Web UI for operators'), () => {
  let stack: UiStack | undefined;
  let browser: Browser;
  let client: Client;
  let link = '';
  let state: AgentRunState;
  const workflowId = `ui-operators-${Date.now()}`;

  beforeAll(async () => {
    const workspace = await tempWorkspace('ui-operators');
    const model = new ScriptedModel([
      toolUse(
        [
          { name: 'bash', input: { command: 'sleep 120 # slow-build' } },
          { name: 'write_file', input: { path: 'notes.txt', content: 'needs a person' } },
        ],
        { usage: USAGE },
      ),
      text('never reached'),
    ]);
    stack = await startUiStack('ui-operators', model);
    ({ browser, client } = stack);
    const taskQueue = stack.taskQueue;
    const handle = await startRun(
      client,
      {
        prompt: `${PROMPT_LINE}\nthen write the notes.`,
        model: MODEL,
        maxBudgetUsd: BUDGET_USD,
        workspace,
        permissions: { write_file: 'ask' },
      },
      { workflowId, taskQueue },
    );
    link = webUiLink('default', workflowId, handle.firstExecutionRunId);
    state = await waitForState(
      handle,
      (s) => s.pendingApprovals.length === 1 && s.activeTools.includes('bash'),
      UI_TIMEOUT_MS,
    );
  }, 240_000);

  afterAll(async () => {
    await stack?.close(link ? workflowId : undefined);
  });

  test('Current Details: the pending approval comes first and the cost is text, not math', async () => {
    const approval = state.pendingApprovals[0]!;
    expect(approval.name).toBe('write_file');
    const cost = costOf(MODEL, { ...USAGE, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 });
    expect(cost).toBeGreaterThan(0);

    const page = await browser.context.newPage();
    await page.goto(link);
    await page.getByTestId('user-metadata-tab').click();
    const current = await renderedUnder(page, 'Current Details', (t) => t.includes('awaiting approval'));
    // First thing shown: who waits for a decision, with the call's id to approve or deny.
    expect(current.startsWith(`awaiting approval: write_file (${approval.toolUseId})`)).toBe(true);
    expect(current).toContain(`awaiting_approval · iteration 1 / 200 · model ${MODEL}`);
    expect(current).toContain(`cost ${cost!.toFixed(4)} USD of ${BUDGET_USD} USD`);
    expect(current).toContain('running: bash');
    // Nothing rendered as math: no math nodes, no `$` or `\(` left over from a formula.
    const frame = markdownUnder(page, 'Current Details');
    expect(await frame.locator(MATH_NODES).count()).toBe(0);
    expect(current).not.toMatch(/[$]|\\\(/);

    // The summary is the prompt's first line as the user wrote it: nothing in it formats.
    const summary = markdownUnder(page, 'Summary');
    expect(await renderedUnder(page, 'Summary', (t) => t.includes('Build for'))).toBe(PROMPT_LINE);
    expect(await summary.locator(`${MATH_NODES}, em, strong, b, code, a, ul, li`).count()).toBe(0);
    const details = await renderedUnder(page, 'Details', (t) => t.includes('Limits'));
    expect(details).toContain(`budget ${BUDGET_USD} USD`);
    await save(page, 'web-ui-operators-current-details');
  }, 60_000);

  test('Pending Activities: the running bash call shows its tool, its call and the elapsed time', async () => {
    const page = await browser.context.newPage();
    await page.goto(link.replace(/\/history$/, '/pending-activities'));
    const body = page.locator('body');
    const shown = await eventually(
      () => body.innerText(),
      (t) => expect(t).toMatch(/elapsedSeconds/),
      UI_TIMEOUT_MS,
    );
    await save(page, 'web-ui-operators-pending-activities');
    expect(shown).toContain('runTool');
    expect(shown).toMatch(/"tool":\s*"bash"/);
    expect(shown).toMatch(/"call":\s*"bash: sleep 120 # slow-build"/);
    expect(shown).toMatch(/"elapsedSeconds":\s*\d+/);
  }, 60_000);
});

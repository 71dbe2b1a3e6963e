/**
 * A run cancelled from Temporal keeps its AgentRunResult (exit reason `cancelled`, usage, cost, the
 * text it had): the client's result helper, `result --json` (no worker up) and `run --json` give it.
 */
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { runResult } from '../../src/client';
import { CANCELLED_ERROR, MAX_CANCELLED_TEXT_BYTES, utf8Length } from '../../src/shared';
import { waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { durableAgent } from '../cli/cli-helpers';

const { suite, start } = useWorkflowSuite('cancelled-result');
const usage = { inputTokens: 1000, outputTokens: 200 };

test('cancelled during a tool: the result keeps usage, cost and the partial text, with no worker up', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'sleep 30' } }], { text: 'Let me wait a bit.', usage }),
    text('never'),
  ]);
  const handle = await withWorker(suite.env, { model }, async (tq) => {
    const h = await start(tq, { model: 'claude-sonnet-5-5' });
    await waitForState(h, (s) => s.activeTools.length === 1);
    await h.cancel();
    await h.result().catch(() => undefined);
    return h;
  });
  const expected = {
    exitReason: 'cancelled',
    finalText: 'Let me wait a bit.',
    iterations: 1,
    usage: { inputTokens: 1000, outputTokens: 200, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    model: 'claude-sonnet-5-5',
    error: { type: CANCELLED_ERROR },
  };
  const result = await runResult(suite.env.client.workflow.getHandle(handle.workflowId));
  expect(result).toMatchObject(expected);
  // $2/M in, $10/M out on claude-sonnet-5-5.
  expect(result.costUsd).toBeCloseTo((1000 * 2 + 200 * 10) / 1e6, 9);

  // The worker is gone: the CLI reads the closed run's result from the server alone.
  const cli = await durableAgent(['result', handle.workflowId, '--json']);
  expect(cli.code).toBe(1);
  expect(JSON.parse(cli.stdout)).toMatchObject(expected);
  expect(cli.stderr).toContain('cancelled');
}, 60_000);

test('a long partial text is cut to fit the memo, marked with an ellipsis', async () => {
  const long = 'é'.repeat(MAX_CANCELLED_TEXT_BYTES);
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'sleep 30' } }], { text: long })]);
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const h = await start(tq, {});
    await waitForState(h, (s) => s.activeTools.length === 1);
    await h.cancel();
    return runResult(suite.env.client.workflow.getHandle(h.workflowId));
  });
  expect(result.exitReason).toBe('cancelled');
  expect(result.finalText.endsWith('…')).toBe(true);
  expect(utf8Length(result.finalText)).toBeLessThanOrEqual(MAX_CANCELLED_TEXT_BYTES);
  expect(long.startsWith(result.finalText.slice(0, -1))).toBe(true);
}, 60_000);

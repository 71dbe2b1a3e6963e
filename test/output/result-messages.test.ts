/**
 * `result <id> --json --messages`: the result with the run's whole conversation, read from history
 * with no worker up, including the last turn's tool results that no model call sent (after `done`,
 * the budget, an interrupt).
 */
import { ScriptedModel, toolUse } from '../../src/models/scripted';
import { interruptSignal, type AgentRunResult, type Message } from '../../src/shared';
import { toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { durableAgent } from '../cli/cli-helpers';

const { suite, start } = useWorkflowSuite('result-messages');

async function resultWithMessages(id: string): Promise<AgentRunResult & { messages: Message[] }> {
  const cli = await durableAgent(['result', id, '--json', '--messages']);
  expect(cli.stdout).not.toBe('');
  return JSON.parse(cli.stdout) as AgentRunResult & { messages: Message[] };
}

test('after done: the done call and its result end the conversation', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'echo first-output' } }]),
    toolUse([{ name: 'done', input: { summary: 'All finished.' } }]),
  ]);
  const id = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { requireDoneTool: true });
    await handle.result();
    return handle.workflowId;
  });
  const result = await resultWithMessages(id);
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'All finished.' });
  expect(result.messages).toHaveLength(5);
  expect(result.messages[0]).toEqual({ role: 'user', content: 'work' });
  expect(JSON.stringify(toolResults(result.messages[2]))).toContain('first-output');
  const doneCall = (result.messages[3]!.content as { type: string; id?: string; name?: string }[]).find(
    (b) => b.type === 'tool_use',
  );
  expect(doneCall).toMatchObject({ name: 'done' });
  const last = toolResults(result.messages[4]);
  expect(last).toHaveLength(1);
  expect(last[0]!.tool_use_id).toBe(doneCall!.id);
  expect(last[0]!.is_error).not.toBe(true);
}, 60_000);

test('at the budget: the last tool results are there although no model call sent them', async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'echo costly-output' } }], {
      usage: { inputTokens: 1_000_000, outputTokens: 0 },
    }),
  ]);
  const id = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { model: 'claude-sonnet-5-5', maxBudgetUsd: 1 });
    await handle.result();
    return handle.workflowId;
  });
  const result = await resultWithMessages(id);
  expect(result.exitReason).toBe('max_budget');
  expect(result.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  expect(JSON.stringify(toolResults(result.messages[2]))).toContain('costly-output');
}, 60_000);

test('after an interrupt during a tool: the conversation up to the interrupted call, as the run kept it', async () => {
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'sleep 30' } }])]);
  const id = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.activeTools.length === 1);
    await handle.signal(interruptSignal, { reason: 'enough' });
    await handle.result();
    return handle.workflowId;
  });
  const result = await resultWithMessages(id);
  expect(result.exitReason).toBe('interrupted');
  expect(result.messages[1]).toMatchObject({ role: 'assistant' });
  // The interrupted call's result (an error saying it was cancelled) closes the conversation.
  expect(result.messages).toHaveLength(3);
  const [interrupted] = toolResults(result.messages[2]);
  expect(interrupted).toMatchObject({ is_error: true });
  expect(interrupted!.content).toContain('cancelled');
  // Whatever the run appended after the call is there too: the transcript has no more and no less.
  const transcript = await durableAgent(['transcript', id, '--json']);
  expect((JSON.parse(transcript.stdout) as { messages: Message[] }).messages).toEqual(result.messages);
}, 60_000);

test('--messages without --json is a usage error', async () => {
  const cli = await durableAgent(['result', 'any-id', '--messages']);
  expect(cli.code).toBe(2);
  expect(cli.stderr).toContain('result --messages needs --json');
});

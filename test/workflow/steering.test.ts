import { WorkflowUpdateFailedError } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared';
import {
  DONE_TOOL_NAME,
  WORKFLOW_TYPE,
  approveToolUpdate,
  denyToolUpdate,
  eventsQuery,
  interruptSignal,
  sendMessageUpdate,
} from '../../src/shared';
import type { agentWorkflow } from '../../src/workflows';
import { toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite } = useWorkflowSuite('steer');

let counter = 0;
function start(taskQueue: string, input: Partial<AgentRunInput>) {
  return suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
    taskQueue,
    workflowId: `steer-${Date.now()}-${++counter}`,
    args: [{ prompt: 'help me', model: 'scripted-test', workspace: suite.workspace, ...input }],
  });
}

const exists = (file: string) =>
  fs.stat(path.join(suite.workspace, file)).then(
    () => true,
    () => false,
  );

test('a session answers, waits for a message sent by update, answers again, and ends on interrupt', async () => {
  const model = new ScriptedModel([text('First answer.'), text('Second answer, about cats.')]);
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { session: true });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    const accepted = await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Now tell me about cats.' }] });
    expect(accepted).toMatchObject({ pendingMessages: 1, iteration: 1 });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 2);
    await handle.signal(interruptSignal, { reason: 'session over' });
    const res = await handle.result();
    const answers = (await handle.query(eventsQuery, { after: 0 })).events.filter((e) => e.kind === 'answer');
    expect(answers.map((e) => (e.kind === 'answer' ? e.text : ''))).toEqual([
      'First answer.',
      'Second answer, about cats.',
    ]);
    return res;
  });
  expect(result).toMatchObject({ exitReason: 'interrupted', finalText: 'Second answer, about cats.', iterations: 2 });
  expect(model.requests[1]?.messages).toEqual([
    { role: 'user', content: 'help me' },
    { role: 'assistant', content: [{ type: 'text', text: 'First answer.' }] },
    { role: 'user', content: 'Now tell me about cats.' },
  ]);
});

test('an idle session ends completed after its idle timeout', async () => {
  const model = new ScriptedModel([text('Only answer.')]);
  const result = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { session: true, sessionIdleTimeoutSeconds: 1 })).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Only answer.' });
});

test('a message sent while the run works is taken at the next iteration boundary, joined to the tool results', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const model = new ScriptedModel([
    async () => {
      await gate;
      return toolUse([{ id: 'toolu_g', name: 'glob', input: { pattern: '*' } }]);
    },
    text('Done, and noted your message.'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.status === 'running');
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Also count them.' }] });
    release();
    return handle.result();
  });
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Done, and noted your message.' });
  const last = model.requests[1]?.messages[2];
  expect(toolResults(last)).toHaveLength(1);
  expect(JSON.stringify(last)).toContain('Also count them.');
  expect(model.requests[1]?.messages).toHaveLength(3);
});

test('send is rejected by its validator once the run has ended, and for an empty message', async () => {
  const model = new ScriptedModel([text('bye')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { session: true, sessionIdleTimeoutSeconds: 30 });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    const empty = await handle
      .executeUpdate(sendMessageUpdate, { args: [{ message: '   ' }] })
      .catch((e: unknown) => e);
    expect(empty).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((empty as WorkflowUpdateFailedError).cause?.message)).toContain('non-empty');
    await handle.signal(interruptSignal, {});
    await handle.result();
  });
});

test('ask: a mutating tool waits for approval, runs once approved; status shows awaiting_approval', async () => {
  const model = new ScriptedModel([
    toolUse([
      { id: 'toolu_w', name: 'write_file', input: { path: 'approved.txt', content: 'yes' } },
      { id: 'toolu_r', name: 'glob', input: { pattern: '*' } },
    ]),
    text('written'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { approveMutating: true });
    const waiting = await waitForState(handle, (s) => s.status === 'awaiting_approval');
    expect(waiting.pendingApprovals).toMatchObject([{ toolUseId: 'toolu_w', name: 'write_file' }]);
    expect(await exists('approved.txt')).toBe(false);
    // Approving a call that is not waiting is refused by the validator, naming what is.
    const wrong = await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_r' }] }).catch((e) => e);
    expect(String((wrong as WorkflowUpdateFailedError).cause?.message)).toContain('waiting: toolu_w');
    expect(await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'toolu_w' }] })).toEqual({
      toolUseId: 'toolu_w',
      name: 'write_file',
      approved: true,
    });
    return handle.result();
  });
  expect(result.exitReason).toBe('completed');
  expect(await fs.readFile(path.join(suite.workspace, 'approved.txt'), 'utf8')).toBe('yes');
  expect(toolResults(model.requests[1]?.messages[2]).every((r) => !r.is_error)).toBe(true);
});

test('deny: the model sees an is_error result with the reason and the tool never runs', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_b', name: 'bash', input: { command: 'touch denied.txt' } }]),
    text('ok, I will not'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { permissions: { bash: 'ask' } });
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    await handle.executeUpdate(denyToolUpdate, { args: [{ toolUseId: 'toolu_b', reason: 'no shell today' }] });
    return handle.result();
  });
  expect(result.exitReason).toBe('completed');
  const [res] = toolResults(model.requests[1]?.messages[2]);
  expect(res?.is_error).toBe(true);
  expect(res?.content).toContain('denied this bash call: no shell today');
  expect(await exists('denied.txt')).toBe(false);
});

test('an approval that times out is denied; a deny policy refuses without asking', async () => {
  const model = new ScriptedModel([
    toolUse([
      { id: 'toolu_1', name: 'write_file', input: { path: 'late.txt', content: 'x' } },
      { id: 'toolu_2', name: 'bash', input: { command: 'touch never.txt' } },
    ]),
    text('understood'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { permissions: { write_file: 'ask', bash: 'deny' }, approvalTimeoutSeconds: 1 })).result(),
  );
  expect(result.exitReason).toBe('completed');
  const [late, never] = toolResults(model.requests[1]?.messages[2]);
  expect(late).toMatchObject({ tool_use_id: 'toolu_1', is_error: true });
  expect(late?.content).toContain('no decision within 1 s');
  expect(never).toMatchObject({ tool_use_id: 'toolu_2', is_error: true });
  expect(never?.content).toContain("does not allow tool 'bash'");
  expect(await exists('late.txt')).toBe(false);
  expect(await exists('never.txt')).toBe(false);
});

test('done-tool mode: a text reply gets a nudge, and the run ends only when done is called', async () => {
  const model = new ScriptedModel([
    text('I think I am finished.'),
    toolUse([{ id: 'toolu_d', name: DONE_TOOL_NAME, input: { summary: 'Checked everything: all good.' } }]),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) =>
    (await start(tq, { requireDoneTool: true })).result(),
  );
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Checked everything: all good.', iterations: 2 });
  expect(model.requests[0]?.tools.map((t) => t.name)).toContain(DONE_TOOL_NAME);
  expect(JSON.stringify(model.requests[1]?.messages[2])).toContain('without calling the `done` tool');
});

test('without done-tool mode the done tool is neither offered nor run', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'toolu_d', name: DONE_TOOL_NAME, input: { summary: 'sneaky' } }]),
    text('fine'),
  ]);
  const result = await withWorker(suite.env, { model }, async (tq) => (await start(tq, {})).result());
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'fine' });
  expect(model.requests[0]?.tools.map((t) => t.name)).not.toContain(DONE_TOOL_NAME);
  expect(toolResults(model.requests[1]?.messages[2])[0]?.is_error).toBe(true);
});

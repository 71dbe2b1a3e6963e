import { WorkflowUpdateFailedError } from '@temporalio/client';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { approveToolUpdate, denyToolUpdate, endSessionUpdate, eventsQuery, sendMessageUpdate } from '../../src/shared';
import { waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite, start } = useWorkflowSuite('approve');

const exists = (file: string) =>
  fs.stat(path.join(suite.workspace, file)).then(
    () => true,
    () => false,
  );

const rejection = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    return String((err as WorkflowUpdateFailedError).cause?.message);
  }
  throw new Error('the update was accepted');
};

test('a later call that reuses an approved call id waits for its own decision', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'reused', name: 'write_file', input: { path: 'first.txt', content: '1' } }]),
    toolUse([{ id: 'reused', name: 'write_file', input: { path: 'second.txt', content: '2' } }]),
    text('Done.'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { approveMutating: true });
    await waitForState(handle, (s) => s.pendingApprovals.length === 1 && s.iteration === 1);
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'reused' }] });
    // The second call has the same id: it must wait, not run on the first decision.
    const waiting = await waitForState(handle, (s) => s.iteration === 2 && s.pendingApprovals.length === 1);
    expect(waiting.status).toBe('awaiting_approval');
    expect(await exists('second.txt')).toBe(false);
    await handle.executeUpdate(denyToolUpdate, { args: [{ toolUseId: 'reused', reason: 'not this one' }] });
    expect((await handle.result()).exitReason).toBe('completed');
  });
  expect(await exists('first.txt')).toBe(true);
  expect(await exists('second.txt')).toBe(false);
});

test('two calls sharing an id in one turn: one decision cannot approve both; the duplicate is the model error', async () => {
  const model = new ScriptedModel([
    toolUse([
      { id: 'twin', name: 'write_file', input: { path: 'a.txt', content: 'a' } },
      { id: 'twin', name: 'write_file', input: { path: 'b.txt', content: 'b' } },
    ]),
    text('Done.'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { approveMutating: true });
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'twin' }] });
    expect((await handle.result()).exitReason).toBe('completed');
  });
  expect(await exists('a.txt')).toBe(true);
  expect(await exists('b.txt')).toBe(false);
  const results = JSON.stringify(model.requests[1]?.messages[2]);
  expect(results).toContain("another call in this turn has the same tool_use id 'twin'");
});

test('approval updates reject malformed input saying what is accepted', async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'w1', name: 'write_file', input: { path: 'x.txt', content: 'x' } }]),
    text('Done.'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { approveMutating: true });
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    const approve = (arg: unknown) => handle.executeUpdate(approveToolUpdate, { args: [arg as never] });
    expect(await rejection(approve(null))).toContain('expected an object {"toolUseId": string');
    expect(await rejection(approve({ toolUseID: 'w1' }))).toContain("unknown field(s) 'toolUseID'");
    expect(await rejection(approve({ toolUseId: 42 }))).toContain('toolUseId must be a non-empty string');
    expect(await rejection(approve({ toolUseId: 'nope' }))).toContain('waiting: w1');
    await approve({ toolUseId: 'w1' });
    expect((await handle.result()).exitReason).toBe('completed');
  });
});

test('endSession ends a waiting session completed with its last answer', async () => {
  const model = new ScriptedModel([text('First.'), text('Second.')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { session: true });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'more' }] });
    await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === 2);
    expect(await handle.executeUpdate(endSessionUpdate, { args: [{}] })).toEqual({ status: 'completed' });
    const result = await handle.result();
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Second.', iterations: 2 });
    expect(result.error).toBeUndefined();
    const last = (await handle.query(eventsQuery, {})).events.pop();
    expect(last).toMatchObject({ kind: 'run_finished', exitReason: 'completed' });
  });
});

test('endSession is refused for a run that is not a session, and for one that has ended', async () => {
  const model = new ScriptedModel([toolUse([{ name: 'bash', input: { command: 'sleep 2' } }]), text('Done.')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, {});
    await waitForState(handle, (s) => s.activeTools.length === 1);
    const end = () => handle.executeUpdate(endSessionUpdate, { args: [{}] });
    expect(await rejection(end())).toContain('not a session');
    await handle.result();
    // A closed workflow takes no updates at all: Temporal itself refuses.
    await expect(end()).rejects.toThrow(/completed|closed|not found/i);
  });
});

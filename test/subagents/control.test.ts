import { ApplicationFailure } from '@temporalio/common';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, delayed, fail, text, toolUse } from '../../src/models/scripted';
import { approveToolUpdate, eventsQuery, interruptSignal } from '../../src/shared';
import { eventually, toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('subagent-control');

const childStatus = async (workflowId: string) =>
  (await suite.env.client.workflow.getHandle(workflowId).describe()).status.name;

test('interrupting the parent cancels a subagent in the middle of its model call within seconds', async () => {
  const parent = new ScriptedModel([toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: think long' } }])]);
  const child = new ScriptedModel([delayed(120_000, text('never'))]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['task'] });
    const childId = `${handle.workflowId}.task-1`;
    await waitForState(handle, (s) => (s.subagents?.length ?? 0) === 1);
    // The child is inside its model call (120 s long unless cancelled).
    await eventually(
      async () =>
        (
          await suite.env.client.workflow
            .getHandle(childId)
            .query(eventsQuery, { after: 0 })
            .catch(() => undefined)
        )?.events ?? [],
      (events) => expect(events.map((e) => e.kind)).toContain('model_call_started'),
    );
    const asked = Date.now();
    await handle.signal(interruptSignal, { reason: 'stop the tree' });
    const result = await handle.result();
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(result.exitReason).toBe('interrupted');
    expect(await childStatus(childId)).toBe('CANCELLED');
    // The child's cancelled model call was recorded as ended before the child closed.
    const history = await suite.env.client.workflow.getHandle(childId).fetchHistory();
    expect((history.events ?? []).some((e) => e.activityTaskCanceledEventAttributes)).toBe(true);
  });
  expect(child.requests).toHaveLength(1);
});

test('a Temporal cancel of the parent cancels its running subagent, which records its end', async () => {
  const parent = new ScriptedModel([toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: wait' } }])]);
  const child = new ScriptedModel([delayed(120_000, text('never'))]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['task'] });
    const childId = `${handle.workflowId}.task-1`;
    await eventually(
      async () =>
        (
          await suite.env.client.workflow
            .getHandle(childId)
            .query(eventsQuery, { after: 0 })
            .catch(() => undefined)
        )?.events ?? [],
      (events) => expect(events.map((e) => e.kind)).toContain('model_call_started'),
    );
    await handle.cancel();
    await expect(handle.result()).rejects.toThrow();
    expect((await handle.describe()).status.name).toBe('CANCELLED');
    expect(await childStatus(childId)).toBe('CANCELLED');
    const { events } = await handle.query(eventsQuery, { after: 0 });
    expect(events.find((e) => e.kind === 'subagent_finished')).toMatchObject({
      workflowId: childId,
      exitReason: 'cancelled',
    });
  });
});

test('a subagent that fails is an error result for its parent, which goes on', async () => {
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: fail' } }]),
    text('Recovered.'),
  ]);
  const child = new ScriptedModel([
    fail(
      ApplicationFailure.create({
        type: 'ModelError.BadRequest',
        message: 'bad request from provider',
        nonRetryable: true,
      }),
    ),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['task'] });
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    expect(result.finalText).toBe('Recovered.');
    const [block] = toolResults(parent.requests[1]!.messages[2]);
    expect(block!.is_error).toBe(true);
    expect(block!.content).toContain(`subagent ${handle.workflowId}.task-1 ended 'failed'`);
    expect(block!.content).toContain('bad request from provider');
    expect(await childStatus(`${handle.workflowId}.task-1`)).toBe('FAILED');
  });
});

test("a subagent's pending approval shows in the parent's state and the parent's approveTool decides it", async () => {
  const parent = new ScriptedModel([
    toolUse([{ id: 'p1', name: 'task', input: { prompt: 'child: write the file', description: 'write' } }]),
    text('Parent done.'),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'c-write', name: 'write_file', input: { path: 'from-child.txt', content: 'hi' } }]),
    text('Child wrote it.'),
  ]);
  await withWorker(suite.env, { model: new RoutedModel({ work: parent, child }) }, async (tq) => {
    const handle = await start(tq, { tools: ['write_file', 'task'], approveMutating: true });
    const waiting = await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    expect(waiting.status).toBe('awaiting_approval');
    expect(waiting.pendingApprovals[0]).toMatchObject({
      toolUseId: 'c-write',
      name: 'write_file',
      subagent: { workflowId: `${handle.workflowId}.task-1` },
    });
    await expect(fs.stat(path.join(suite.workspace, 'from-child.txt'))).rejects.toThrow();
    const decided = await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'c-write' }] });
    expect(decided).toEqual({ toolUseId: 'c-write', name: 'write_file', approved: true });
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    expect(toolResults(parent.requests[1]!.messages[2])[0]!.content).toBe('Child wrote it.');
  });
  expect(await fs.readFile(path.join(suite.workspace, 'from-child.txt'), 'utf8')).toBe('hi');
});

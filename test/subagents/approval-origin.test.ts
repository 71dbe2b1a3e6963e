import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { approveToolUpdate, eventsQuery, stateQuery, statusSearchAttribute } from '../../src/shared';
import { subagentReportSignal } from '../../src/shared/subagents';
import { eventually, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('approval-origin');

/** A parent whose subagent waits for approval to write `real.txt`. */
function models() {
  const parent = new ScriptedModel([
    toolUse([{ id: 'p1', name: 'task', input: { prompt: 'child: write', description: 'write' } }]),
    text('Parent done.'),
  ]);
  const child = new ScriptedModel([
    toolUse([{ id: 'c-write', name: 'write_file', input: { path: 'real.txt', content: 'the real write' } }]),
    text('Child wrote it.'),
  ]);
  return new RoutedModel({ work: parent, child });
}

const zero = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };

test("a signal posing as the subagent's report neither rewrites nor hides the approval the parent shows", async () => {
  await withWorker(suite.env, { model: models() }, async (tq) => {
    const handle = await start(tq, { tools: ['write_file', 'task'], approveMutating: true });
    const childId = `${handle.workflowId}.task-1`;
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    const { runId: childRunId } = await suite.env.client.workflow.getHandle(childId).describe();
    const forged = (extra: object) => ({
      workflowId: childId,
      usage: zero,
      costUsd: 0,
      pendingApprovals: [
        { toolUseId: 'c-write', name: 'write_file', input: { path: 'harmless.txt', content: 'ok' }, deadline: 0 },
      ],
      ...extra,
    });
    // No run id, a made-up one, and one that hides the call: none is the child's report.
    await handle.signal(subagentReportSignal, forged({}));
    await handle.signal(subagentReportSignal, forged({ runId: 'not-the-child' }));
    await handle.signal(subagentReportSignal, { ...forged({}), pendingApprovals: [] });
    // The run id alone is not enough from another workflow id.
    await handle.signal(subagentReportSignal, forged({ workflowId: `${handle.workflowId}.task-9`, runId: childRunId }));
    await eventually(
      () => handle.query(eventsQuery, { after: 0 }),
      (page) =>
        expect(
          page.events.filter((e) => e.kind === 'notice' && e.message.includes('ignored a subagent report')),
        ).toHaveLength(4),
    );
    const state = await handle.query(stateQuery);
    expect(state.status).toBe('awaiting_approval');
    expect(state.pendingApprovals).toHaveLength(1);
    expect(state.pendingApprovals[0]).toMatchObject({
      toolUseId: 'c-write',
      input: { path: 'real.txt', content: 'the real write' },
      subagent: { workflowId: childId },
    });
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'c-write' }] });
    expect((await handle.result()).exitReason).toBe('completed');
  });
  expect(await fs.readFile(path.join(suite.workspace, 'real.txt'), 'utf8')).toBe('the real write');
});

test('a decision sent straight to the subagent is recorded on the parent, as one taken on the parent is', async () => {
  await withWorker(suite.env, { model: models() }, async (tq) => {
    const handle = await start(tq, { tools: ['write_file', 'task'], approveMutating: true });
    const childId = `${handle.workflowId}.task-1`;
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    await suite.env.client.workflow
      .getHandle(childId)
      .executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'c-write' }] });
    expect((await handle.result()).exitReason).toBe('completed');
    const { events } = await handle.query(eventsQuery, { after: 0 });
    const resolved = events.filter((e) => e.kind === 'approval_resolved');
    expect(resolved).toEqual([
      expect.objectContaining({
        toolUseId: 'c-write',
        name: 'write_file',
        approved: true,
        subagent: { workflowId: childId },
      }),
    ]);
  });
});

test('a decision taken on the parent is recorded there once', async () => {
  await withWorker(suite.env, { model: models() }, async (tq) => {
    const handle = await start(tq, { tools: ['write_file', 'task'], approveMutating: true });
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'c-write' }] });
    expect((await handle.result()).exitReason).toBe('completed');
    const { events } = await handle.query(eventsQuery, { after: 0 });
    expect(events.filter((e) => e.kind === 'approval_resolved')).toEqual([
      expect.objectContaining({
        toolUseId: 'c-write',
        approved: true,
        subagent: { workflowId: `${handle.workflowId}.task-1` },
      }),
    ]);
  });
});

test("a parent waiting on its subagent's approval is found by its status search attribute, and its details name the subagent", async () => {
  await withWorker(suite.env, { model: models() }, async (tq) => {
    const handle = await start(tq, { tools: ['write_file', 'task'], approveMutating: true });
    const childId = `${handle.workflowId}.task-1`;
    await waitForState(handle, (s) => s.pendingApprovals.length === 1);
    // What `list --status awaiting_approval` asks the server.
    const query = `WorkflowId = '${handle.workflowId}' AND ${statusSearchAttribute.name} = 'awaiting_approval'`;
    await eventually(
      async () => {
        const found: string[] = [];
        for await (const w of suite.env.client.workflow.list({ query })) found.push(w.workflowId);
        return found;
      },
      (found) => expect(found).toEqual([handle.workflowId]),
    );
    const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
    expect(metadata.currentDetails).toContain(`write_file (c-write) in subagent ${childId}`);
    await handle.executeUpdate(approveToolUpdate, { args: [{ toolUseId: 'c-write' }] });
    expect((await handle.result()).exitReason).toBe('completed');
    expect((await handle.describe()).searchAttributes[statusSearchAttribute.name]).toEqual(['completed']);
  });
});

import { randomUUID } from 'node:crypto';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { endSessionUpdate, type AgentRunInput } from '../../src/shared';
import { runResult, waitForState } from '../support/run-helpers';
import { tempWorkspace, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/**
 * Any client may signal a run, and the server records every signal in history whatever the workflow
 * does with it. A session that waits for input (or a call that waits for approval) hands over to a
 * new execution when Temporal suggests it, so a client that keeps sending 1.9 MB signals (each under
 * the 2 MB payload limit; 57 MB in all, past the 50 MB history limit) does not get the run terminated.
 * (Found by a hostile-client review: before, the waiting session was terminated at 50 MB.)
 *
 * The client here sends a signal every 300 ms. A flood faster than the worker can take in (back to
 * back, measured: 30 signals in about 3 s) can still reach the limit before the run can hand over:
 * Temporal records signals as they arrive. docs/limits.md says so.
 */

const { suite } = useWorkflowSuite('flood');

test('a waiting session survives a client that keeps sending 1.9 MB signals (57 MB in all) and still ends cleanly', async () => {
  const workflowId = `repro-flood-${randomUUID().slice(0, 8)}`;
  const model = new ScriptedModel([text('First answer.')]);
  const workspace = await tempWorkspace('flood');
  const junk = 'x'.repeat(1_900_000);
  await withWorker(suite.env, { model }, async (taskQueue) => {
    const input: AgentRunInput = { prompt: 'answer, then wait', model: 'scripted-flood', session: true, workspace };
    const handle = await suite.env.client.workflow.start('agentWorkflow', { args: [input], taskQueue, workflowId });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    for (let i = 0; i < 30; i++) {
      // Sent by workflow id, as any client would: after a continue-as-new it reaches the newest execution.
      // A refused signal means the run is gone already: the describe below says how it ended.
      const sent = await suite.env.client.workflow
        .getHandle(workflowId)
        .signal('junk', junk)
        .then(
          () => true,
          () => false,
        );
      if (!sent) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    const latest = suite.env.client.workflow.getHandle(workflowId);
    const description = await latest.describe();
    expect(description.status.name).toBe('RUNNING');
    await waitForState(latest, (s) => s.status === 'awaiting_input', 30_000);
    await latest.executeUpdate(endSessionUpdate, { args: [{}] });
    expect(await runResult(latest)).toMatchObject({ exitReason: 'completed', finalText: 'First answer.' });
  });
}, 120_000);

test('a call waiting for approval under the same flood: the run hands over instead of dying, and the model learns why', async () => {
  const workflowId = `flood-approval-${randomUUID().slice(0, 8)}`;
  const model = new ScriptedModel([
    toolUse([{ id: 'w1', name: 'write_file', input: { path: 'a.txt', content: 'a' } }]),
    text('Understood.'),
  ]);
  const workspace = await tempWorkspace('flood-approval');
  const junk = 'x'.repeat(1_900_000);
  await withWorker(suite.env, { model }, async (taskQueue) => {
    const input: AgentRunInput = { prompt: 'write it', model: 'scripted-flood', approveMutating: true, workspace };
    const handle = await suite.env.client.workflow.start('agentWorkflow', { args: [input], taskQueue, workflowId });
    await waitForState(handle, (s) => s.status === 'awaiting_approval');
    for (let i = 0; i < 30; i++) {
      const latest = suite.env.client.workflow.getHandle(workflowId);
      if ((await latest.describe()).status.name !== 'RUNNING') break;
      await latest.signal('junk', junk).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 300));
    }
    const result = await runResult(suite.env.client.workflow.getHandle(workflowId));
    expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Understood.' });
  });
  expect(JSON.stringify(model.requests[1]?.messages)).toContain('the run had to continue as new before anyone decided');
}, 120_000);

import { randomUUID } from 'node:crypto';
import { ScriptedModel, text } from '../../src/models/scripted';
import { endSessionUpdate, type AgentRunInput } from '../../src/shared';
import { runResult, waitForState } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';

/**
 * REPRO (issue 10, "no run can be killed by a size limit"): any client may signal a run, and the
 * server records every signal in history whatever the workflow does with it. A session that waits
 * for input never looks at `continueAsNewSuggested`, so 30 signals of 1.9 MB (each under the 2 MB
 * payload limit) push its history past the server's 50 MB limit within seconds and the server
 * terminates it ("Workflow history size exceeds limit."). Fix (src/workflows/turn.ts): the session
 * wait (and the approval wait) also wakes when `workflowInfo().continueAsNewSuggested` and the loop
 * hands over to a new execution; the ignored-signal notice needs no payload.
 */

let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

test('a waiting session survives 30 signals of 1.9 MB from a hostile client and still ends cleanly', async () => {
  const workflowId = `repro-flood-${randomUUID().slice(0, 8)}`;
  const model = new ScriptedModel([text('First answer.')]);
  const workspace = await tempWorkspace('flood');
  const junk = 'x'.repeat(1_900_000);
  await withWorker(env, { model }, async (taskQueue) => {
    const input: AgentRunInput = { prompt: 'answer, then wait', model: 'scripted-flood', session: true, workspace };
    const handle = await env.client.workflow.start('agentWorkflow', { args: [input], taskQueue, workflowId });
    await waitForState(handle, (s) => s.status === 'awaiting_input');
    for (let i = 0; i < 30; i++) {
      // Sent by workflow id, as any client would: after a continue-as-new it reaches the newest execution.
      // A refused signal means the run is gone already: the describe below says how it ended.
      const sent = await env.client.workflow
        .getHandle(workflowId)
        .signal('junk', junk)
        .then(
          () => true,
          () => false,
        );
      if (!sent) break;
    }
    const latest = env.client.workflow.getHandle(workflowId);
    const description = await latest.describe();
    // Today: TERMINATED, "Workflow history size exceeds limit."
    expect(description.status.name).toBe('RUNNING');
    await waitForState(latest, (s) => s.status === 'awaiting_input', 30_000);
    await latest.executeUpdate(endSessionUpdate, { args: [{}] });
    expect(await runResult(latest)).toMatchObject({ exitReason: 'completed', finalText: 'First answer.' });
  });
}, 120_000);

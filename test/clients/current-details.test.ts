import { randomUUID } from 'node:crypto';
import { ScriptedModel, text } from '../../src/models/scripted';
import { connectTestEnv, tempWorkspace, withWorker, type TestEnv } from '../support/temporal';
import {
  failedWorkflowTasks,
  temporal,
  temporalJson,
  waitForStatus,
  type WorkflowMetadata,
} from './temporal-cli-helpers';

/**
 * Current Details as an outside client reads it (`temporal workflow metadata`, what the Web UI
 * shows): the context line said "_1 more" where it meant "+1 more" (markdown-safe characters only,
 * and `+` was not among them).
 */
let env: TestEnv;
beforeAll(async () => {
  env = await connectTestEnv();
});
afterAll(async () => {
  await env?.close();
});

test('the context line of Current Details reads "+N more" for the sources it does not list', async () => {
  const workspace = await tempWorkspace('details');
  const workflowId = `details-${randomUUID().slice(0, 8)}`;
  await withWorker(env, { model: new ScriptedModel([text('hello')]) }, async (taskQueue) => {
    const input = JSON.stringify({ prompt: 'hi', workspace, session: true });
    const args = ['workflow', 'start', '--type', 'agentWorkflow', '--task-queue', taskQueue, '-w', workflowId];
    expect((await temporal([...args, '--input', input])).code).toBe(0);
    await waitForStatus(workflowId, (s) => s.status === 'awaiting_input');
    const answer = await temporalJson<{ queryResult: WorkflowMetadata[] }>(['workflow', 'metadata', '-w', workflowId]);
    const details = answer.queryResult[0]?.currentDetails ?? '';
    const line = details.split('\n').find((l) => l.startsWith('system prompt built from: '));
    expect({ details, line }).toEqual({ details, line: expect.any(String) });
    // Identity, environment, memory and tools at least: more than the three the line lists.
    expect(line).toMatch(/^system prompt built from: [^+]*, \+\d+ more · [\d.]+ KiB$/);
    expect(line).not.toMatch(/_\d+ more/);
    expect((await temporal(['workflow', 'signal', '-w', workflowId, '--name', 'interrupt'])).code).toBe(0);
    expect(await failedWorkflowTasks(workflowId)).toEqual([]);
  });
}, 60_000);

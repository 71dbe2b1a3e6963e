import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery, type RunEvent } from '../../src/shared';
import { eventually, toolResults, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from './routed-model';

const { suite, start } = useWorkflowSuite('subagents');

const eventsOf = async (handle: {
  query: (q: typeof eventsQuery, a: { after: number }) => Promise<{ events: RunEvent[] }>;
}) => (await handle.query(eventsQuery, { after: 0 })).events;

test('two task calls in one turn run as parallel child workflows and their answers are the tool results', async () => {
  const spans: Record<string, { from: number; to: number }> = {};
  const slowly = (answer: string) => async () => {
    const from = Date.now();
    await new Promise((r) => setTimeout(r, 1_500));
    spans[answer] = { from, to: Date.now() };
    return text(answer, { usage: { inputTokens: 100, outputTokens: 10 } });
  };
  const parent = new ScriptedModel([
    toolUse(
      [
        { id: 'ta', name: 'task', input: { prompt: 'child A: count files', description: 'count files' } },
        { id: 'tb', name: 'task', input: { prompt: 'child B: list names' } },
      ],
      { usage: { inputTokens: 1_000, outputTokens: 50 } },
    ),
    text('Both done.', { usage: { inputTokens: 1_200, outputTokens: 5 } }),
  ]);
  const a = new ScriptedModel([slowly('A says 3')]);
  const b = new ScriptedModel([slowly('B says x, y')]);
  const model = new RoutedModel({ work: parent, 'child A': a, 'child B': b });
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { tools: ['read_file', 'task'] });
    const running = await waitForState(handle, (s) => (s.subagents?.length ?? 0) === 2);
    expect(running.subagents!.map((s) => s.workflowId).sort()).toEqual([
      `${handle.workflowId}.task-1`,
      `${handle.workflowId}.task-2`,
    ]);
    const result = await handle.result();
    expect(result.exitReason).toBe('completed');
    // The children's model calls (1.5 s each) overlapped: they ran in parallel.
    const [first, second] = [spans['A says 3']!, spans['B says x, y']!];
    expect(first.from < second.to && second.from < first.to).toBe(true);
    // The tree's usage: the parent's two calls and one call per child.
    expect(result.usage.inputTokens).toBe(1_000 + 1_200 + 100 + 100);
    expect(result.usage.outputTokens).toBe(50 + 5 + 10 + 10);
    const results = toolResults(parent.requests[1]!.messages[2]);
    expect(results.map((r) => [r.tool_use_id, r.content, r.is_error === true])).toEqual([
      ['ta', 'A says 3', false],
      ['tb', 'B says x, y', false],
    ]);
    const events = await eventsOf(handle);
    const startedEvents = events.filter((e) => e.kind === 'subagent_started');
    expect(startedEvents).toEqual([
      expect.objectContaining({
        toolUseId: 'ta',
        workflowId: `${handle.workflowId}.task-1`,
        description: 'count files',
        depth: 1,
      }),
      expect.objectContaining({ toolUseId: 'tb', workflowId: `${handle.workflowId}.task-2`, depth: 1 }),
    ]);
    expect(
      events.filter((e) => e.kind === 'subagent_finished').map((e) => (e as { exitReason: string }).exitReason),
    ).toEqual(['completed', 'completed']);
    // Temporal knows them as this run's children, with a summary naming the agent and the task.
    await eventually(
      async () => {
        const ids: string[] = [];
        for await (const w of suite.env.client.workflow.list({ query: `ParentWorkflowId='${handle.workflowId}'` })) {
          ids.push(w.workflowId);
        }
        return ids.sort();
      },
      (ids) => expect(ids).toEqual([`${handle.workflowId}.task-1`, `${handle.workflowId}.task-2`]),
    );
    const described = await suite.env.client.workflow.getHandle(`${handle.workflowId}.task-1`).describe();
    expect(await described.staticSummary()).toBe('subagent general: count files');
    // A child is offered no more than its parent: read_file and (below the depth limit) task.
    expect(a.requests[0]!.tools?.map((t) => t.name).sort()).toEqual(['read_file', 'task']);
  });
});

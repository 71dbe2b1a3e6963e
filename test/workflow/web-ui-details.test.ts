import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { denyToolUpdate } from '../../src/shared';
import { runDetails } from '../../src/client';
import { runResult, waitForState } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

const { suite, start } = useWorkflowSuite('ui-details');

test("the approval wait is a timer named for what it waits for, not a bare '1 (15m)'", async () => {
  const model = new ScriptedModel([
    toolUse([{ id: 'c-write', name: 'write_file', input: { path: 'a.txt', content: 'x' } }]),
    text('Done.'),
  ]);
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { approveMutating: true });
    await waitForState(handle, (s) => s.status === 'awaiting_approval');
    await handle.executeUpdate(denyToolUpdate, { args: [{ toolUseId: 'c-write' }] });
    expect((await runResult(handle)).exitReason).toBe('completed');
    const history = await handle.fetchHistory();
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    expect(timers).toHaveLength(1);
    const summary = timers[0]!.userMetadata?.summary?.data;
    expect(summary ? JSON.parse(Buffer.from(summary).toString('utf8')) : undefined).toBe(
      'approval timeout: write_file (c-write)',
    );
  });
});

test("a run's static details list task among its tools when it offers it, and say who adds the rest", () => {
  expect(runDetails({ prompt: 'p', maxSubagentDepth: 1 })).toMatch(/\*\*Tools:\*\* [^\n]*\btask\b/);
  expect(runDetails({ prompt: 'p', tools: ['read_file', 'task'] })).toContain('**Tools:** read_file, task');
  expect(runDetails({ prompt: 'p', tools: ['lookup_price'] })).toContain('**Tools:** lookup_price');
  expect(runDetails({ prompt: 'p' })).toContain("the worker's custom and MCP tools");
  expect(runDetails({ prompt: 'p' })).not.toMatch(/\btask\b/);
});

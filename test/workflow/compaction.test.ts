import { ScriptedModel, text, toolUse, type ScriptStep } from '../../src/models/scripted';
import type { ModelRequest } from '../../src/shared';
import { runResult } from '../support/run-helpers';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';

/** Compaction by tokens: once per need, and never in a loop that makes no progress. */
const { suite, start } = useWorkflowSuite('compact');

const isSummary = (r: ModelRequest | undefined) => r?.toolChoice?.type === 'none';

/** Answers closing calls with a summary; plays `turns` (each with the prompt size it reports) otherwise. */
function model(turns: Array<{ inputTokens: number; last?: boolean }>): ScriptedModel {
  let turn = 0;
  const step = (request: ModelRequest) => {
    if (isSummary(request)) return text('Summary of the work so far.', { usage: { inputTokens: 9_000 } });
    const t = turns[Math.min(turn++, turns.length - 1)]!;
    return t.last
      ? text('Done.', { usage: { inputTokens: t.inputTokens } })
      : toolUse([{ name: 'glob', input: { pattern: '*' } }], { usage: { inputTokens: t.inputTokens } });
  };
  return new ScriptedModel(Array.from({ length: 40 }, (): ScriptStep => step));
}

test('a conversation that fills the window is compacted once, not again after every call', async () => {
  const scripted = model([
    { inputTokens: 9_000 },
    { inputTokens: 1_000 },
    { inputTokens: 1_200 },
    { inputTokens: 1_400, last: true },
  ]);
  const result = await withWorker(suite.env, { model: scripted }, async (tq) =>
    runResult(await start(tq, { contextWindowTokens: 10_000 })),
  );
  expect(result).toMatchObject({ exitReason: 'completed', finalText: 'Done.', iterations: 4 });
  expect(scripted.requests.filter(isSummary)).toHaveLength(1);
});

test('a window too small even for the compacted conversation ends the run failed, saying so, instead of looping', async () => {
  const scripted = model([{ inputTokens: 9_500 }]);
  const result = await withWorker(suite.env, { model: scripted }, async (tq) =>
    runResult(await start(tq, { contextWindowTokens: 10_000, maxIterations: 50 })),
  );
  expect(result.exitReason).toBe('failed');
  expect(result.error?.type).toBe('DurableAgent.ContextWindowExceeded');
  expect(result.error?.message).toContain('even right after compaction');
  expect(scripted.requests.length).toBeLessThanOrEqual(4);
});
